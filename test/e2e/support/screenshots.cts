/**
 * Screenshots of the editor tests: every one goes to test-results/screenshots/; the ones the README
 * shows are also written back to docs/screenshots/ when what they show changed. Two shots of the same
 * screen differ in a few rows (ids, times such as "2 seconds ago"), so "changed" means another size,
 * or more than CHANGED_ROWS of the image's rows differing, compared on the decoded PNG rows.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';

const ROOT = path.resolve(__dirname, '..', '..', '..');
export const SCREENSHOTS_DIR = path.join(ROOT, 'test-results', 'screenshots');
export const README_SCREENSHOTS_DIR = path.join(ROOT, 'docs', 'screenshots');
/** Share of differing rows above which a README screenshot is written back. */
const CHANGED_ROWS = 0.02;

/**
 * Keeps `png` as test-results/screenshots/<name>.png, and as docs/screenshots/<name>.png when
 * `readme` is set and that file is missing or shows something else. Returns whether it wrote back.
 */
export function keepScreenshot(
	name: string,
	png: Buffer,
	{ readme }: { readme: boolean },
): boolean {
	fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
	fs.writeFileSync(path.join(SCREENSHOTS_DIR, `${name}.png`), png);
	if (!readme) return false;
	const shown = path.join(README_SCREENSHOTS_DIR, `${name}.png`);
	if (fs.existsSync(shown) && !screenshotChanged(fs.readFileSync(shown), png)) return false;
	fs.writeFileSync(shown, png);
	return true;
}

/** Whether two PNGs show different things: another size, or more than CHANGED_ROWS rows differing. */
export function screenshotChanged(before: Buffer, after: Buffer): boolean {
	const a = pngRows(before);
	const b = pngRows(after);
	if (a.width !== b.width || a.rows.length !== b.rows.length) return true;
	const differing = a.rows.filter((row, index) => !row.equals(b.rows[index])).length;
	return differing > a.rows.length * CHANGED_ROWS;
}

/** The rows of a PNG as stored (each with its filter byte), decompressed from its IDAT chunks. */
function pngRows(png: Buffer): { width: number; rows: Buffer[] } {
	const signature = '89504e470d0a1a0a';
	if (png.subarray(0, 8).toString('hex') !== signature) throw new Error('Not a PNG');
	let width = 0;
	let height = 0;
	let bytesPerPixel = 4;
	const data: Buffer[] = [];
	for (let offset = 8; offset < png.length; ) {
		const length = png.readUInt32BE(offset);
		const type = png.toString('latin1', offset + 4, offset + 8);
		const chunk = png.subarray(offset + 8, offset + 8 + length);
		if (type === 'IHDR') {
			width = chunk.readUInt32BE(0);
			height = chunk.readUInt32BE(4);
			const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[chunk[9]] ?? 4;
			bytesPerPixel = (channels * chunk[8]) / 8;
		} else if (type === 'IDAT') data.push(chunk);
		offset += 12 + length;
	}
	const raw = zlib.inflateSync(Buffer.concat(data));
	const stride = 1 + Math.ceil(width * bytesPerPixel);
	const rows = Array.from({ length: height }, (_, row) =>
		raw.subarray(row * stride, (row + 1) * stride),
	);
	return { width, rows };
}
