import { issuerName } from '../formats/display-names.ts';
import {
  EMAIL_SECTION,
  LOGIN_PAGE_SCRIPT,
  SIGN_OUT_SECTION,
  WALLET_SECTION,
} from '../interaction/login-page.ts';
import { escapeHtml, jsonForScript, page, safeLink } from '../interaction/page-chrome.ts';
import type { SiweChallenge } from '../interaction/siwe.ts';
import type { describeConsent } from './presentation-service.ts';

type Consent = Awaited<ReturnType<typeof describeConsent>>;

/**
 * The consent page of the hosted wallet: who asks (and how sure we are of it), exactly which
 * claims, from which credential; the person picks a credential where several match, then
 * shares or declines. It drives the same JSON endpoint headless clients use.
 */
const CONSENT_PAGE_JS = `
(function () {
'use strict';
const data = JSON.parse(document.getElementById('login-data').textContent);
const form = document.getElementById('consent-form');
if (!form) return;
const alertBox = document.getElementById('login-error');
const statusBox = document.getElementById('login-status');
let busy = false;
async function decide(decision, button) {
  if (busy) return;
  busy = true;
  button.setAttribute('aria-disabled', 'true');
  alertBox.textContent = '';
  statusBox.textContent = decision === 'approve' ? 'Preparing your presentation…' : 'Telling the verifier…';
  const selections = {};
  for (const input of form.querySelectorAll('input[data-query]:checked')) {
    const query = input.getAttribute('data-query');
    if (input.type === 'checkbox') (selections[query] = selections[query] || []).push(input.value);
    else selections[query] = input.value;
  }
  try {
    const response = await fetch('/interaction/' + encodeURIComponent(data.interactionId) + '/consent', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': data.csrfToken },
      body: JSON.stringify({ decision: decision, selections: selections }),
    });
    const answer = await response.json().catch(function () { return null; });
    if (!response.ok) throw new Error((answer && answer.error_description) || 'The answer failed (HTTP ' + response.status + ').');
    if (answer && typeof answer.redirect_to === 'string') {
      statusBox.textContent = 'Done; taking you back…';
      window.location.assign(answer.redirect_to);
    } else {
      statusBox.textContent = decision === 'approve' ? 'Shared. You can close this page.' : 'Declined. You can close this page.';
      form.hidden = true;
    }
  } catch (error) {
    statusBox.textContent = '';
    alertBox.textContent = error.message;
  } finally {
    busy = false;
    button.removeAttribute('aria-disabled');
  }
}
form.addEventListener('submit', function (event) {
  event.preventDefault();
  decide('approve', document.getElementById('approve-button'));
});
document.getElementById('decline-button').addEventListener('click', function (event) {
  decide('decline', event.currentTarget);
});
})();
`;

// Issuer DIDs and claim paths are long unbroken words: they wrap anywhere, and the fieldset
// drops the min-content width browsers give it, so the page reflows to 320px (WCAG 1.4.10).
const CONSENT_STYLE = `
fieldset { border: 1px solid #d0d4da; border-radius: 6px; margin: 1rem 0; padding: 0.75rem 1rem; min-width: 0; }
legend { font-weight: 600; padding: 0 0.25rem; }
.candidate { display: flex; gap: 0.5rem; align-items: flex-start; margin: 0.5rem 0; }
.candidate input { width: auto; margin-top: 0.35rem; }
.candidate label { font-weight: normal; margin: 0; min-width: 0; overflow-wrap: anywhere; }
dl { margin: 0.25rem 0 0; display: grid; grid-template-columns: fit-content(50%) 1fr; gap: 0 0.75rem; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
.verifier { background: #f4f5f7; padding: 0.75rem; border-radius: 6px; overflow-wrap: anywhere; }
.warning { color: #92400e; font-weight: 600; }
.actions { display: flex; gap: 0.75rem; flex-wrap: wrap; }
.secondary { background: #fff; color: #1d4ed8; border: 2px solid #1d4ed8; }
details.identifiers summary { cursor: pointer; min-height: 44px; display: flex; align-items: center; color: #1d4ed8; }
details.identifiers dl { display: block; }
details.identifiers dd { margin: 0 0 0.5rem; }
details.identifiers code { overflow-wrap: anywhere; }
`;

