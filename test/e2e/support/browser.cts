/**
 * Debian's Chromium for the editor tests (editor.e2e.ts, ai-agent.e2e.ts), driven by playwright-core:
 * a fresh profile per launch, removed on close, and a wait for the page to stand still before a
 * screenshot.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { chromium, type Page } from 'playwright-core';

import { CHROMIUM_FLAGS } from '../../../devkit/chromium.cts';

/**
 * Chromium with a fresh profile and one page (60 s default timeout); close() also removes the profile.
 * `httpCredentials` answers a page's Basic Auth prompt (the safety alert's form), as a user types them.
 */
export async function launchBrowser({
	httpCredentials,
}: { httpCredentials?: { username: string; password: string } } = {}): Promise<{
	page: Page;
	close: () => Promise<void>;
}> {
	// No Chromium (and no way to install it): every test that needs it fails with the reason.
	const chromiumError = process.env.COMPANION_PUSH_E2E_CHROMIUM_ERROR;
	if (chromiumError) throw new Error(chromiumError);
	const executablePath = process.env.COMPANION_PUSH_E2E_CHROMIUM;
	if (!executablePath)
		throw new Error(
			'No Chromium: run the end-to-end tests through jest.e2e.config.js (its global setup provides it).',
		);

	const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-chromium-'));
	try {
		const context = await chromium.launchPersistentContext(userDataDir, {
			executablePath,
			args: CHROMIUM_FLAGS,
			headless: true,
			viewport: { width: 1280, height: 800 },
			httpCredentials,
		});
		const page = context.pages()[0] ?? (await context.newPage());
		page.setDefaultTimeout(60_000);
		const close = async () => {
			await context.close();
			fs.rmSync(userDataDir, { recursive: true, force: true });
		};
		return { page, close };
	} catch (error) {
		fs.rmSync(userDataDir, { recursive: true, force: true });
		throw error;
	}
}

/**
 * Waits until nothing on the page moves: no finite animation or transition still running (panels
 * sliding in, the canvas zooming; endless ones such as spinners do not count), then one more frame
 * painted.
 */
export async function settled(page: Page): Promise<void> {
	// Runs in the page (this project compiles without the DOM types).
	type PageGlobals = {
		document: {
			getAnimations(): Array<{
				playState: string;
				effect: { getComputedTiming(): { iterations?: number } } | null;
			}>;
		};
		requestAnimationFrame(callback: () => void): number;
	};
	await page.waitForFunction(() =>
		(globalThis as unknown as PageGlobals).document
			.getAnimations()
			.every(
				(animation) =>
					animation.playState !== 'running' ||
					animation.effect?.getComputedTiming().iterations === Infinity,
			),
	);
	await page.evaluate(() => {
		const window = globalThis as unknown as PageGlobals;
		return new Promise<void>((resolve) =>
			window.requestAnimationFrame(() => window.requestAnimationFrame(resolve)),
		);
	});
}
