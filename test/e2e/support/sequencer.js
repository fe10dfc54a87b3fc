// Runs the end-to-end files longest first (their seconds when run three at a time on a loaded 2-core
// machine), so that the short ones fill the workers at the end instead of one long file running
// alone. A file missing here runs last.
const Sequencer = require('@jest/test-sequencer').default;

const SECONDS = {
	'n8n-1x': 250,
	'queue-mode': 240,
	escalation: 275,
	trigger: 210,
	'never-twice': 170,
	start: 105,
	editor: 90,
	renewal: 77,
	'ai-agent': 75,
	'start-queue': 70,
	actions: 55,
	examples: 42,
};
const secondsOf = (file) => {
	const name = Object.keys(SECONDS).find((candidate) => file.endsWith(`/${candidate}.e2e.cts`));
	return name === undefined ? 0 : SECONDS[name];
};

class E2eSequencer extends Sequencer {
	sort(tests) {
		return [...tests].sort(
			(a, b) => secondsOf(b.path) - secondsOf(a.path) || a.path.localeCompare(b.path),
		);
	}
}

module.exports = E2eSequencer;
