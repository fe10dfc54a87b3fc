/**
 * The editor tests' screenshots (screenshots.cts): a README screenshot is written back when what it
 * shows changed (another size, or more than a few rows), not for a clock or an id in one row.
 */
import * as zlib from 'node:zlib';

import { screenshotChanged } from './screenshots.cts';

/** An RGBA PNG of `width` x `height`, grey, with the rows in `marked` red. */
function png(width: number, height: number, marked: number[] = []): Buffer {
	const chunk = (type: string, data: Buffer) => {
		const length = Buffer.alloc(4);
		length.writeUInt32BE(data.length);
		return Buffer.concat([length, Buffer.from(type, 'latin1'), data, Buffer.alloc(4)]);
	};
	const header = Buffer.alloc(13);
	header.writeUInt32BE(width, 0);
	header.writeUInt32BE(height, 4);
	header[8] = 8; // bits per channel
	header[9] = 6; // RGBA
	const rows = Array.from({ length: height }, (_, row) => {
		const pixel = marked.includes(row) ? [255, 0, 0, 255] : [128, 128, 128, 255];
		return Buffer.from([0, ...Array.from({ length: width }, () => pixel).flat()]);
	});
	return Buffer.concat([
		Buffer.from('89504e470d0a1a0a', 'hex'),
		chunk('IHDR', header),
		chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))),
		chunk('IEND', Buffer.alloc(0)),
	]);
}

describe('README screenshots are written back when what they show changed', () => {
	test('the same picture, or one row of 100 different (a time, an id): unchanged', () => {
		expect(screenshotChanged(png(20, 100), png(20, 100))).toBe(false);
		expect(screenshotChanged(png(20, 100), png(20, 100, [40]))).toBe(false);
	});

	test('five rows of 100 different, or another size: changed', () => {
		expect(screenshotChanged(png(20, 100), png(20, 100, [1, 2, 3, 4, 5]))).toBe(true);
		expect(screenshotChanged(png(20, 100), png(20, 90))).toBe(true);
		expect(screenshotChanged(png(20, 100), png(21, 100))).toBe(true);
	});

	test('not a PNG: a clear error', () => {
		expect(() => screenshotChanged(Buffer.from('GIF89a'), png(1, 1))).toThrow('Not a PNG');
	});
});
