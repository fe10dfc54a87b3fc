/**
 * A mail server that keeps what it receives, for the safety alert example (`npm start`) and the
 * end-to-end tests: plain SMTP on 127.0.0.1, no TLS, no authentication, every message accepted and
 * recorded with its envelope; with `mailFolder`, also written there as one .eml file per message
 * (any mail app opens it). Enough for n8n's Send Email node (nodemailer) with the SMTP credential
 * of smtpCredentialEntry: SSL/TLS off, Disable STARTTLS on. Nothing it receives goes further.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

/** The SMTP credential of the safety alert example (examples/safety-alert-escalation.json). */
export const SMTP_CREDENTIAL = { id: 'cpExampleSmtp', name: 'SMTP (your mail server)' };

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
		const reply = (line: string) => socket.write(`${line}\r\n`);
		reply('220 127.0.0.1 ESMTP test sink');
		socket.on('data', (chunk) => {
			buffer += chunk.toString('utf8');
			let end: number;
			while ((end = buffer.indexOf('\r\n')) >= 0) {
				const line = buffer.slice(0, end);
				buffer = buffer.slice(end + 2);
				if (dataLines) {
					if (line !== '.') {
						dataLines.push(line.startsWith('..') ? line.slice(1) : line);
						continue;
					}
					const data = dataLines.join('\r\n');
					const subject = /^Subject: (.*)$/im.exec(data)?.[1] ?? '';
					keep({ ...envelope, subject, data, receivedAt: Date.now() });
					dataLines = undefined;
					envelope = { from: '', to: [] };
					reply('250 2.0.0 queued');
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
					reply('354 end with <CRLF>.<CRLF>');
				} else if (command === 'RSET') {
					envelope = { from: '', to: [] };
					reply('250 OK');
				} else if (command === 'QUIT') {
					reply('221 bye');
					socket.end();
				} else reply('502 not implemented');
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