const pathText = (path: unknown[]) => path.map((p) => (p === null ? '*' : String(p))).join(' › ');
const valueText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

const UNVERIFIED = '<p class="warning">Unverified: share only if you know who this is.</p>';

/** How the verifier was identified (DESIGN.md, Hosted wallet), and a warning for every unverified one. */
function identification(v: Consent['verifier']): string[] {
  const certificate = v.certificate;
  switch (v.prefix) {
    case 'pre-registered':
      return ['<p>A verifier registered with this wallet.</p>'];
    case 'x509_hash':
    case 'x509_san_dns': {
      const lines = [
        `<p>Identified by certificate${v.prefix === 'x509_san_dns' ? ` for <strong>${escapeHtml(v.name)}</strong>` : ''}<br>Subject: ${escapeHtml(certificate!.subject)}<br>
SHA-256 fingerprint: <code>${escapeHtml(certificate!.fingerprint)}</code></p>`,
      ];
      lines.push(
        certificate!.anchor
          ? `<p>Certified by ${escapeHtml(certificate!.anchor)}, an authority this wallet trusts.</p>`
          : '<p class="warning">Unverified: this certificate does not chain to an authority this wallet trusts. Share only if you know who this is.</p>',
      );
      return lines;
    }
    case 'verifier_attestation':
      return [
        `<p>Attested by <strong>${escapeHtml(v.attestation_issuer ?? '')}</strong>, an attestation issuer this wallet trusts.</p>`,
      ];
    case 'decentralized_identifier':
      return [
        `<p>Identified by its DID <code>${escapeHtml(v.did ?? v.name)}</code>.</p>`,
        '<p class="warning">Unverified: a DID proves only that the request was signed with its key, not who holds it. Share only if you know who this is.</p>',
      ];
    case 'redirect_uri':
      return [
        `<p class="warning">Unverified: this verifier is known only by its address, ${escapeHtml(v.client_id.slice('redirect_uri:'.length))}.</p>`,
      ];
    case 'openid_federation':
      return [
        `<p>A member of a federation this wallet trusts: <code>${escapeHtml(v.federation?.entity_id ?? '')}</code><br>
Trust anchor: <strong>${escapeHtml(v.federation?.trust_anchor ?? '')}</strong></p>`,
      ];
    default:
      return v.verified ? [] : [UNVERIFIED];
  }
}

function verifierSection(consent: Consent): string {
  const v = consent.verifier;
  const lines = [
    `<p><strong>${escapeHtml(v.name)}</strong> asks to see some of your credentials.</p>`,
    ...identification(v),
  ];
  return `<section aria-labelledby="verifier-heading" class="verifier"><h2 id="verifier-heading">Who asks</h2>${lines.join('\n')}</section>`;
}

/** Each transaction the person confirms by sharing: its type, then one labelled line per field as sent. */
function transactionSection(consent: Consent): string {
  if (consent.transaction_data.length === 0) return '';
  const items = consent.transaction_data
    .map((item, i) => {
      const fields = Object.entries(item.fields)
        .map(([name, value]) => `<dt>${escapeHtml(name)}</dt><dd>${escapeHtml(valueText(value))}</dd>`)
        .join('');
      return `<li id="transaction-${i}"><dl><dt>Type</dt><dd>${escapeHtml(item.type)}</dd>${fields}</dl></li>`;
    })
    .join('\n');
  return `<section aria-labelledby="transaction-heading" class="verifier"><h2 id="transaction-heading">What you confirm</h2>
<p>Sharing also signs your confirmation of ${consent.transaction_data.length === 1 ? 'this transaction' : 'these transactions'}, exactly as shown:</p>
<ol>${items}</ol></section>`;
}

/** A long identifier (a credential id may be a 43-character hash) cut for a label. */
const shortened = (id: string) => (id.length > 40 ? `${id.slice(0, 24)}…${id.slice(-8)}` : id);

