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

/** The forms a secret takes when echoed: as is, inside JSON text (a quote or backslash escaped), and
 * inside an address (URL-encoded). Longest first, so a secret holding another is hidden whole. */
function echoedForms(secrets: unknown[]): string[] {
	const forms = new Set<string>();
	for (const secret of secrets) {
		// Every secret, however short: a short secret is still a secret (an empty one is nothing).
		if (typeof secret !== 'string' || secret === '') continue;
		forms.add(secret);
		forms.add(JSON.stringify(secret).slice(1, -1));
		forms.add(encodeURIComponent(secret));
	}
	return [...forms].sort((a, b) => b.length - a.length);
}

function redactText(text: string, forms: string[]): string {
	let redacted = text;
	for (const form of forms)
		if (redacted.includes(form)) redacted = redacted.split(form).join(REDACTED);
	return redacted;
}

/** The value with every echoed form of the secrets replaced; the same value (not a copy) when it
 * holds none, so reading a page of 1000 users copies nothing. Never throws. */
function redactValue(value: unknown, forms: string[], depth: number): unknown {
	if (typeof value === 'string') return redactText(value, forms);
	if (typeof value === 'number' || typeof value === 'bigint') {
		const text = String(value);
		return redactText(text, forms) === text ? value : REDACTED;
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
		const shownKey = redactText(key, forms);
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
	if (forms.length === 0) return body;
	return redactValue(body, forms, 0);
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
