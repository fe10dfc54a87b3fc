/** Name pools for the seeded users (ASCII only, so usernames and e-mails stay simple). */
export const FIRST_NAMES = [
	'Ana', 'Bruno', 'Carla', 'Diego', 'Elena', 'Felipe', 'Gabriela', 'Hugo', 'Ines', 'Javier',
	'Karen', 'Luis', 'Marta', 'Nicolas', 'Olga', 'Pablo', 'Rosa', 'Sergio', 'Tania', 'Ulises',
	'Valeria', 'Walter', 'Ximena', 'Yago', 'Zoe', 'Andres', 'Beatriz', 'Camilo', 'Daniela', 'Emilio',
];

export const LAST_NAMES = [
	'Garcia', 'Martinez', 'Lopez', 'Gonzalez', 'Rodriguez', 'Fernandez', 'Perez', 'Sanchez', 'Ramirez', 'Torres',
	'Flores', 'Rivera', 'Gomez', 'Diaz', 'Cruz', 'Morales', 'Reyes', 'Ortiz', 'Gutierrez', 'Chavez',
	'Ramos', 'Vargas', 'Castillo', 'Jimenez', 'Moreno', 'Romero', 'Herrera', 'Medina', 'Aguilar', 'Vega',
];
