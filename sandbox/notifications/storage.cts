import type { SandboxSettings } from '../types.cts';
import type { SendInput } from './validation.cts';

/**
 * What the API stores of a valid send request. By default exactly what was sent (the record table:
 * title and body "As sent"); the switches model an API that trims or cuts text on storage, with no
 * error, so the list and the detail show text that differs from the request.
 */
export function storedInput(input: SendInput, settings: SandboxSettings): SendInput {
	const { storageTrimsText, storedTitleMaxLength, storedBodyMaxLength } = settings;
	const store = (text: string, maxLength: number | null) =>
		cut(storageTrimsText ? text.trim() : text, maxLength);
	return {
		...input,
		title: store(input.title, storedTitleMaxLength),
		body: store(input.body, storedBodyMaxLength),
	};
}

/** The first maxLength characters, counted in code points (as a database column counts them), so no emoji is split. */
function cut(text: string, maxLength: number | null): string {
	if (maxLength === null) return text;
	const characters = Array.from(text);
	return characters.length <= maxLength ? text : characters.slice(0, maxLength).join('');
}
