/**
 * The local mail server of `npm start` (devkit/smtpSink.cts): what it prints on the console (one
 * line per batch of mails, on a clock the test moves, with no control character of a subject) and
 * that a client which never ends its line, or sends a message too large, is refused instead of
 * filling the process's memory.
 */
import * as net from 'node:net';

import {
	consoleText,
	mailSummary,
	startSmtpSink,
	type ReceivedMail,
	type SmtpSink,
} from '../../devkit/smtpSink.cts';

const mail = (to: string, subject: string): ReceivedMail => ({
	to: [to],
	from: 'alerts@example.com',
	subject,
	data: `Subject: ${subject}\r\n\r\nbody`,
	receivedAt: 0,
});

/** A client connection: send lines, read what the server answered so far, and whether it closed. */
async function connect(port: number) {
	const socket = net.connect(port, '127.0.0.1');
	let received = '';
	let closed = false;
	socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
	socket.on('close', () => (closed = true));
	socket.on('error', () => undefined);
	await new Promise((resolve) => socket.once('connect', resolve));
	const until = (check: () => boolean) =>
		new Promise<void>((resolve) => {
			const poll = () => (check() ? resolve() : setImmediate(poll));
			poll();
		});
	return {
		socket,
		received: () => received,
		closed: () => closed,
		/** Resolves once the server's answers contain `text`. */
		answer: (text: string) => until(() => received.includes(text)),
		closing: () => until(() => closed),
	};
}

describe('mailSummary: the console lines of the mail server', () => {
	beforeEach(() => jest.useFakeTimers());
	afterEach(() => jest.useRealTimers());

	test('198 mails arriving together make one line, by subject; a lone mail one line of its own', () => {
		const lines: string[] = [];
		const { onMail } = mailSummary({ log: (line) => lines.push(line), mailFolder: '/tmp/mails' });
		for (let i = 0; i < 150; i++) onMail(mail(`user${i}@example.com`, 'Safety alert: gas leak'));
		for (let i = 0; i < 48; i++) onMail(mail(`user${i}@example.com`, 'Reminder: Safety alert'));
		jest.advanceTimersByTime(999);
		expect(lines).toEqual([]); // the batch is still coming
		jest.advanceTimersByTime(1);
		expect(lines).toEqual([
			'  [mail] 198 mails: "Safety alert: gas leak" to 150 people, "Reminder: Safety alert" to 48 people (in /tmp/mails)',
		]);

		jest.advanceTimersByTime(60_000);
		onMail(mail('lead@example.com', 'Safety alert: nobody opened it'));
		jest.advanceTimersByTime(1000);
		expect(lines.slice(1)).toEqual([
			'  [mail] to lead@example.com: Safety alert: nobody opened it',
		]);
	});

	test('a stream that never pauses still gets a line every 10 seconds', () => {
		const lines: string[] = [];
		const { onMail } = mailSummary({ log: (line) => lines.push(line) });
		for (let second = 0; second < 25; second++) {
			onMail(mail(`user${second}@example.com`, 'Safety alert'));
			jest.advanceTimersByTime(500);
			onMail(mail(`other${second}@example.com`, 'Safety alert'));
			jest.advanceTimersByTime(500);
		}
		expect(lines).toEqual([
			'  [mail] 20 mails: "Safety alert" to 20 people',
			'  [mail] 20 mails: "Safety alert" to 20 people',
		]);
	});

	test("a subject's escape sequences and control characters are not printed", () => {
		const lines: string[] = [];
		const { onMail, flush } = mailSummary({ log: (line) => lines.push(line) });
		onMail(mail('a@example.com\u001b[2J', 'Alert\u001b]0;owned\u0007\r\n\u009b31m \u202eevil'));
		flush();
		expect(lines).toEqual(['  [mail] to a@example.com[2J: Alert]0;owned31m evil']);
		expect(consoleText('x'.repeat(200))).toHaveLength(80);
	});
});

describe('startSmtpSink: bounded input', () => {
	let sink: SmtpSink;
	beforeEach(async () => {
		sink = await startSmtpSink();
	});
	afterEach(async () => await sink.stop());

	test('a line that never ends is refused and the connection closed', async () => {
		const client = await connect(sink.port);
		await client.answer('220 ');
		client.socket.write('EHLO ' + 'x'.repeat(70 * 1024));
		await client.answer('500 5.5.2 line too long');
		await client.closing();
		expect(client.closed()).toBe(true);
	});

	test('a message over the size limit is refused and not kept; the next one on the connection is', async () => {
		const client = await connect(sink.port);
		await client.answer('220 ');
		const line = 'y'.repeat(998);
		client.socket.write('MAIL FROM:<a@example.com>\r\nRCPT TO:<b@example.com>\r\nDATA\r\n');
		await client.answer('354 ');
		for (let i = 0; i < 26 * 1024; i++) client.socket.write(`${line}\r\n`);
		client.socket.write('.\r\n');
		await client.answer('552 5.3.4 message too large');
		client.socket.write(
			'MAIL FROM:<a@example.com>\r\nRCPT TO:<b@example.com>\r\nDATA\r\nSubject: small\r\n\r\nhi\r\n.\r\n',
		);
		await client.answer('250 2.0.0 queued');
		expect(sink.mails.map((kept) => kept.subject)).toEqual(['small']);
		client.socket.end('QUIT\r\n');
	});
});
