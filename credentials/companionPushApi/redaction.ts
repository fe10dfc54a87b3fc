/**
 * Secrets out of what is shown: the credential's secrets and tokens, wherever an answer echoed them
 * (an error body quoting the Authorization header, a success body repeating it, a redirect whose
 * address carries a token), and addresses cut to their origin and path. Used by the transport for
 * every answer and by the credential for its token renewal; it imports nothing, so both can.
 */

const REDACTED = '[redacted]';
/** Deeper than this, a body is not shown: an error body is read only near its top, and walking an
 * unbounded depth would overflow the stack (JSON.stringify throws on it). */
const MAX_DEPTH = 32;
const TOO_DEEP = '[nested too deep to show]';

/** A secret inside JSON text the way PHP's json_encode writes it: `/` as `\/`, and every character
 * beyond ASCII as a `\u` escape. */
function phpJsonForm(secret: string): string {
	return JSON.stringify(secret)
		.slice(1, -1)
		.replace(/\//g, '\\/')
		.replace(
			/[\u0080-\uffff]/g,
			(char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
		);
}

/** A form as a pattern: its characters as they are, but the hex digits of a `%XX` or `\uXXXX` escape
 * in either case (encoders differ: `%2B` and `%2b` both stand for `+`). */
function formPattern(form: string): string {
	return form.replace(/%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|[\s\S]/g, (token) => {
		if (token.length === 1) return token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
		const [prefix, digits] = token.startsWith('%')
			? ['%', token.slice(1)]
			: ['\\\\u', token.slice(2)];
		const caseless = [...digits].map((digit) =>
			/[0-9]/.test(digit) ? digit : `[${digit.toLowerCase()}${digit.toUpperCase()}]`,
		);
		return prefix + caseless.join('');
	});
}

/** The forms a secret takes when echoed: as is, inside JSON text (a quote or backslash escaped; a
 * slash escaped too, as PHP writes it), and inside an address or a form (URL-encoded, escapes in
 * either case). One pattern, longest form first, so a secret holding another is hidden whole. */
function echoedForms(secrets: unknown[]): RegExp | undefined {
	const forms = new Set<string>();
	for (const secret of secrets) {
		// Every secret, however short: a short secret is still a secret (an empty one is nothing).
		if (typeof secret !== 'string' || secret === '') continue;
		forms.add(secret);
		forms.add(JSON.stringify(secret).slice(1, -1));
		forms.add(phpJsonForm(secret));
		forms.add(encodeURIComponent(secret));
		forms.add(new URLSearchParams({ s: secret }).toString().slice(2));
	}
	if (forms.size === 0) return undefined;
	const longestFirst = [...forms].sort((a, b) => b.length - a.length);
	return new RegExp(longestFirst.map(formPattern).join('|'), 'g');
}

/** The value with every echoed form of the secrets replaced; the same value (not a copy) when it
 * holds none, so reading a page of 1000 users copies nothing. Never throws. */
function redactValue(value: unknown, forms: RegExp, depth: number): unknown {
	if (typeof value === 'string') return value.replace(forms, REDACTED);
	if (typeof value === 'number' || typeof value === 'bigint') {
		const text = String(value);
		return text.replace(forms, REDACTED) === text ? value : REDACTED;
	}
	if (typeof value !== 'object' || value === null) return value;
	if (depth >= MAX_DEPTH) return TOO_DEEP;
	if (Array.isArray(value)) {
		let copy: unknown[] | undefined;
		value.forEach((element, index) => {
			const redacted = redactValue(element, forms, depth + 1);
			if (redacted !== element) (copy ??= [...value])[index] = redacted;
		});
		return copy ?? value;
	}
	let copy: Record<string, unknown> | undefined;
	for (const [key, element] of Object.entries(value)) {
		const shownKey = key.replace(forms, REDACTED);
		const redacted = redactValue(element, forms, depth + 1);
		if (shownKey === key && redacted === element) continue;
		copy ??= { ...(value as Record<string, unknown>) };
		if (shownKey !== key) delete copy[key];
		copy[shownKey] = redacted;
	}
	return copy ?? value;
}

/** Replaces the secrets (and tokens) wherever a body echoed them, in any of the forms they take in
 * text, JSON or an address; a body nested deeper than anything shown is cut there. */
export function redactSecrets(body: unknown, secrets: unknown[]): unknown {
	const forms = echoedForms(secrets);
	return forms ? redactValue(body, forms, 0) : body;
}

/** An address for a message: its origin and path only. The query and fragment are dropped (a
 * redirect's Location is written by someone else and may carry a token or a secret there), and so
 * is a user:password before the host. A relative address keeps its path only. */
export function shownAddress(address: string): string {
	try {
		const url = new URL(address);
		return `${url.origin === 'null' ? url.protocol : url.origin}${url.pathname}`;
	} catch {
		return address.split(/[?#]/)[0].replace(/\/\/[^/\s@]*@/g, '//');
	}
}
