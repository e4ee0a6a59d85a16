import { escapeHtml } from '../http/html.ts';
import type { MailMessage } from './mailer.ts';

/**
 * The e-mail that carries a log-in code. Plain text first, with a simple HTML twin: no images,
 * no links and no remote content, so nothing tracks whether or where it was opened. The code
 * is not in the subject, where lock screens and notifications would show it.
 */
export function loginCodeEmail(input: {
  code: string;
  tenantName: string;
  /** The tenant's sender address, bare (login@shop.example); the tenant name becomes its display name. */
  from: string;
  to: string;
  /** How long the code works, in minutes (oidc/one-time-code.ts decides). */
  validMinutes: number;
}): MailMessage {
  const VALID_MINUTES = input.validMinutes;
  // A tenant name is one line of text; control characters have no place in a subject or name.
  const tenant = input.tenantName.replace(/[\p{Cc}\s]+/gu, ' ').trim();
  const text = [
    `Your code to log in to ${tenant} is:`,
    '',
    `    ${input.code}`,
    '',
    `It is valid for ${VALID_MINUTES} minutes and works once.`,
    '',
    'If you did not try to log in, you can ignore this e-mail: nobody can log in without the code.',
    'Never tell this code to anyone who asks for it.',
    '',
  ].join('\n');
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Your log-in code</title></head>
<body style="font-family: sans-serif; line-height: 1.5; color: #1a1a1a;">
<p>Your code to log in to ${escapeHtml(tenant)} is:</p>
<p style="font-family: monospace; font-size: 28px; font-weight: bold; letter-spacing: 4px;">${escapeHtml(input.code)}</p>
<p>It is valid for ${VALID_MINUTES} minutes and works once.</p>
<p>If you did not try to log in, you can ignore this e-mail: nobody can log in without the code.
Never tell this code to anyone who asks for it.</p>
</body>
</html>
`;
  return {
    from: { name: tenant, address: input.from },
    to: input.to,
    subject: `Your log-in code for ${tenant}`,
    text,
    html,
  };
}
