import type { SandboxSettings } from '../types.cts';
import { cutText, storedUserIds } from './storedForms.cts';
import type { SendInput } from './validation.cts';

/**
 * What the API stores of a valid send request. By default exactly what was sent (the record table:
 * title and body "As sent"); the switches model an API that trims or cuts text on storage, with no
 * error, so the list and the detail show text that differs from the request.
 */
export function storedInput(input: SendInput, settings: SandboxSettings): SendInput {
	const { storageTrimsText, storedTitleMaxLength, storedBodyMaxLength } = settings;
	const store = (text: string, maxLength: number | null) =>
		cutText(storageTrimsText ? text.trim() : text, maxLength, settings.storedTextCutsBy);
	return {
		...input,
		title: store(input.title, storedTitleMaxLength),
		body: store(input.body, storedBodyMaxLength),
		target_user_ids: storedUserIds(input.target_user_ids, settings),
	};
}