type Candidate = Consent['requests'][number]['candidates'][number];

/** What tells candidates apart at a glance: the values that would be shared, else the credential's id. */
function candidateName(candidate: Candidate): string {
  const values = candidate.claims.flatMap((claim) => claim.values.map(valueText)).join(', ');
  const which = values
    ? values.length > 60
      ? `${values.slice(0, 59)}…`
      : values
    : shortened(candidate.credential_id);
  return `${candidate.type_name} from ${candidate.issuer_name} — ${which}`;
}

/** The issuer's name and, beside it, its identifier shortened (where the name is not already that). */
const issuerOf = (candidate: Candidate) =>
  issuerName({
    id: candidate.issuer,
    displayName: candidate.issuer_name,
    certificateSubject: candidate.issuer_certificate?.subject,
  });

const FORMAT_NAMES: Record<string, string> = {
  ldp_vc: 'W3C credential (bbs-2023)',
  'dc+sd-jwt': 'SD-JWT VC',
  mso_mdoc: 'mobile document (mdoc)',
  jwt_vc_json: 'W3C credential (JWT)',
};

/** Who issued the credential, and whether its certificate reaches an issuer authority this wallet trusts. */
function issuerDetails(candidate: Candidate): string {
  const { label, short } = issuerOf(candidate);
  const named = `${escapeHtml(label)}${short ? ` (${escapeHtml(short)})` : ''}`;
  const certificate = candidate.issuer_certificate;
  if (!certificate) return `<dt>Issuer</dt><dd>${named}</dd>`;
  const mark = certificate.trusted
    ? ''
    : ' <span class="warning">Unverified: its certificate does not chain to an issuer authority this wallet trusts.</span>';
  return `<dt>Issuer</dt><dd>${named}${mark}<br>Certificate: ${escapeHtml(certificate.subject)}<br>SHA-256 fingerprint: <code>${escapeHtml(certificate.fingerprint)}</code></dd>`;
}

/**
 * The candidates' issuers' full identifiers, on request: one <details> after the answer's
 * buttons, so that Tab still goes from the choice straight to Share (a did:key runs to 140
 * characters; the candidates show it shortened).
 */
function issuerIdentifiers(consent: Consent): string {
  const shown = new Map<string, string>();
  for (const candidate of consent.requests.flatMap((request) => request.candidates)) {
    const { label, short, full } = issuerOf(candidate);
    if (full !== label && full !== short) shown.set(full, label);
  }
  if (shown.size === 0) return '';
  const rows = [...shown]
    .map(([full, label]) => `<dt>${escapeHtml(label)}</dt><dd><code>${escapeHtml(full)}</code></dd>`)
    .join('');
  const whose = shown.size === 1 ? "issuer's full identifier" : "issuers' full identifiers";
  return `<details class="identifiers"><summary>Show the ${whose}</summary><dl>${rows}</dl></details>`;
}

/** One line per disclosed claim; an mdoc element the verifier means to keep says so. */
function claimLines(candidate: Candidate): string {
  const lines = candidate.claims
    .map((claim) => {
      const kept = claim.intent_to_retain
        ? ' <span class="warning">(the verifier will keep this)</span>'
        : '';
      return `<dt>${escapeHtml(pathText(claim.path))}</dt><dd>${escapeHtml(claim.values.map(valueText).join(', '))}${kept}</dd>`;
    })
    .join('');
  if (candidate.discloses_everything) {
    return `<dt>Shared</dt><dd class="warning">The whole credential: this format (${escapeHtml(FORMAT_NAMES[candidate.format] ?? candidate.format)}) cannot disclose only some claims.</dd>${lines}`;
  }
  return lines || '<dt>Shared</dt><dd>only what the issuer always discloses</dd>';
}

