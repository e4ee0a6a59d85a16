import type { ErrorDetail } from '../errors.ts';
import { escapeHtml, jsonForScript } from '../interaction/page-chrome.ts';
import { qrCodeSvg } from '../interaction/qr-code.ts';
import type { VerifierRequestSummary } from '../verifier/verifier-listing.ts';
import type { ActingAdmin } from './console-access.ts';
import { base, consolePage } from './console-pages.ts';
import { CREDENTIAL_FORMATS, fieldOfPath, type VerifierFormValues } from './console-verifier-form.ts';

/**
 * The console's verifier pages: the requests (paged), a form for a new one, and each request's
 * page — its QR code and link while a wallet may answer, then the result with every check.
 */

const STYLE = `
dd, p, li { overflow-wrap: anywhere; }
.qr { display: block; width: 100%; max-width: 18rem; height: auto; margin: 1rem 0; }
.link { overflow-wrap: anywhere; font-family: ui-monospace, monospace; font-size: 0.9rem; }
.open { display: inline-flex; align-items: center; min-height: 44px; font-weight: 600; }
.ok { color: #166534; font-weight: 600; }
.failed { color: #b00020; font-weight: 600; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f4f5f7; padding: 0.75rem; border-radius: 4px; }
summary { min-height: 44px; display: flex; align-items: center; cursor: pointer; font-weight: 600; }
`;

const page = (input: {
  admin: ActingAdmin;
  title: string;
  body: string;
  csrfToken: string;
  cspNonce: string;
}) =>
  consolePage({
    ...input,
    section: 'verifier',
    body: `<style nonce="${escapeHtml(input.cspNonce)}">${STYLE}</style>${input.body}`,
  });

const when = (iso: string) =>
  `<time datetime="${escapeHtml(iso)}">${escapeHtml(iso.replace('T', ' ').slice(0, 19))}</time>`;

const askedText = (request: VerifierRequestSummary) =>
  request.asked.map((a) => `${a.format}${a.types.length ? ` ${a.types.join(', ')}` : ''}`).join('; ');

/** What each state means to the person who made the request. */
const STATE: Record<string, string> = {
  created: 'Waiting for a wallet to open the request.',
  retrieved: 'A wallet has the request; waiting for its answer.',
  verified: 'Verified: every check passed.',
  rejected:
    'Rejected: a check failed, or the wallet answered with an error. A wallet may answer again until the request expires.',
  declined: 'Declined by the wallet. A wallet may answer again until the request expires.',
  expired: 'Expired without a verified answer.',
};

export function renderVerifierList(input: {
  admin: ActingAdmin;
  requests: VerifierRequestSummary[];
  nextCursor: string | null;
  canCreate: boolean;
  csrfToken: string;
  cspNonce: string;
}): string {
  const root = `${base(input.admin)}/verifier`;
  const action = input.canCreate
    ? `<p><a class="open" href="${root}/new">New request</a></p>`
    : `<p class="hint">Your role (${escapeHtml(input.admin.role)}) reads the results; an owner or an operator makes requests.</p>`;
  const rows = input.requests
    .map(
      (r) => `<tr><td data-label="Created (UTC)">${when(r.created_at)}</td>
<td data-label="Asked for">${escapeHtml(askedText(r))}${r.wallet_login ? ' <span class="hint">(wallet log-in)</span>' : ''}</td>
<td data-label="Status">${escapeHtml(r.status)}</td>
<td data-label="Request"><a href="${root}/requests/${escapeHtml(r.id)}">Open ${escapeHtml(r.id.slice(0, 8))}</a></td></tr>`,
    )
    .join('\n');
  const list = input.requests.length
    ? `<table><caption class="hint">Newest first.</caption>
<thead><tr><th scope="col">Created (UTC)</th><th scope="col">Asked for</th><th scope="col">Status</th><th scope="col">Request</th></tr></thead>
<tbody>${rows}</tbody></table>`
    : '<p>No presentation requests yet.</p>';
  const next = input.nextCursor
    ? `<p><a href="${root}?cursor=${encodeURIComponent(input.nextCursor)}">Older requests</a></p>`
    : '';
  return page({ ...input, title: 'Verifier', body: `${action}${list}${next}` });
}

