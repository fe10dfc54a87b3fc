/* The API's address as the credential holds it: checked before any secret is sent to it. */

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1']);
/** 127.0.0.0/8 as an IPv4 literal only: a name such as `127.0.0.1.example.com` is not loopback. */
const LOOPBACK_IPV4 = /^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

/** Hides a user and password written into an address (`https://user:pass@host`), for messages. */
export function withoutUserInfo(text: string): string {
	return text.replace(/\/\/[^/\s@]*@/g, '//');
}

function parsedUrl(text: string): URL | undefined {
	try {
		return new URL(text);
	} catch {
		return undefined;
	}
}

/** The API needs https (its calls carry secrets); plain http is accepted only on loopback, for the
 * sandbox. A user or password in the address is refused: the credential's secrets have their own
 * fields, and an address is shown in messages. */
export function checkBaseUrl(baseUrl: unknown): string {
	const text = typeof baseUrl === 'string' ? baseUrl.trim().replace(/\/+$/, '') : '';
	const url = parsedUrl(text);
	if (!url) {
		throw new Error(
			`Base URL "${withoutUserInfo(text).slice(0, 200)}" is not a valid URL. Use the API address you were given, e.g. https://api.example.com`,
		);
	}
	if (url.username !== '' || url.password !== '') {
		throw new Error(
			`Base URL must not contain a user name or password (got "${url.protocol}//…@${url.host}"): give only the API address, e.g. https://api.example.com`,
		);
	}
	const isLoopback = LOOPBACK_HOSTS.has(url.hostname) || LOOPBACK_IPV4.test(url.hostname);
	if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback)) {
		throw new Error(
			`Base URL must start with https:// (got "${url.protocol}//${url.host}"). Plain http is only accepted for a local sandbox on 127.0.0.1 or localhost.`,
		);
	}
	return text;
}
