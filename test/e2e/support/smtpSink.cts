/**
 * A mail server for the end-to-end tests that keeps what it receives: plain SMTP on 127.0.0.1, no
 * TLS, no authentication, every message accepted and recorded with its envelope. Enough for n8n's
 * Send Email node (nodemailer) with an SMTP credential: SSL/TLS off, Disable STARTTLS on.
 */
import * as net from 'node:net';

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

export async function startSmtpSink(): Promise<SmtpSink> {
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
					mails.push({ ...envelope, subject, data, receivedAt: Date.now() });
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
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
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
