// Removes the packed tarball of the global setup.
const fs = require('node:fs');
const path = require('node:path');

module.exports = async function globalTeardown() {
	const tarball = process.env.COMPANION_PUSH_E2E_TARBALL;
	if (tarball && path.basename(path.dirname(tarball)).startsWith('companion-push-pack-')) {
		fs.rmSync(path.dirname(tarball), { recursive: true, force: true });
	}
};
