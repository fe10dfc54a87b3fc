/**
 * `npm run bench`: starts the sandbox (100,000 users, loopback), runs every case (bench/suite.ts),
 * prints the table and writes bench/RESULTS.md. About a minute on 2 shared cores.
 * BENCH_REPS=n changes the repetitions of the timed cases (default 7).
 */
import './env';

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { startSandbox } from '../sandbox';
import { consoleTable, figuresOf, resultsMarkdown } from './report';
import { FULL_SCALE, runSuite } from './suite';

function versionOf(name: string): string {
	try {
		return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
	} catch {
		return 'unknown';
	}
}

/** The commit measured, and the shipped code's uncommitted changes (the bench runs the working tree). */
function sourceMeasured(): string {
	const git = (...args: string[]) => execFileSync('git', args, { cwd: join(__dirname, '..'), encoding: 'utf8' }).trim();
	try {
		const commit = git('rev-parse', '--short', 'HEAD');
		const dirty = git('status', '--porcelain', '--', 'nodes', 'credentials')
			.split('\n')
			.filter(Boolean)
			.map((line) => line.slice(3));
		return dirty.length ? `commit ${commit} plus uncommitted changes in ${dirty.join(', ')}` : `commit ${commit} (shipped code unchanged)`;
	} catch {
		return 'unknown (no git)';
	}
}

async function main() {
	const reps = Number(process.env.BENCH_REPS ?? FULL_SCALE.reps);
	if (!Number.isInteger(reps) || reps < 1) throw new Error(`BENCH_REPS must be a whole number >= 1 (got ${process.env.BENCH_REPS})`);
	const scale = { ...FULL_SCALE, reps };
	const sandbox = await startSandbox({ port: 0, seedUsers: scale.users, clock: 'manual' });
	try {
		console.log(`sandbox on ${sandbox.baseUrl} with ${scale.users} users`);
		const results = await runSuite(sandbox, scale, (line) => console.log(line));
		const { figures, misses } = figuresOf(results);
		console.log('');
		console.log(consoleTable(figures));
		if (misses.length) console.log(`\nGoals missed:\n${misses.map((miss) => `- ${miss}`).join('\n')}`);
		const markdown = resultsMarkdown(results, {
			date: new Date().toISOString(),
			node: process.version,
			machine: `2 shared cores (${process.platform} ${process.arch}); other work may run at the same time, hence medians and spreads`,
			versions: { 'n8n-core': versionOf('n8n-core'), 'n8n-workflow': versionOf('n8n-workflow'), undici: versionOf('undici') },
			source: sourceMeasured(),
		});
		const file = join(__dirname, 'RESULTS.md');
		writeFileSync(file, markdown);
		console.log(`\nwritten: ${file} (${(results.totalMs / 1000).toFixed(0)} s)`);
	} finally {
		await sandbox.stop();
	}
}

main().catch((error) => {
	console.error(error);
	process.exitCode = 1;
});
