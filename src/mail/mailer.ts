import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';

/**
 * Outgoing e-mail. With SMTP_URL messages go to that server; without it each message is
 * written as an RFC 5322 .eml file into the outbox directory, so that development and tests
 * can read what would have been sent (and so that no message is silently dropped).
 */

/** A display name with an address; nodemailer quotes and encodes the name as headers need. */
export interface MailAddress {
  name: string;
  address: string;
}

export interface MailMessage {
  from: string | MailAddress;
  to: string;
  subject: string;
  text: string;
  html?: string | undefined;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** The part of a pino logger the mailer uses. Recipients are personal data and are not logged. */
export interface MailLog {
  info(details: object, message: string): void;
}

/**
 * An SMTP server that does not answer must not hold a log-in request for nodemailer's
 * default two minutes; options in the URL's query still override these.
 */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/** Sortable and valid on every file system: ISO 8601 basic format, e.g. 20260501T120000.000Z. */
function outboxFileName(now: Date): string {
  return `${now.toISOString().replace(/[-:]/g, '')}-${randomBytes(6).toString('hex')}.eml`;
}

function smtpMailer(smtpUrl: string, log: MailLog): Mailer {
  const transport = nodemailer.createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS });
  return {
    async send(message) {
      const info = await transport.sendMail(message);
      log.info({ messageId: info.messageId }, 'e-mail handed to the SMTP server');
    },
  };
}

function outboxMailer(outboxDir: string, log: MailLog): Mailer {
  // CRLF line ends: an .eml file is the message as it would travel over SMTP.
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    async send(message) {
      const info = await transport.sendMail(message);
      await mkdir(outboxDir, { recursive: true, mode: 0o700 });
      const file = path.join(outboxDir, outboxFileName(new Date()));
      // Written beside its final name and renamed, so a reader never sees half a message.
      const temporary = path.join(outboxDir, `.${path.basename(file)}.tmp`);
      await writeFile(temporary, info.message as Buffer, { flag: 'wx', mode: 0o600 });
      await rename(temporary, file);
      log.info({ messageId: info.messageId, file }, 'e-mail written to the outbox (no SMTP_URL)');
    },
  };
}

export function createMailer(options: {
  smtpUrl?: string | undefined;
  outboxDir: string;
  log: MailLog;
}): Mailer {
  return options.smtpUrl
    ? smtpMailer(options.smtpUrl, options.log)
    : outboxMailer(options.outboxDir, options.log);
}

/** Where the mailer writes without SMTP. */
export const outboxDir = (dataDir: string) => path.join(dataDir, 'outbox');
