/**
 * The Markdown pages' relative links and images point at files that exist, and their #anchors at
 * headings that exist (in the same page or the linked one, by GitHub's heading ids), so a section
 * moved from one page to another cannot leave a broken link behind. Links to this repository on
 * GitHub (its page, `blob/` and `tree/` addresses) are checked the same way against the checkout,
 * in the pages and where n8n shows them: the nodes' codex files (the node panel's documentation
 * links) and the credential's documentation URL. The README stays within 30 KB, its sections
 * for n8n users first, from a quick start on.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { CompanionPushApi } from '../../credentials/CompanionPushApi.credentials';

const ROOT = path.resolve(__dirname, '..', '..');

/** This repository's address on GitHub, from package.json (`https://github.com/owner/name`). */
function repositoryWebUrl(root: string): string {
	const { repository } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
	const url = typeof repository === 'string' ? repository : repository.url;
	return url.replace(/^git\+/, '').replace(/\.git$/, '');
}

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
 * A link to this repository on GitHub as a path in the checkout: the repository's page is its
 * README, `blob/<ref>/<path>` and `tree/<ref>/<path>` are that path. `null` for any other address
 * (another site, or pages of the repository that are not files, such as its issues).
 */
function repositoryPath(target: string, repositoryUrl: string): string | null {
	const base = repositoryUrl.toLowerCase();
	const [address, ...anchorParts] = target.split('#');
	const anchor = anchorParts.length > 0 ? `#${anchorParts.join('#')}` : '';
	const lower = address.replace(/\/$/, '').toLowerCase();
	if (lower === base) return `/README.md${anchor}`;
	if (!lower.startsWith(`${base}/`)) return null;
	const file = /^\/(?:blob|tree)\/[^/]+\/(.+)$/.exec(address.slice(base.length).replace(/\/$/, ''));
	return file ? `/${file[1]}${anchor}` : null;
}

/**
 * What is wrong with one link target found in `page` (relative to the repository's root, `where`
 * says where it was found): a target outside the repository, a file that does not exist, an
 * anchor no heading of the target page has. Links to other sites are not checked.
 */
function problemOfTarget(
	root: string,
	page: string,
	rawTarget: string,
	where: string,
	read: (file: string) => string | undefined,
	repositoryUrl: string,
): string | undefined {
	let target = rawTarget;
	if (isExternal(target)) {
		const inRepository = repositoryPath(target, repositoryUrl);
		if (inRepository === null) return undefined;
		target = inRepository;
	}
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
	if (file === '..' || file.startsWith('../') || path.posix.isAbsolute(file))
		return `${where}: points outside the repository`;
	if (!fs.existsSync(path.join(root, file))) return `${where}: ${file} does not exist`;
	if (anchor === undefined || anchor === '') return undefined;
	if (file.endsWith('.md')) {
		const targetText = read(file);
		if (targetText === undefined || !anchorsOf(targetText).has(anchor))
			return `${where}: ${file} has no heading #${anchor}`;
	} else if (!/^L\d+(-L\d+)?$/.test(anchor)) {
		return `${where}: #${anchor} is not a line of ${file}`;
	}
	return undefined;
}

/** What is wrong with the links of one page (`page` relative to `root`), one line per problem. */
function brokenLinks(
	root: string,
	page: string,
	read: (file: string) => string | undefined,
	repositoryUrl = repositoryWebUrl(root),
): string[] {
	const text = read(page);
	if (text === undefined) return [`${page}: the page itself is missing`];
	const problems: string[] = [];
	for (const { line, target } of linkTargets(text)) {
		const problem = problemOfTarget(
			root,
			page,
			target,
			`${page}:${line} (${target})`,
			read,
			repositoryUrl,
		);
		if (problem) problems.push(problem);
	}
	return problems;
}

