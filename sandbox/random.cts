/** Small deterministic randomness: same seed, same users, devices, credentials and fault draws. */

/** A 32-bit hash of a few numbers/strings (FNV-1a then a murmur-style finalizer). */
export function hash32(...parts: Array<string | number>): number {
	let h = 0x811c9dc5;
	for (const part of parts) {
		const text = `${part}|`;
		for (let i = 0; i < text.length; i++) {
			h ^= text.charCodeAt(i);
			h = Math.imul(h, 0x01000193);
		}
	}
	h ^= h >>> 16;
	h = Math.imul(h, 0x85ebca6b);
	h ^= h >>> 13;
	h = Math.imul(h, 0xc2b2ae35);
	h ^= h >>> 16;
	return h >>> 0;
}

/** A number in [0, 1) derived from the parts. */
export function unitFloat(...parts: Array<string | number>): number {
	return hash32(...parts) / 0x1_0000_0000;
}

/** mulberry32: a seeded generator of floats in [0, 1). */
export function seededRandom(seed: number): () => number {
	let state = seed >>> 0;
	return () => {
		state = (state + 0x6d2b79f5) >>> 0;
		let t = state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
	};
}

/** Deterministic hex string of the given length. */
export function hexFrom(length: number, ...parts: Array<string | number>): string {
	let out = '';
	for (let block = 0; out.length < length; block++)
		out += hash32(...parts, block)
			.toString(16)
			.padStart(8, '0');
	return out.slice(0, length);
}