const FIELD_LABELS: Record<string, string> = {
  format: 'Credential format',
  credential_type: 'Credential type',
  claims: 'Claims to ask for (optional)',
  trusted_issuers: 'Trusted issuers for this request (optional)',
  check_status: 'Check the status list (revocation)',
  expires_in: 'Expires after (seconds)',
  client_id_prefix: 'How wallets identify this verifier',
  callback_url: 'Callback URL (optional)',
};

export function renderVerifierForm(input: {
  admin: ActingAdmin;
  values?: VerifierFormValues | undefined;
  errors?: ErrorDetail[] | undefined;
  errorMessage?: string | undefined;
  csrfToken: string;
  cspNonce: string;
}): string {
  const v = input.values;
  const errors = input.errors ?? [];
  const errorOf = (name: string) =>
    errors
      .filter((e) => fieldOfPath(e.path) === name)
      .map((e) => e.message)
      .join('; ');
  const described = (name: string, hint: boolean) => {
    const ids = [hint ? `${name}-hint` : '', errorOf(name) ? `${name}-error` : ''].filter(Boolean).join(' ');
    return `${ids ? ` aria-describedby="${ids}"` : ''}${errorOf(name) ? ' aria-invalid="true"' : ''}`;
  };
  const around = (name: string, control: string, hint?: string) =>
    `<div><label for="${name}">${escapeHtml(FIELD_LABELS[name]!)}</label>${
      hint ? `<p class="hint" id="${name}-hint">${hint}</p>` : ''
    }${control}${errorOf(name) ? `<p class="error" id="${name}-error">${escapeHtml(errorOf(name))}</p>` : ''}</div>`;
  const value = (name: keyof VerifierFormValues, fallback = '') => escapeHtml(v?.[name] ?? fallback);
  const option = (name: keyof VerifierFormValues, current: string, label: string, fallback = '') =>
    `<option value="${escapeHtml(current)}"${(v?.[name] ?? fallback) === current ? ' selected' : ''}>${escapeHtml(label)}</option>`;
  const summary =
    input.errorMessage !== undefined
      ? `<div class="error-summary" role="alert"><p>${escapeHtml(input.errorMessage)}</p>${
          errors.length
            ? `<ul>${errors.map((e) => `<li>${escapeHtml(FIELD_LABELS[fieldOfPath(e.path)] ?? e.path)}: ${escapeHtml(e.message)}</li>`).join('')}</ul>`
            : ''
        }</div>`
      : '';
  const checked = v ? v.check_status === 'on' : true;
  const body = `<p>A request asks any wallet for one credential. It is made as <code>POST /v1/verifier/requests</code> makes it, with this client's verifier; its page then shows the QR code and link for a wallet, and the result once a wallet answers.</p>
${summary}
<form class="fields" method="post" action="${base(input.admin)}/verifier/requests">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
${around('format', `<select id="format" name="format" required${described('format', false)}>${CREDENTIAL_FORMATS.map(([f, label]) => option('format', f, label, 'dc+sd-jwt')).join('')}</select>`)}
${around('credential_type', `<input id="credential_type" name="credential_type" required maxlength="1000" value="${value('credential_type')}"${described('credential_type', true)}>`, 'SD-JWT VC: the vct, such as urn:eudi:pid:1. mdoc: the doctype, such as org.iso.18013.5.1.mDL. W3C: the full type IRIs the credential must all have, separated by spaces.')}
${around('claims', `<textarea id="claims" name="claims" rows="4"${described('claims', true)}>${value('claims')}</textarea>`, 'One claim a line, its path split by slashes: given_name, address/locality; mdoc: namespace/element, such as org.iso.18013.5.1/age_over_18; W3C: credentialSubject/given_name. * is every element of an array. None: the whole credential.')}
${around('trusted_issuers', `<textarea id="trusted_issuers" name="trusted_issuers" rows="3"${described('trusted_issuers', true)}>${value('trusted_issuers')}</textarea>`, 'PEM CA certificates or issuer DIDs (one a line), trusted for this request besides the service’s issuer trust anchors.')}
${around('expires_in', `<input id="expires_in" name="expires_in" type="number" inputmode="numeric" min="1" max="3600" value="${value('expires_in', '600')}"${described('expires_in', false)}>`)}
${around('client_id_prefix', `<select id="client_id_prefix" name="client_id_prefix"${described('client_id_prefix', true)}>${option('client_id_prefix', '', 'As the certificate allows (x509_san_dns, else x509_hash)')}${option('client_id_prefix', 'x509_san_dns', 'x509_san_dns')}${option('client_id_prefix', 'x509_hash', 'x509_hash')}${option('client_id_prefix', 'openid_federation', 'openid_federation')}</select>`, 'The client identifier prefix (OpenID4VP §5.9).')}
${around('callback_url', `<input id="callback_url" name="callback_url" type="url" maxlength="1000" value="${value('callback_url')}"${described('callback_url', true)}>`, 'Gets a signed event at each change of state.')}
<div class="check"><input id="check_status" name="check_status" type="checkbox"${checked ? ' checked' : ''}><label for="check_status">${escapeHtml(FIELD_LABELS['check_status']!)}</label></div>
<div class="actions"><button type="submit">Make the request</button></div>
</form>
<p><a href="${base(input.admin)}/verifier">All requests</a></p>`;
  return page({ ...input, title: 'New presentation request', body });
}

