// Runs the end-to-end files in a fixed order: fast CLI runs first, `n8n start` ones last.
const Sequencer = require('@jest/test-sequencer').default;

const ORDER = ['actions', 'renewal', 'examples', 'trigger', 'editor', 'ai-agent', 'start', 'start-queue', 'queue-mode'];
const rank = (file) => {
	const index = ORDER.findIndex((name) => file.endsWith(`${name}.e2e.ts`));
	return index === -1 ? ORDER.length : index;
};

class E2eSequencer extends Sequencer {
	sort(tests) {
		return [...tests].sort((a, b) => rank(a.path) - rank(b.path) || a.path.localeCompare(b.path));
	}
}

module.exports = E2eSequencer;