function requestFieldset(request: Consent['requests'][number]): string {
  const legend = `<legend>Asked for: ${escapeHtml(request.id)}</legend>`;
  const asked = request.claims.length
    ? `<p>Asks for: ${request.claims.map((c) => escapeHtml(pathText(c))).join(', ')}.</p>`
    : '<p>Asks for the credential itself, no particular claim.</p>';
  if (request.candidates.length === 0) {
    return `<fieldset>${legend}${asked}<p>None of your credentials matches.</p></fieldset>`;
  }
  const type = request.multiple ? 'checkbox' : 'radio';
  const options = request.candidates
    .map((candidate, i) => {
      const inputId = `choice-${escapeHtml(request.id)}-${i}`;
      // The label names the choice briefly; what would be shared is described apart, so that a
      // screen reader reads the name first and the details on request (and no list sits in a label).
      return `<div class="candidate">
<input type="${type}" id="${inputId}" name="q-${escapeHtml(request.id)}" value="${escapeHtml(candidate.credential_id)}" data-query="${escapeHtml(request.id)}" aria-describedby="${inputId}-details"${i === 0 ? ' checked' : ''}>
<div><label for="${inputId}">${escapeHtml(candidateName(candidate))}</label>
<dl id="${inputId}-details">${claimLines(candidate)}<dt>Format</dt><dd>${escapeHtml(FORMAT_NAMES[candidate.format] ?? candidate.format)}</dd>${issuerDetails(candidate)}</dl></div>
</div>`;
    })
    .join('\n');
  return `<fieldset>${legend}${asked}${options}</fieldset>`;
}

export interface ConsentPageInput {
  interactionId: string;
  csrfToken: string;
  siwe: SiweChallenge;
  cspNonce: string;
  loggedIn: boolean;
  consent: Consent;
  privacyLink?: string | null | undefined;
}

export function renderConsentPage(input: ConsentPageInput): string {
  const nonce = escapeHtml(input.cspNonce);
  const { consent } = input;
  const data = { interactionId: input.interactionId, csrfToken: input.csrfToken, siwe: input.siwe };
  let main: string;
  if (!input.loggedIn) {
    main = `<p>Log in to your wallet to see which of your credentials match.</p>${WALLET_SECTION}${EMAIL_SECTION}`;
  } else {
    const requests = consent.requests.map(requestFieldset).join('\n');
    const share = consent.satisfiable
      ? `<button type="submit" id="approve-button">${consent.transaction_data.length ? 'Confirm and share' : 'Share'}</button>`
      : `<p>You cannot answer this request: ${escapeHtml(consent.unsatisfiable_reason ?? 'no credential matches')}.</p>`;
    main = `<form id="consent-form">
<h2>What will be shared</h2>
<p>Only the claims listed are disclosed, with the credential's issuer and validity, unless a credential says it is shared whole.</p>
${requests}
<div class="actions">${share}<button type="button" id="decline-button" class="secondary">${consent.satisfiable ? 'Decline' : 'Tell the verifier'}</button></div>
${issuerIdentifiers(consent)}
</form>`;
  }
  const privacy = safeLink(input.privacyLink ?? undefined);
  const body = `<main>
<h1>Share credentials with ${escapeHtml(consent.verifier.name)}?</h1>
<div id="login-error" class="error" role="alert" aria-live="assertive"></div>
<div id="login-status" class="status" role="status" aria-live="polite"></div>
<noscript><p class="error">This page needs JavaScript.</p></noscript>
${verifierSection(consent)}
${transactionSection(consent)}
${main}
${input.loggedIn ? SIGN_OUT_SECTION : ''}
</main>
${privacy ? `<footer><a href="${escapeHtml(privacy)}">Privacy policy of ${escapeHtml(consent.verifier.name)}</a></footer>` : ''}
<style nonce="${nonce}">${CONSENT_STYLE}</style>
<script type="application/json" id="login-data" nonce="${nonce}">${jsonForScript(data)}</script>
<script nonce="${nonce}">${LOGIN_PAGE_SCRIPT}</script>
<script nonce="${nonce}">${CONSENT_PAGE_JS}</script>`;
  return page({ title: `Share credentials – ${consent.verifier.name}`, cspNonce: input.cspNonce, body });
}
