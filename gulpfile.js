// Copies what tsc does not: node and credential icons (SVG) and codex files (*.node.json) into dist/.
const { src, dest } = require('gulp');

function copyAssets() {
	return src(['nodes/**/*.{svg,png,json}', 'credentials/**/*.{svg,png}', 'icons/**/*.{svg,png}'], {
		base: '.',
		encoding: false,
	}).pipe(dest('dist'));
}

exports['build:assets'] = copyAssets;
