import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { loginCodeEmail } from '../../src/mail/login-code-email.ts';
import { createMailer } from '../../src/mail/mailer.ts';
import { type SmtpStandIn, startSmtpStandIn } from './smtp-stand-in.ts';

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'coffer-mail-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function smtpStandIn(t: TestContext): Promise<SmtpStandIn> {
  const smtp = await startSmtpStandIn();
  t.after(() => smtp.close());
  return smtp;
}

function recordingLog() {
  const entries: Array<{ details: object; message: string }> = [];
  return { entries, info: (details: object, message: string) => entries.push({ details, message }) };
}

const message = (code = '042137', tenantName = 'Example Shop') =>
  loginCodeEmail({ code, tenantName, from: 'login@shop.example', to: 'ada@example.org', validMinutes: 10 });

/* A small reader of RFC 5322 / MIME messages, enough to check what the mailer produced. */

interface Parsed {
  headers: Map<string, string>;
  body: string;
}

function parse(raw: string): Parsed {
  const split = raw.indexOf('\r\n\r\n');
  assert.ok(split > 0, 'headers end with an empty line');
  const headers = new Map<string, string>();
  for (const line of raw
    .slice(0, split)
    .replace(/\r\n[ \t]+/g, ' ')
    .split('\r\n')) {
    const colon = line.indexOf(':');
    assert.ok(colon > 0, `header line "${line}"`);
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body: raw.slice(split + 4) };
}

/** RFC 2047 encoded words, as nodemailer writes non-ASCII headers. */
function decodeWords(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_, _charset: string, kind: string, text: string) => {
      if (kind.toUpperCase() === 'B') return Buffer.from(text, 'base64').toString('utf8');
      const bytes = text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => `%${hex}`);
      return decodeURIComponent(bytes);
    });
}

function decodeBody(part: Parsed): string {
  const encoding = (part.headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  if (encoding === 'base64') return Buffer.from(part.body, 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const soft = part.body.replace(/=\r\n/g, '');
    const bytes: number[] = [];
    for (let i = 0; i < soft.length; i++) {
      if (soft[i] === '=' && /^[0-9A-F]{2}$/i.test(soft.slice(i + 1, i + 3))) {
        bytes.push(Number.parseInt(soft.slice(i + 1, i + 3), 16));
        i += 2;
      } else bytes.push(...Buffer.from(soft[i]!, 'utf8'));
    }
    return Buffer.from(bytes).toString('utf8');
  }
  return part.body;
}

/** The decoded text/plain and text/html bodies of a multipart/alternative message. */
function bodies(mail: Parsed): { text: string; html: string } {
  const type = mail.headers.get('content-type') ?? '';
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1];
  assert.match(type, /^multipart\/alternative;/);
  assert.ok(boundary);
  const parts = mail.body
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((chunk) => parse(chunk.replace(/^\r\n/, '').replace(/\r\n$/, '')));
  const find = (mime: string) => parts.find((p) => p.headers.get('content-type')?.startsWith(mime));
  return { text: decodeBody(find('text/plain')!), html: decodeBody(find('text/html')!) };
}

function checkLoginCodeMail(raw: string, code: string) {
  const mail = parse(raw);
  assert.equal(mail.headers.get('from'), 'Example Shop <login@shop.example>');
  assert.equal(mail.headers.get('to'), 'ada@example.org');
  assert.equal(mail.headers.get('subject'), 'Your log-in code for Example Shop');
  assert.match(mail.headers.get('message-id') ?? '', /^<.+@.+>$/);
  assert.ok(mail.headers.has('date'));
  const { text, html } = bodies(mail);
  assert.match(text, new RegExp(`^    ${code}$`, 'm'));
  assert.match(html, new RegExp(`>${code}</p>`));
  assert.match(text, /valid for 10 minutes/);
}

test('without SMTP, each message is an .eml file in the outbox, which is created when missing', async (t) => {
  const outboxDir = path.join(await tempDir(t), 'data', 'outbox');
  const log = recordingLog();
  const mailer = createMailer({ outboxDir, log });
  await mailer.send(message('042137'));
  await mailer.send(message('999001'));

  const files = (await readdir(outboxDir)).sort();
  assert.equal(files.length, 2, 'no temporary files are left behind');
  for (const file of files) assert.match(file, /^\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{12}\.eml$/);
  const raws = await Promise.all(files.map((file) => readFile(path.join(outboxDir, file), 'utf8')));
  const byCode = (code: string) => raws.find((raw) => raw.includes(code))!;
  checkLoginCodeMail(byCode('042137'), '042137');
  checkLoginCodeMail(byCode('999001'), '999001');
  for (const raw of raws) assert.doesNotMatch(raw, /[^\r]\n/, 'every line ends with CRLF');

  assert.equal(log.entries.length, 2);
  assert.ok(files.some((file) => JSON.stringify(log.entries[0]).includes(file)));
  assert.doesNotMatch(JSON.stringify(log.entries), /ada@example\.org|042137/, 'no recipient or code in logs');
});

test('a tenant name outside ASCII survives the headers', async (t) => {
  const outboxDir = await tempDir(t);
  await createMailer({ outboxDir, log: recordingLog() }).send(message('123456', 'Café Zürich & Söhne'));
  const [file] = await readdir(outboxDir);
  const mail = parse(await readFile(path.join(outboxDir, file!), 'utf8'));
  assert.equal(decodeWords(mail.headers.get('subject')!), 'Your log-in code for Café Zürich & Söhne');
  assert.match(decodeWords(mail.headers.get('from')!), /Café Zürich & Söhne.*<login@shop\.example>/);
  assert.match(bodies(mail).html, /Café Zürich &amp; Söhne/);
});

test('with SMTP_URL, the message goes to the SMTP server', async (t) => {
  const smtp = await smtpStandIn(t);
  const outboxDir = path.join(await tempDir(t), 'outbox');
  const log = recordingLog();
  await createMailer({ smtpUrl: smtp.url, outboxDir, log }).send(message('042137'));

  assert.equal(smtp.messages.length, 1);
  const received = smtp.messages[0]!;
  assert.equal(received.from, 'login@shop.example');
  assert.deepEqual(received.recipients, ['ada@example.org']);
  checkLoginCodeMail(received.data, '042137');
  assert.match(smtp.commands[0]!, /^EHLO /);
  assert.deepEqual(
    smtp.commands.slice(1, 4).map((c) => c.split(':')[0]),
    ['MAIL FROM', 'RCPT TO', 'DATA'],
  );
  await assert.rejects(readdir(outboxDir), { code: 'ENOENT' }, 'nothing is written to the outbox');
  assert.equal(log.entries.length, 1);
  assert.doesNotMatch(JSON.stringify(log.entries), /ada@example\.org/);
});

test('an SMTP refusal rejects send, so the caller can answer with an error', async (t) => {
  const smtp = await smtpStandIn(t);
  smtp.faults.rejectRecipients = true;
  const mailer = createMailer({ smtpUrl: smtp.url, outboxDir: await tempDir(t), log: recordingLog() });
  await assert.rejects(mailer.send(message()), /550|Mailbox unavailable|recipients/i);
  assert.equal(smtp.messages.length, 0);
});

test('an SMTP server that is not there rejects send', async (t) => {
  const smtp = await smtpStandIn(t);
  await smtp.close();
  const mailer = createMailer({ smtpUrl: smtp.url, outboxDir: await tempDir(t), log: recordingLog() });
  await assert.rejects(mailer.send(message()), /ECONNREFUSED|connect/i);
});
