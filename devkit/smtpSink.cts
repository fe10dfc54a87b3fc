/**
 * A mail server that keeps what it receives, for the safety alert example (`npm start`) and the
 * end-to-end tests: plain SMTP on 127.0.0.1, no TLS, no authentication, every message accepted and
 * recorded with its envelope; with `mailFolder`, also written there as one .eml file per message
 * (any mail app opens it). Enough for n8n's Send Email node (nodemailer) with the SMTP credential
 * of smtpCredentialEntry: SSL/TLS off, Disable STARTTLS on. Nothing it receives goes further.
 * A line longer than MAX_LINE or a message larger than MAX_MESSAGE is refused (the connection is
 * closed), so a client that never ends a line cannot fill this process's memory.
 * mailSummary() words what arrives for a console: one line per batch, control characters removed.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

/** The SMTP credential of the safety alert example (examples/safety-alert-escalation.json). */
export const SMTP_CREDENTIAL = { id: 'cpExampleSmtp', name: 'SMTP (your mail server)' };

/** SMTP's own limit for a line is 1000 octets (RFC 5321); this leaves room for careless clients. */
const MAX_LINE = 64 * 1024;
/** A message larger than this is refused (552) and not kept. */
const MAX_MESSAGE = 25 * 1024 * 1024;

/** The example's SMTP credential pointing at a sink on `port`, for `n8n import:credentials`. */
export function smtpCredentialEntry(port: number): object {
	return {
		...SMTP_CREDENTIAL,
		type: 'smtp',
		data: {
			host: '127.0.0.1',
			port,
			secure: false,
			disableStartTls: true,
			user: '',
			password: '',
		},
	};
}

export interface ReceivedMail {
	/** Envelope recipients (RCPT TO), lower case. */
	to: string[];
	from: string;
	subject: string;
	/** The message as sent (headers and body), dot-stuffing undone. */
	data: string;
	/** Date.now() when the message was accepted. */
	receivedAt: number;
}

export interface SmtpSink {
	port: number;
	mails: ReceivedMail[];
	stop(): Promise<void>;
}

export interface SmtpSinkOptions {
	/** 0 (the default): any free port. */
	port?: number;
	/** A folder to write each message to as <time>-<recipient>.eml. */
	mailFolder?: string;
	/** Called with each message once it is accepted. */
	onMail?: (mail: ReceivedMail) => void;
}

export async function startSmtpSink({
	port = 0,
	mailFolder,
	onMail,
}: SmtpSinkOptions = {}): Promise<SmtpSink> {
	if (mailFolder) fs.mkdirSync(mailFolder, { recursive: true });
	const keep = (mail: ReceivedMail) => {
		mails.push(mail);
		if (mailFolder) {
			const recipient = (mail.to[0] ?? 'nobody').replace(/[^\w.@-]/g, '_');
			const file = `${new Date(mail.receivedAt).toISOString().replace(/:/g, '-')}-${mails.length}-${recipient}.eml`;
			fs.writeFileSync(path.join(mailFolder, file), mail.data);
		}
		onMail?.(mail);
	};
	const mails: ReceivedMail[] = [];
	const sockets = new Set<net.Socket>();
	const server = net.createServer((socket) => {
		sockets.add(socket);
		socket.on('close', () => sockets.delete(socket));
		socket.on('error', () => socket.destroy());
		let buffer = '';
		let envelope = { from: '', to: [] as string[] };
		let dataLines: string[] | undefined;
		let dataSize = 0;
		let refused = false;
		const reply = (line: string) => socket.write(`${line}\r\n`);
		reply('220 127.0.0.1 ESMTP test sink');
		socket.on('data', (chunk) => {
			if (refused) return;
			buffer += chunk.toString('utf8');
			let end: number;
			while ((end = buffer.indexOf('\r\n')) >= 0) {
				const line = buffer.slice(0, end);
				buffer = buffer.slice(end + 2);
				if (dataLines) {
					if (line !== '.') {
						dataSize += line.length + 2;
						if (dataSize <= MAX_MESSAGE)
							dataLines.push(line.startsWith('..') ? line.slice(1) : line);
						continue;
					}
					if (dataSize > MAX_MESSAGE) reply('552 5.3.4 message too large');
					else {
						const data = dataLines.join('\r\n');
						const subject = /^Subject: (.*)$/im.exec(data)?.[1] ?? '';
						keep({ ...envelope, subject, data, receivedAt: Date.now() });
						reply('250 2.0.0 queued');
					}
					dataLines = undefined;
					dataSize = 0;
					envelope = { from: '', to: [] };
					continue;
				}
				const command = line.slice(0, 4).toUpperCase();
				const address = /<([^>]*)>/.exec(line)?.[1] ?? '';
				if (command === 'EHLO') {
					reply('250-127.0.0.1');
					reply('250 8BITMIME');
				} else if (command === 'HELO' || command === 'NOOP') reply('250 OK');
				else if (command === 'MAIL') {
					envelope = { from: address, to: [] };
					reply('250 OK');
				} else if (command === 'RCPT') {
					envelope.to.push(address.toLowerCase());
					reply('250 OK');
				} else if (command === 'DATA') {
					dataLines = [];
					dataSize = 0;
					reply('354 end with <CRLF>.<CRLF>');
				} else if (command === 'RSET') {
					envelope = { from: '', to: [] };
					reply('250 OK');
				} else if (command === 'QUIT') {
					reply('221 bye');
					socket.end();
				} else reply('502 not implemented');
			}
			if (buffer.length > MAX_LINE) {
				reply('500 5.5.2 line too long');
				socket.end();
				buffer = '';
				refused = true;
			}
		});
	});
	await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
	return {
		port: (server.address() as net.AddressInfo).port,
		mails,
		stop: () =>
			new Promise<void>((resolve) => {
				for (const socket of sockets) socket.destroy();
				server.close(() => resolve());
			}),
	};
}

