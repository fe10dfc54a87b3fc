// The build's gulp tasks (`npm run build` is `gulp clean && tsc && gulp build:assets`):
// clean empties dist/ so a file whose source was removed or renamed never ships from an old build;
// build:assets copies what tsc does not: node and credential icons and codex files (*.node.json).
const fs = require('node:fs');
const { src, dest } = require('gulp');
const { DIST, assetGlobs } = require('./scripts/packageLayout');

async function clean() {
	fs.rmSync(DIST, { recursive: true, force: true });
}

function copyAssets() {
	return src(assetGlobs(), { base: '.', encoding: false }).pipe(dest(DIST));
}

exports.clean = clean;
exports['build:assets'] = copyAssets;
