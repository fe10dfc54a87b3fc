// Types of scripts/chromium.js, for the TypeScript end-to-end tests.
export const CHROMIUM_FLAGS: string[];
export function chromiumPath(): string;
export function ensureChromium(options?: { log?: (line: string) => void }): Promise<string>;