// biome-ignore lint/suspicious/noExplicitAny: the result is the API's JSON
type Json = any;

/** Claims as path → value rows, so that nested ones read as a list on a phone. */
function claimRows(claims: Json, prefix = ''): Array<[string, string]> {
  if (claims === null || typeof claims !== 'object') return [[prefix || '(value)', JSON.stringify(claims)]];
  const entries = Object.entries(claims as Record<string, unknown>);
  if (!entries.length) return [[prefix || '(empty)', JSON.stringify(claims)]];
  return entries.flatMap(([key, value]) => {
    const path = prefix ? `${prefix}/${key}` : key;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? claimRows(value, path)
      : [[path, typeof value === 'string' ? value : JSON.stringify(value)] as [string, string]];
  });
}

function credentialSection(query: string, index: number, entry: Json): string {
  const issuer = entry.issuer
    ? `${escapeHtml(entry.issuer.id)} — ${entry.issuer.trusted ? `trusted${entry.issuer.trusted_by ? ` (${escapeHtml(entry.issuer.trusted_by)})` : ''}` : 'not trusted'}`
    : 'unknown';
  const checks = (entry.checks as Array<{ name: string; ok: boolean; detail?: string }>)
    .map(
      (c) =>
        `<tr><td data-label="Check">${escapeHtml(c.name)}</td><td data-label="Outcome"><span class="${c.ok ? 'ok' : 'failed'}">${c.ok ? 'passed' : 'failed'}</span></td><td data-label="Detail">${escapeHtml(c.detail ?? '')}</td></tr>`,
    )
    .join('\n');
  const claims = entry.claims
    ? `<table><caption class="hint">Disclosed claims</caption><thead><tr><th scope="col">Claim</th><th scope="col">Value</th></tr></thead><tbody>${claimRows(
        entry.claims,
      )
        .map(
          ([k, value]) =>
            `<tr><td data-label="Claim">${escapeHtml(k)}</td><td data-label="Value">${escapeHtml(value)}</td></tr>`,
        )
        .join('')}</tbody></table>`
    : '<p>No claims are shown.</p>';
  const id = `q-${index}`;
  return `<section aria-labelledby="${id}"><h3 id="${id}">${escapeHtml(query)}: ${escapeHtml(entry.format)}</h3>
<dl><dt>Issuer</dt><dd>${issuer}</dd><dt>Status list</dt><dd>${escapeHtml(entry.status)}</dd></dl>
<table><caption class="hint">Every check</caption><thead><tr><th scope="col">Check</th><th scope="col">Outcome</th><th scope="col">Detail</th></tr></thead><tbody>${checks}</tbody></table>
${claims}</section>`;
}

