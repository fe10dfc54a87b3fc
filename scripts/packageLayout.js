// What a build puts in dist/, in one place for the build (gulpfile.js) and the check before packing
// (checkDist.js): the TypeScript of tsconfig.build.json compiled to .js, and these assets copied as
// they are. Nothing else belongs in dist/.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const DIST = 'dist';

/** Asset file extensions copied into dist/, per source folder (codex files live beside the nodes). */
const ASSET_EXTENSIONS = {
	nodes: ['svg', 'png', 'json'],
	credentials: ['svg', 'png'],
	icons: ['svg', 'png'],
};

/** The folders tsc compiles, read from tsconfig.build.json's include ("nodes/**\/*.ts" -> "nodes"). */
function compiledFolders(root = ROOT) {
	const { include } = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8'));
	return include.map((pattern) => pattern.split('/')[0]);
}

/** gulp.src globs of the assets. */
function assetGlobs() {
	// A brace list of one (`*.{svg}`) would match literally, so a single extension goes without braces.
	return Object.entries(ASSET_EXTENSIONS).map(([folder, extensions]) =>
		extensions.length === 1
			? `${folder}/**/*.${extensions[0]}`
			: `${folder}/**/*.{${extensions.join(',')}}`,
	);
}

module.exports = { DIST, ASSET_EXTENSIONS, compiledFolders, assetGlobs };
