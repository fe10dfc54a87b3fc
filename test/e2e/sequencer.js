// Runs the end-to-end files longest first (their seconds on a quiet 2-core machine, measured with
// the files side by side), so that the short ones fill the workers at the end instead of one long
// file running alone. A file missing here runs last.
const Sequencer = require('@jest/test-sequencer').default;

const SECONDS = {
	'n8n-1x': 200,
	trigger: 200,
	'queue-mode': 180,
	'ai-agent': 120,
	'never-twice': 110,
	editor: 90,
	start: 80,
	'start-queue': 50,
	renewal: 50,
	examples: 35,
	actions: 25,
};
const secondsOf = (file) => {
	const name = Object.keys(SECONDS).find((candidate) => file.endsWith(`/${candidate}.e2e.ts`));
	return name === undefined ? 0 : SECONDS[name];
};

class E2eSequencer extends Sequencer {
	sort(tests) {
		return [...tests].sort((a, b) => secondsOf(b.path) - secondsOf(a.path) || a.path.localeCompare(b.path));
	}
}

module.exports = E2eSequencer;