/** The documentation links of each node's codex file (`resources.<kind>[].url`), by file. */
function codexLinks(root: string): { file: string; url: string }[] {
	const folder = path.join(root, 'nodes');
	return fs
		.readdirSync(folder, { recursive: true, encoding: 'utf8' })
		.filter((file) => file.endsWith('.node.json'))
		.flatMap((file) => {
			const codex = JSON.parse(fs.readFileSync(path.join(folder, file), 'utf8'));
			const resources: Record<string, { url: string }[]> = codex.resources ?? {};
			return Object.values(resources)
				.flat()
				.map(({ url }) => ({ file: `nodes/${file.split(path.sep).join('/')}`, url }));
		});
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

	test("the nodes' codex documentation links and the credential's documentation URL resolve in this repository", () => {
		const repositoryUrl = repositoryWebUrl(ROOT);
		const links = [
			...codexLinks(ROOT),
			{
				file: 'credentials/CompanionPushApi.credentials.ts',
				url: new CompanionPushApi().documentationUrl,
			},
		];
		// both nodes have their primary and credential documentation: nothing is checked by omission
		expect(links.filter(({ file }) => file.endsWith('.node.json')).length).toBeGreaterThanOrEqual(
			4,
		);
		for (const { url } of links) expect(repositoryPath(url, repositoryUrl)).not.toBeNull();
		const problems = links.map(({ file, url }) =>
			problemOfTarget(
				ROOT,
				'README.md',
				url,
				`${file} (${url})`,
				readFromRepository,
				repositoryUrl,
			),
		);
		expect(problems.filter(Boolean)).toEqual([]);
	});

	test('the README stays within 30 KB', () => {
		expect(fs.statSync(path.join(ROOT, 'README.md')).size).toBeLessThanOrEqual(30 * 1024);
	});

	test("the README's sections for n8n users come first, in a user's order (a quick start first); the developers' after them", () => {
		const sections = withoutCodeBlocks(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'))
			.split('\n')
			.filter((line) => line.startsWith('## '))
			.map((line) => line.slice(3));
		const userOrder = [
			'Quick start',
			'Installation',
			'Credentials',
			'Operations',
			'Companion Push Trigger',
			'Usage',
			'Examples',
			'Limits',
		];
		expect(sections.slice(0, userOrder.length)).toEqual(userOrder);
		expect(sections.indexOf('Developing the package')).toBeGreaterThan(userOrder.length - 1);
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
				'[repo](https://github.com/Owner/Repo#usage) [file](https://github.com/owner/repo/blob/main/docs/guide.md#setup) [folder](https://github.com/owner/repo/tree/main/docs/) [issues](https://github.com/owner/repo/issues/1) [other](https://github.com/owner/other/blob/main/x.md)',
				'[repo heading](https://github.com/owner/repo#nowhere) [gone file](https://github.com/owner/repo/blob/main/docs/moved.md) [gone folder](https://github.com/owner/repo/tree/main/examples)',
			].join('\n'),
			'docs/guide.md': '# Guide\n\n## Setup\n',
		};
		const root = fs.mkdtempSync(path.join(os.tmpdir(), 'doc-links-'));
		try {
			for (const [file, text] of Object.entries(fixture)) {
				fs.mkdirSync(path.join(root, path.dirname(file)), { recursive: true });
				fs.writeFileSync(path.join(root, file), text);
			}
			expect(
				brokenLinks(root, 'README.md', (file) => fixture[file], 'https://github.com/owner/repo'),
			).toEqual([
				'README.md:5 (docs/moved.md): docs/moved.md does not exist',
				'README.md:5 (docs/guide.md#usage): docs/guide.md has no heading #usage',
				'README.md:5 (#setup): README.md has no heading #setup',
				'README.md:5 (../elsewhere/notes.md): points outside the repository',
				'README.md:7 (https://github.com/owner/repo#nowhere): README.md has no heading #nowhere',
				'README.md:7 (https://github.com/owner/repo/blob/main/docs/moved.md): docs/moved.md does not exist',
				'README.md:7 (https://github.com/owner/repo/tree/main/examples): examples does not exist',
			]);
		} finally {
			fs.rmSync(root, { recursive: true, force: true });
		}
	});
});
