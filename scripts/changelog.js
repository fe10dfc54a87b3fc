// CHANGELOG.md in Keep a Changelog form: a release moves what is written under "## [Unreleased]"
// under a new "## [X.Y.Z] - YYYY-MM-DD" heading and leaves Unreleased empty for the next changes.
'use strict';

const UNRELEASED_HEADING = /^## \[Unreleased\][^\n]*\n/im;
// The Unreleased notes end at the next version heading or at the link definitions at the bottom.
const SECTION_END = /^(## |\[[^\]\n]+\]: )/m;

/** The notes under "## [Unreleased]" (trimmed) and where they sit in the text. */
function unreleasedNotes(text) {
	const heading = UNRELEASED_HEADING.exec(text);
	if (!heading) throw new Error('CHANGELOG.md has no "## [Unreleased]" section');
	const start = heading.index + heading[0].length;
	const length = text.slice(start).search(SECTION_END);
	const end = length === -1 ? text.length : start + length;
	return { notes: text.slice(start, end).trim(), start, end };
}

/** The changelog with the Unreleased notes moved under `version`, released on `date` (YYYY-MM-DD). */
function releaseChangelog(text, version, date) {
	const { notes, start, end } = unreleasedNotes(text);
	if (!notes)
		throw new Error(
			'the Unreleased section of CHANGELOG.md is empty: write down what changed first',
		);
	if (text.includes(`\n## [${version}]`))
		throw new Error(`CHANGELOG.md already has a section for ${version}`);
	const rest = text.slice(end);
	return {
		notes,
		text: `${text.slice(0, start)}\n## [${version}] - ${date}\n\n${notes}\n${rest ? `\n${rest}` : ''}`,
	};
}

module.exports = { unreleasedNotes, releaseChangelog };
