import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { escapeHtml } from '../http/html.ts';

export { escapeHtml };

/**
 * The chrome every person-facing page shares (log-in, consent, offer, sign-out, the wallet page):
 * the layout and styles, the nonce-based Content-Security-Policy, the error page and safe links.
 * Pages are plain HTML with inline nonced scripts, no build step and no third-party assets.
 */

/**
 * JSON that is safe inside a <script> element: "</script>" or "<!--" in a value cannot end the
 * element early, and U+2028/2029 cannot break older parsers.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Marks a reply as one of these pages (HTML, their CSP) and returns the nonce its scripts carry. */
export function startPage(reply: FastifyReply, imageOrigins: string[] = []): string {
  const cspNonce = randomBytes(16).toString('base64');
  reply.type('text/html; charset=utf-8').header('content-security-policy', pageCsp(cspNonce, imageOrigins));
  return cspNonce;
}

/**
 * The Content-Security-Policy to send with these pages: only their own nonced script and style,
 * and images from this origin plus the https origins given (an issuer's logo).
 */
export function pageCsp(cspNonce: string, imageOrigins: string[] = []): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${cspNonce}'`,
    `style-src 'nonce-${cspNonce}'`,
    "connect-src 'self'",
    `img-src ${["'self'", ...imageOrigins].join(' ')}`,
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

// The alert and status regions stay in the accessibility tree while empty (never display: none),
// so that screen readers announce text put into them later.
export const STYLE = `
:root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; line-height: 1.5; }
body { margin: 0; background: #f4f5f7; color: #1a1a1a; }
main { max-width: 28rem; margin: 2rem auto; padding: 1.5rem; background: #fff; border-radius: 8px; }
h1 { font-size: 1.5rem; margin-top: 0; }
h2 { font-size: 1.1rem; margin-bottom: 0.5rem; }
section + section { border-top: 1px solid #d0d4da; margin-top: 1.5rem; }
label { display: block; font-weight: 600; margin: 0.5rem 0 0.25rem; }
input { box-sizing: border-box; width: 100%; font: inherit; padding: 0.6rem; border: 1px solid #6b7280; border-radius: 4px; }
button { font: inherit; min-height: 44px; padding: 0.5rem 1rem; margin-top: 0.75rem; border: 0; border-radius: 4px; background: #1d4ed8; color: #fff; cursor: pointer; }
button[aria-disabled="true"] { opacity: 0.6; cursor: progress; }
:focus-visible { outline: 3px solid #b45309; outline-offset: 2px; }
[hidden] { display: none !important; }
.error { color: #b00020; font-weight: 600; }
.error:not(:empty), .status:not(:empty) { margin: 1rem 0; }
.hint { color: #4b5563; font-size: 0.95rem; margin: 0.25rem 0; }
footer { max-width: 28rem; margin: 0 auto 2rem; padding: 0 1.5rem; font-size: 0.9rem; }
a { color: #1d4ed8; }
`;

/** Only absolute http(s) links are rendered; anything else (javascript:, data:) is dropped. */
export function safeLink(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

export function page(input: {
  title: string;
  cspNonce?: string | undefined;
  body: string;
  /** Rules of this page on top of the shared ones. */
  style?: string;
}): string {
  const style = input.cspNonce
    ? `<style nonce="${escapeHtml(input.cspNonce)}">${STYLE}${input.style ?? ''}</style>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${escapeHtml(input.title)}</title>
${style}
</head>
<body>
${input.body}
</body>
</html>
`;
}

/** A page for errors that must not go back to the client (unknown client, unregistered redirect URI). */
export function renderErrorPage(input: {
  title: string;
  message: string;
  /** The OAuth error code, for the developers of the app or verifier. */
  code?: string | undefined;
  cspNonce?: string | undefined;
}): string {
  const code = input.code ? `<p>Error code: <code>${escapeHtml(input.code)}</code></p>` : '';
  const body = `<main>
<h1>${escapeHtml(input.title)}</h1>
<p role="alert">${escapeHtml(input.message)}</p>
${code}
<p>Go back to the app you came from and try again. If this keeps happening, tell the app's support team.</p>
</main>`;
  return page({ title: input.title, cspNonce: input.cspNonce, body });
}

/** The page after a person erased the account their session belonged to (the wallet page). */
export function renderAccountDeletedPage(input: { cspNonce: string; host: string }): string {
  const body = `<main>
<h1>Your account was deleted</h1>
<p>Your account at ${escapeHtml(input.host)}, its credentials and its history are erased, and you are signed out. You can close this page.</p>
<p><a href="/wallet">Open your wallet</a></p>
</main>`;
  return page({ title: 'Account deleted', cspNonce: input.cspNonce, body });
}

/** The page after a sign-out (RP-Initiated Logout, the wallet page, an interaction). */
export function renderSignedOutPage(input: { cspNonce: string; host: string }): string {
  const body = `<main>
<h1>You are signed out</h1>
<p>Your session at ${escapeHtml(input.host)} has ended. You can close this page.</p>
<p><a href="/wallet">Open your wallet</a></p>
</main>`;
  return page({ title: 'Signed out', cspNonce: input.cspNonce, body });
}