function resultSection(result: Json, retention: number): string {
  const entries = Object.entries((result.credentials ?? {}) as Record<string, Json[]>).flatMap(
    ([query, list]) => list.map((entry) => [query, entry] as const),
  );
  const error = result.error
    ? `<p class="error-summary">${escapeHtml(result.error.error)}${result.error.error_description ? `: ${escapeHtml(result.error.error_description)}` : ''}</p>`
    : '';
  const deleted = result.claims_deleted
    ? '<p class="notice">The claims were deleted after their retention; the outcome and its checks stay.</p>'
    : '';
  return `<section aria-labelledby="result-heading"><h2 id="result-heading">Result</h2>
${error}${deleted}${entries.map(([query, entry], index) => credentialSection(query, index, entry)).join('\n')}
<p class="hint">Reading a result here counts as reading it through the API: its claims are deleted ${retention} seconds after the first read.</p>
<details><summary>The result as GET /v1/verifier/requests/{id} returns it</summary><pre>${escapeHtml(JSON.stringify(result, null, 2))}</pre></details>
</section>`;
}

const POLL_JS = `(function () {
'use strict';
var data = JSON.parse(document.getElementById('request-data').textContent);
function poll() {
  fetch(location.pathname, { headers: { accept: 'application/json' }, cache: 'no-store' })
    .then(function (r) { return r.ok ? r.json() : null; })
    .then(function (body) {
      if (body && body.status !== data.status) { location.reload(); return; }
      setTimeout(poll, 2000);
    })
    .catch(function () { setTimeout(poll, 4000); });
}
setTimeout(poll, 2000);
})();`;

const OPEN = ['created', 'retrieved'];

export async function renderVerifierRequest(input: {
  admin: ActingAdmin;
  request: VerifierRequestSummary & { authorization_request?: string; page: string };
  result?: Json;
  sameDeviceNote?: boolean;
  retention: number;
  csrfToken: string;
  cspNonce: string;
}): Promise<string> {
  const r = input.request;
  const open = OPEN.includes(r.status);
  const nonce = escapeHtml(input.cspNonce);
  const ways =
    open && r.authorization_request
      ? `<section aria-labelledby="wallet-heading"><h2 id="wallet-heading">For a wallet</h2>
<p>Scan the code with a wallet, or open the link on a device with one.</p>
${await qrCodeSvg(r.authorization_request, 'QR code of the request, for a wallet')}
<p><a class="open" href="${escapeHtml(r.authorization_request)}">Open in a wallet</a></p>
<p class="link">${escapeHtml(r.authorization_request)}</p>
<p>People can also be sent to <a href="${escapeHtml(r.page)}">the request’s page</a>.</p></section>`
      : '';
  const sameDevice = input.sameDeviceNote
    ? '<p>This is a same-device request: its result is read with the response_code of the wallet’s redirect, which only the app that made it has.</p>'
    : '';
  // Anything but a verified or expired request may still change: the page follows it by itself.
  const follows = r.status !== 'verified' && r.status !== 'expired';
  const body = `<p class="state" role="status" aria-live="polite">${escapeHtml(STATE[r.status] ?? r.status)}</p>
<dl><dt>Asked for</dt><dd>${escapeHtml(askedText(r))}</dd><dt>Created (UTC)</dt><dd>${when(r.created_at)}</dd><dt>Expires (UTC)</dt><dd>${when(r.expires_at)}</dd><dt>Request id</dt><dd>${escapeHtml(r.id)}</dd></dl>
${ways}${sameDevice}${input.result ? resultSection(input.result, input.retention) : ''}
${follows ? '<p><a href="">Check for an answer</a> <span class="hint">(the page also checks by itself)</span></p>' : ''}
<p><a href="${base(input.admin)}/verifier">All requests</a></p>
${
  follows
    ? `<script type="application/json" id="request-data" nonce="${nonce}">${jsonForScript({ status: r.status })}</script>
<script nonce="${nonce}">${POLL_JS}</script>`
    : ''
}`;
  return page({ ...input, title: 'Presentation request', body });
}
