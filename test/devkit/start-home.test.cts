/**
 * Where `npm start` keeps its n8n user folder (devkit/n8n/home.cts): in a data folder, not in the
 * runtime cache, and one that an earlier version kept in the cache (runtime-<key>/n8n-home) is
 * moved there on the first start, the most recently used one when there are several, also from
 * another file system. XDG_CACHE_HOME and XDG_DATA_HOME point at temp folders the test removes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { carryOverStartHome, removeStartHome, startHomeFolder } from '../../devkit/n8n/home.cts';
import { runtimeCacheFolder } from '../../devkit/n8n/install.cts';

describe("npm start's user folder", () => {
	const saved = { cache: process.env.XDG_CACHE_HOME, data: process.env.XDG_DATA_HOME };
	const made: string[] = [];
	const tempFolder = (under = os.tmpdir()) => {
		const folder = fs.mkdtempSync(path.join(under, 'companion-push-home-test-'));
		made.push(folder);
		return folder;
	};
	/** An old user folder in the cache: a runtime-<key>/n8n-home with a database used `minutesAgo`. */
	const oldHome = (key: string, minutesAgo: number, owner: string) => {
		const folder = path.join(runtimeCacheFolder(), `runtime-${key}`, 'n8n-home');
		fs.mkdirSync(path.join(folder, '.n8n'), { recursive: true });
		const database = path.join(folder, '.n8n', 'database.sqlite');
		fs.writeFileSync(database, `workflows of ${owner}`);
		fs.writeFileSync(path.join(folder, 'owner-password'), owner, { mode: 0o600 });
		const time = new Date(Date.now() - minutesAgo * 60_000);
		fs.utimesSync(database, time, time);
		return folder;
	};

	beforeEach(() => {
		process.env.XDG_CACHE_HOME = tempFolder();
		process.env.XDG_DATA_HOME = tempFolder();
	});
	afterEach(() => {
		for (const [name, value] of [
			['XDG_CACHE_HOME', saved.cache],
			['XDG_DATA_HOME', saved.data],
		] as const)
			if (value === undefined) delete process.env[name];
			else process.env[name] = value;
		for (const folder of made.splice(0)) fs.rmSync(folder, { recursive: true, force: true });
	});

	test('it lives in the data folder, outside the runtime cache', () => {
		const home = startHomeFolder();
		expect(home).toBe(
			path.join(process.env.XDG_DATA_HOME!, 'n8n-nodes-companion-push', 'n8n-home'),
		);
		expect(path.relative(runtimeCacheFolder(), home).startsWith('..')).toBe(true);
		delete process.env.XDG_DATA_HOME;
		expect(startHomeFolder()).toBe(
			path.join(os.homedir(), '.local', 'share', 'n8n-nodes-companion-push', 'n8n-home'),
		);
	});

	test("an old runtime's user folder is moved there, the most recently used of several", () => {
		const older = oldHome('aaaaaaaaaaaa', 600, 'older');
		const newest = oldHome('bbbbbbbbbbbb', 5, 'newest');
		const home = startHomeFolder();

		expect(carryOverStartHome(home)).toEqual({ from: newest, leftOver: [older] });
		expect(fs.readFileSync(path.join(home, '.n8n', 'database.sqlite'), 'utf8')).toBe(
			'workflows of newest',
		);
		expect(fs.statSync(path.join(home, 'owner-password')).mode & 0o777).toBe(0o600);
		expect(fs.existsSync(newest)).toBe(false);
		expect(fs.existsSync(older)).toBe(true);

		// Once there, it stays: a later start moves nothing.
		expect(carryOverStartHome(home)).toBeUndefined();
		expect(fs.existsSync(older)).toBe(true);
	});

	test('from another file system, it is copied and the old one removed', () => {
		if (!fs.existsSync('/dev/shm')) return; // no second file system to try with
		process.env.XDG_DATA_HOME = tempFolder('/dev/shm');
		const old = oldHome('cccccccccccc', 1, 'builder');
		const home = startHomeFolder();

		expect(carryOverStartHome(home)).toEqual({ from: old, leftOver: [] });
		expect(fs.readFileSync(path.join(home, 'owner-password'), 'utf8')).toBe('builder');
		expect(fs.existsSync(old)).toBe(false);
		expect(fs.existsSync(`${home}.partial`)).toBe(false);
	});

	test('nothing to carry over: nothing happens', () => {
		expect(carryOverStartHome(startHomeFolder())).toBeUndefined();
		expect(fs.existsSync(startHomeFolder())).toBe(false);
	});

	test('--fresh removes a folder npm start made, and refuses any other folder, leaving it whole', () => {
		const made = tempFolder();
		fs.writeFileSync(path.join(made, 'owner-password'), 'builder', { mode: 0o600 });
		fs.mkdirSync(path.join(made, '.n8n'));
		removeStartHome(made);
		expect(fs.existsSync(made)).toBe(false);

		// A typo in --home: a folder of the user's own work.
		const theirs = tempFolder();
		fs.writeFileSync(path.join(theirs, 'thesis.tex'), 'years of work');
		expect(() => removeStartHome(theirs)).toThrow(
			`--fresh: ${theirs} is not a user folder npm start made`,
		);
		expect(fs.readFileSync(path.join(theirs, 'thesis.tex'), 'utf8')).toBe('years of work');

		const empty = tempFolder();
		removeStartHome(empty);
		expect(fs.existsSync(empty)).toBe(false);
		removeStartHome(empty); // not there: nothing to do
	});
});
