/**
 * A STAND-IN for an SMTP server, for tests only: a real TCP server on 127.0.0.1 that speaks
 * just enough ESMTP (RFC 5321) for nodemailer: EHLO/HELO, MAIL FROM, RCPT TO, DATA (with the
 * "." terminator and dot-unstuffing), RSET, NOOP, QUIT. It advertises no STARTTLS, AUTH or
 * PIPELINING, keeps what it receives in memory and delivers nothing. Commands out of order get
 * 503 and unknown ones 502, as a real server answers.
 */
import { type AddressInfo, createServer, type Socket } from 'node:net';

export interface ReceivedMail {
  from: string;
  recipients: string[];
  /** The message as transmitted (CRLF line ends), dot-unstuffed, without the terminator. */
  data: string;
}

export interface SmtpStandIn {
  url: string;
  messages: ReceivedMail[];
  /** Every command line received, in order. */
  commands: string[];
  /** Misbehaviour switches, to prove that the mailer notices. */
  faults: { rejectRecipients: boolean };
  close(): Promise<void>;
}

const TERMINATOR = Buffer.from('\r\n.\r\n');

export async function startSmtpStandIn(): Promise<SmtpStandIn> {
  const messages: ReceivedMail[] = [];
  const commands: string[] = [];
  const faults = { rejectRecipients: false };
  const sockets = new Set<Socket>();

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffer = Buffer.alloc(0);
    let greeted = false;
    let from: string | undefined;
    let recipients: string[] = [];
    let inData = false;
    const reply = (text: string) => {
      socket.write(`${text}\r\n`);
    };

    function command(line: string): void {
      commands.push(line);
      const verb = line.slice(0, 4).toUpperCase();
      const address = /<([^>]*)>/.exec(line)?.[1];
      if (verb === 'EHLO') {
        greeted = true;
        reply('250-stand-in.localhost greets you\r\n250-8BITMIME\r\n250 SMTPUTF8');
      } else if (verb === 'HELO') {
        greeted = true;
        reply('250 stand-in.localhost');
      } else if (verb === 'MAIL') {
        if (!greeted) {
          reply('503 5.5.1 Say EHLO first');
          return;
        }
        if (!/^MAIL FROM:/i.test(line) || address === undefined) {
          reply('501 5.5.4 Syntax: MAIL FROM:<address>');
          return;
        }
        from = address;
        recipients = [];
        reply('250 2.1.0 Sender OK');
      } else if (verb === 'RCPT') {
        if (from === undefined) {
          reply('503 5.5.1 Need MAIL first');
          return;
        }
        if (!/^RCPT TO:/i.test(line) || !address) {
          reply('501 5.5.4 Syntax: RCPT TO:<address>');
          return;
        }
        if (faults.rejectRecipients) {
          reply('550 5.1.1 Mailbox unavailable');
          return;
        }
        recipients.push(address);
        reply('250 2.1.5 Recipient OK');
      } else if (verb === 'DATA') {
        if (recipients.length === 0) {
          reply('503 5.5.1 Need RCPT first');
          return;
        }
        inData = true;
        reply('354 End data with <CR><LF>.<CR><LF>');
      } else if (verb === 'RSET') {
        from = undefined;
        recipients = [];
        reply('250 2.0.0 OK');
      } else if (verb === 'NOOP') {
        reply('250 2.0.0 OK');
      } else if (verb === 'QUIT') {
        reply('221 2.0.0 Bye');
        socket.end();
      } else {
        reply('502 5.5.2 Command not recognised');
      }
    }

    /** Takes one complete message off the buffer, if the terminator has arrived. */
    function takeData(): boolean {
      // The terminator's CRLF ends the message's last line; an empty message is just ".\r\n".
      const empty = buffer.subarray(0, 3).toString('latin1') === '.\r\n';
      const end = empty ? 0 : buffer.indexOf(TERMINATOR);
      if (end < 0) return false;
      const raw = buffer.subarray(0, empty ? 0 : end).toString('utf8');
      buffer = buffer.subarray(empty ? 3 : end + TERMINATOR.length);
      messages.push({ from: from ?? '', recipients, data: raw.replace(/^\.\./gm, '.') });
      inData = false;
      from = undefined;
      recipients = [];
      reply('250 2.0.0 Message accepted');
      return true;
    }

    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (inData) {
          if (!takeData()) return;
          continue;
        }
        const lineEnd = buffer.indexOf('\r\n');
        if (lineEnd < 0) return;
        const line = buffer.subarray(0, lineEnd).toString('utf8');
        buffer = buffer.subarray(lineEnd + 2);
        command(line);
      }
    });
    reply('220 stand-in.localhost ESMTP stand-in for tests');
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    commands,
    faults,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
