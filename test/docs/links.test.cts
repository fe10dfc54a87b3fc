/**
 * The Markdown pages' relative links and images point at files that exist, and their #anchors at
 * headings that exist (in the same page or the linked one, by GitHub's heading ids), so a section
 * moved from one page to another cannot leave a broken link behind.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** The pages checked, relative to the repository's root. */
function pages(): string[] {
	const docs = fs
		.readdirSync(path.join(ROOT, 'docs'))
		.filter((name) => name.endsWith('.md'))
		.map((name) => `docs/${name}`);
	return ['README.md', 'CHANGELOG.md', 'sandbox/README.md', 'devkit/README.md', ...docs];
}

/** The text with fenced code blocks blanked (line count kept): links and headings there are not real. */
function withoutCodeBlocks(text: string): string {
	let fence: string | undefined;
	return text
		.split('\n')
		.map((line) => {
			const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
			if (fence === undefined && marker) {
				fence = marker[0];
				return '';
			}
			if (fence !== undefined) {
				if (marker && marker[0] === fence) fence = undefined;
				return '';
			}
			return line;
		})
		.join('\n');
}

/** Inline code spans replaced by a word, so brackets inside them are not taken for links. */
function withoutCodeSpans(line: string): string {
	return line.replace(/(`+)[\s\S]*?\1/g, 'code');
}

/** GitHub's id of a heading: its text, lowercase, punctuation dropped, spaces to hyphens. */
function headingSlug(heading: string): string {
	const text = heading
		.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
		.replace(/<[^>]+>/g, '') // HTML tags
		.split(/(`+[^`]*`+)/) // code spans keep their characters, the rest loses emphasis markers
		.map((part) =>
			part.startsWith('`')
				? part.replace(/`/g, '')
				: part.replace(/\*+/g, '').replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gu, '$1'),
		)
		.join('');
	return text
		.trim()
		.toLowerCase()
		.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
		.replace(/ /g, '-');
}

/** The anchors a Markdown page offers: its headings' ids (repeats get -1, -2 ...) and explicit ids. */
function anchorsOf(text: string): Set<string> {
	const anchors = new Set<string>();
	const seen = new Map<string, number>();
	const add = (heading: string) => {
		const slug = headingSlug(heading);
		const times = seen.get(slug) ?? 0;
		seen.set(slug, times + 1);
		anchors.add(times === 0 ? slug : `${slug}-${times}`);
	};
	const lines = withoutCodeBlocks(text).split('\n');
	lines.forEach((line, index) => {
		const atx = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
		if (atx) add(atx[1]);
		const previous = lines[index - 1];
		if (
			index > 0 &&
			/^\s{0,3}(=+|-+)\s*$/.test(line) &&
			previous.trim() &&
			!/^\s{0,3}(#|[-*+|>]|\d+\.)/.test(previous)
		)
			add(previous.trim());
		for (const explicit of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(explicit[1]);
	});
	return anchors;
}

/** Every link and image target of a page: inline ones, reference definitions, HTML src/href. */
function linkTargets(text: string): { line: number; target: string }[] {
	const targets: { line: number; target: string }[] = [];
	withoutCodeBlocks(text)
		.split('\n')
		.forEach((raw, index) => {
			const line = withoutCodeSpans(raw);
			const found = [
				...[
					...line.matchAll(/!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+["'(][^)]*)?\)/g),
				].map((match) => match[1]),
				...[...line.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)/g)].map((match) => match[1]),
				...[...line.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((match) => match[1]),
			];
			for (const target of found) targets.push({ line: index + 1, target });
		});
	return targets;
}

const isExternal = (target: string) =>
	/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/**
 * What is wrong with the relative links of one page (`page` relative to `root`): a target outside
 * the repository, a file that does not exist, an anchor no heading of the target page has.
 */
function brokenLinks(
	root: string,
	page: string,
	read: (file: string) => string | undefined,
): string[] {
	const text = read(page);
	if (text === undefined) return [`${page}: the page itself is missing`];
	const problems: string[] = [];
	for (const { line, target } of linkTargets(text)) {
		if (isExternal(target)) continue;
		const where = `${page}:${line} (${target})`;
		const hashAt = target.indexOf('#');
		const filePart = decodeURIComponent(hashAt === -1 ? target : target.slice(0, hashAt));
		const anchor = hashAt === -1 ? undefined : decodeURIComponent(target.slice(hashAt + 1));
		const file =
			filePart === ''
				? page
				: path.posix.normalize(
						filePart.startsWith('/')
							? filePart.slice(1)
							: path.posix.join(path.posix.dirname(page), filePart),
					);
		if (file === '..' || file.startsWith('../') || path.posix.isAbsolute(file)) {
			problems.push(`${where}: points outside the repository`);
			continue;
		}
		if (!fs.existsSync(path.join(root, file))) {
			problems.push(`${where}: ${file} does not exist`);
			continue;
		}
		if (anchor === undefined || anchor === '') continue;
		if (file.endsWith('.md')) {
			const targetText = file === page ? text : read(file);
			if (targetText === undefined || !anchorsOf(targetText).has(anchor))
				problems.push(`${where}: ${file} has no heading #${anchor}`);
		} else if (!/^L\d+(-L\d+)?$/.test(anchor)) {
			problems.push(`${where}: #${anchor} is not a line of ${file}`);
		}
	}
	return problems;
}

const readFromRepository = (file: string) => {
	const full = path.join(ROOT, file);
	return fs.existsSync(full) && fs.statSync(full).isFile()
		? fs.readFileSync(full, 'utf8')
		: undefined;
};

describe('Markdown links', () => {
	test.each(pages())('every relative link and image of %s resolves', (page) => {
		expect(brokenLinks(ROOT, page, readFromRepository)).toEqual([]);
	});

	test("headings get GitHub's ids", () => {
		expect(headingSlug("Many requests at once, at the service's pace")).toBe(
			'many-requests-at-once-at-the-services-pace',
		);
		expect(headingSlug('Run it: `npm start`')).toBe('run-it-npm-start');
		expect(headingSlug('Never twice: Idempotency Key and "unknown" items')).toBe(
			'never-twice-idempotency-key-and-unknown-items',
		);
		expect(headingSlug('The **send** rule (`send_rule.ts`)')).toBe('the-send-rule-send_rulets');
		expect([
			...anchorsOf('# Usage\n\n## Usage\n\n```\n# not a heading\n```\nSetext\n---\n'),
		]).toEqual(['usage', 'usage-1', 'setext']);
	});

	test('a missing file, a missing heading and a way out of the repository are reported; good links are not', () => {
		const fixture: Record<string, string> = {
			'README.md': [
				'# Title',
				'## Usage',
				'[good](docs/guide.md#setup) [self](#usage) [image](docs/guide.md) [web](https://example.com/x#y)',
				'`[in code](missing.md)`',
				'[gone](docs/moved.md) [no heading](docs/guide.md#usage) [no self heading](#setup) [out](../elsewhere/notes.md)',
			].join('\n'),
			'docs/guide.md': '# Guide\n\n## Setup\n',
		};
		const root = fs.mkdtempSync(path.join(os.tmpdir(), 'doc-links-'));
		try {
			for (const [file, text] of Object.entries(fixture)) {
				fs.mkdirSync(path.join(root, path.dirname(file)), { recursive: true });
				fs.writeFileSync(path.join(root, file), text);
			}
			expect(brokenLinks(root, 'README.md', (file) => fixture[file])).toEqual([
				'README.md:5 (docs/moved.md): docs/moved.md does not exist',
				'README.md:5 (docs/guide.md#usage): docs/guide.md has no heading #usage',
				'README.md:5 (#setup): README.md has no heading #setup',
				'README.md:5 (../elsewhere/notes.md): points outside the repository',
			]);
		} finally {
			fs.rmSync(root, { recursive: true, force: true });
		}
	});
});