/** Text from a mail, fit for one console line: no control characters (a terminal would act on
 * escape sequences), no direction overrides, at most `max` characters. */
export function consoleText(text: string, max = 80): string {
	const clean = text.replace(/[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, '').trim();
	return clean.length > max ? `${clean.slice(0, max - 3)}...` : clean;
}

export interface MailSummaryOptions {
	/** Writes one line. */
	log: (line: string) => void;
	/** Where the mails are kept, named in a batch's line. */
	mailFolder?: string;
	/** A batch ends when no mail came for this long (default 1 s) ... */
	quietMs?: number;
	/** ... or when it began this long ago (default 10 s), so a long stream still shows. */
	longestMs?: number;
	/** Timers: the tests' fake ones. */
	setTimer?: (run: () => void, ms: number) => unknown;
	clearTimer?: (timer: unknown) => void;
}

/**
 * An onMail for startSmtpSink that prints one line per batch of mails (the safety alert example
 * mails everyone its trigger escalates at once): a lone mail as `[mail] to <address>: <subject>`,
 * a batch as `[mail] 198 mails: "<subject>" to 198 people ...`. flush() prints what is pending.
 */
export function mailSummary({
	log,
	mailFolder,
	quietMs = 1000,
	longestMs = 10_000,
	setTimer = (run, ms) => setTimeout(run, ms).unref(),
	clearTimer = (timer) => clearTimeout(timer as NodeJS.Timeout),
}: MailSummaryOptions) {
	let batch: ReceivedMail[] = [];
	let quietTimer: unknown;
	let longestTimer: unknown;
	const flush = () => {
		clearTimer(quietTimer);
		clearTimer(longestTimer);
		quietTimer = longestTimer = undefined;
		if (batch.length === 0) return;
		const mails = batch;
		batch = [];
		if (mails.length === 1) {
			const [mail] = mails;
			log(
				`  [mail] to ${consoleText(mail.to.join(', '))}: ${consoleText(mail.subject) || '(no subject)'}`,
			);
			return;
		}
		const bySubject = new Map<string, Set<string>>();
		for (const mail of mails) {
			const subject = consoleText(mail.subject) || '(no subject)';
			const people = bySubject.get(subject) ?? new Set<string>();
			for (const address of mail.to) people.add(address);
			bySubject.set(subject, people);
		}
		const subjects = [...bySubject].map(
			([subject, people]) =>
				`"${subject}" to ${people.size} ${people.size === 1 ? 'person' : 'people'}`,
		);
		const shown = subjects.slice(0, 3).join(', ');
		const more = subjects.length > 3 ? ` and ${subjects.length - 3} more subjects` : '';
		log(
			`  [mail] ${mails.length} mails: ${shown}${more}${mailFolder ? ` (in ${mailFolder})` : ''}`,
		);
	};
	const onMail = (mail: ReceivedMail) => {
		batch.push(mail);
		clearTimer(quietTimer);
		quietTimer = setTimer(flush, quietMs);
		if (longestTimer === undefined) longestTimer = setTimer(flush, longestMs);
	};
	return { onMail, flush };
}
