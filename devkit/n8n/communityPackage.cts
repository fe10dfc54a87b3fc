// This package as n8n gets it (dev tooling, never shipped): built and packed as it is published,
// and the tarball installed into an n8n user folder as n8n installs a community package.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { cleanEnv } from './childEnv.cts';

const PACKAGE_ROOT = path.resolve(__dirname, '..', '..');

/** `npm run build` (unless `build` is false: the dist/ there is packed), then packPackage(); the tarball's path. */
export function packCheckout({
	build = true,
	log = () => undefined,
}: { build?: boolean; log?: (line: string) => void } = {}): string {
	if (build) {
		log('npm run build');
		const built = spawnSync('npm', ['run', '--silent', 'build'], {
			cwd: PACKAGE_ROOT,
			stdio: ['ignore', 'ignore', 'inherit'],
		});
		if (built.status !== 0) throw new Error('npm run build failed');
	}
	const tarball = packPackage();
	log(`packed ${path.basename(tarball)}`);
	return tarball;
}

/**
 * `npm pack` of this package into a new temp folder; returns the tarball's path. Lifecycle scripts on
 * (even where the user's own npm settings turn them off), so prepack refuses a dist/ that is not a
 * fresh build.
 */
export function packPackage(
	outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'companion-push-pack-')),
): string {
	const pack = spawnSync(
		'npm',
		['pack', '--json', '--ignore-scripts=false', '--pack-destination', outDir],
		{ cwd: PACKAGE_ROOT, env: cleanEnv({ keepNpmConfig: true }), encoding: 'utf8' },
	);
	if (pack.status !== 0) {
		fs.rmdirSync(outDir); // empty: npm wrote no tarball (rmdir refuses a folder with anything in it)
		throw new Error(`npm pack failed:\n${pack.stderr}`);
	}
	return path.join(outDir, JSON.parse(pack.stdout)[0].filename);
}

function tar(args: string[]): string {
	const result = spawnSync('tar', args, { encoding: 'utf8' });
	if (result.status !== 0) throw new Error(`tar ${args.join(' ')} failed: ${result.stderr}`);
	return result.stdout;
}

/**
 * Installs an `npm pack` tarball into $userFolder/.n8n/nodes/node_modules/<name> as n8n 2.41.1
 * installs a community package (CommunityPackagesService.downloadPackage): unpack it, drop its
 * devDependencies, peerDependencies and optionalDependencies, `npm install` the other dependencies
 * (this package has none: n8n's Cloud rules forbid them), record "<name>": "<version>" in
 * .n8n/nodes/package.json. n8n loads every n8n-nodes-* folder there at start, so the node types
 * are `<name>.<nodeName>`.
 */
export function installPackageTarball(
	userFolder: string,
	tarball: string,
): { packageDir: string; name: string; version: string } {
	const nodesDir = path.join(userFolder, '.n8n', 'nodes');
	const { name } = JSON.parse(tar(['-xzOf', tarball, 'package/package.json']));
	const packageDir = path.join(nodesDir, 'node_modules', name);
	fs.rmSync(packageDir, { recursive: true, force: true });
	fs.mkdirSync(packageDir, { recursive: true });
	tar(['-xzf', tarball, '-C', packageDir, '--strip-components=1']);

	const manifestPath = path.join(packageDir, 'package.json');
	// eslint-disable-next-line @typescript-eslint/no-unused-vars
	const { devDependencies, peerDependencies, optionalDependencies, ...manifest } = JSON.parse(
		fs.readFileSync(manifestPath, 'utf8'),
	);
	if (Object.keys(manifest.dependencies ?? {}).length > 0)
		throw new Error(
			`${name} has dependencies, which n8n would npm install: this test install does not.`,
		);
	fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));

	const nodesManifestPath = path.join(nodesDir, 'package.json');
	const nodesManifest = fs.existsSync(nodesManifestPath)
		? JSON.parse(fs.readFileSync(nodesManifestPath, 'utf8'))
		: { name: 'installed-nodes', private: true, dependencies: {} };
	nodesManifest.dependencies = { ...nodesManifest.dependencies, [name]: manifest.version };
	fs.writeFileSync(nodesManifestPath, JSON.stringify(nodesManifest, null, 2));
	return { packageDir, name, version: manifest.version };
}
