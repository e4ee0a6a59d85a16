import {
  EMAIL_SECTION,
  LOGIN_PAGE_SCRIPT,
  SIGN_OUT_SECTION,
  WALLET_SECTION,
} from '../interaction/login-page.ts';
import { escapeHtml, jsonForScript, page } from '../interaction/page-chrome.ts';
import type { SiweChallenge } from '../interaction/siwe.ts';
import type { IssuanceDescription } from './issuance-service.ts';

/**
 * The page where a person adds credentials from an issuer: who issues (and whether the wallet
 * could verify it), which credentials, the transaction code when the offer asks for one, and
 * the receiving account when the identity has several. It drives the same JSON endpoint
 * headless clients use.
 */
const ISSUANCE_PAGE_JS = `
(function () {
'use strict';
const data = JSON.parse(document.getElementById('login-data').textContent);
const form = document.getElementById('issuance-form');
if (!form) return;
const alertBox = document.getElementById('login-error');
const statusBox = document.getElementById('login-status');
let busy = false;
/** The ticked credentials of an issuance started from the wallet, or null when there is no choice. */
function chosenCredentials() {
  const choices = form.querySelectorAll('input[name="credential"]');
  if (!choices.length) return null;
  return Array.from(choices).filter(function (c) { return c.checked; }).map(function (c) { return c.value; });
}
async function decide(decision, button) {
  if (busy) return;
  const chosen = decision === 'approve' ? chosenCredentials() : null;
  if (chosen && !chosen.length) {
    alertBox.textContent = 'Choose at least one credential to add.';
    statusBox.textContent = '';
    form.querySelector('input[name="credential"]').focus();
    return;
  }
  busy = true;
  button.setAttribute('aria-disabled', 'true');
  alertBox.textContent = '';
  statusBox.textContent = decision === 'approve' ? 'Asking the issuer for your credentials…' : 'Declining…';
  const body = { decision: decision };
  const txCode = document.getElementById('tx-code');
  if (decision === 'approve' && txCode) body.tx_code = txCode.value.trim();
  const account = form.querySelector('input[name="account"]:checked');
  if (decision === 'approve' && account) body.account = account.value;
  if (chosen) body.credential_configuration_ids = chosen;
  try {
    const response = await fetch('/interaction/' + encodeURIComponent(data.interactionId) + '/consent', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': data.csrfToken },
      body: JSON.stringify(body),
    });
    const answer = await response.json().catch(function () { return null; });
    if (!response.ok) throw new Error((answer && answer.error_description) || 'The answer failed (HTTP ' + response.status + ').');
    if (answer && typeof answer.redirect_to === 'string') {
      statusBox.textContent = 'Taking you to the issuer…';
      window.location.assign(answer.redirect_to);
      return;
    }
    form.hidden = true;
    if (decision === 'decline') statusBox.textContent = 'Declined: nothing was added. You can close this page.';
    else {
      const added = (answer && answer.received || []).length;
      const pending = (answer && answer.pending) || 0;
      statusBox.textContent = (added ? 'Added ' + added + ' credential' + (added === 1 ? '' : 's') + ' to your wallet. ' : '') +
        (pending ? pending + ' will arrive later, when the issuer has them ready. ' : '') + 'You can close this page.';
    }
  } catch (error) {
    statusBox.textContent = '';
    alertBox.textContent = error.message;
    if (txCode) txCode.focus();
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

const ISSUANCE_STYLE = `
.issuer { background: #f4f5f7; padding: 0.75rem; border-radius: 6px; overflow-wrap: anywhere; display: flex; gap: 0.75rem; align-items: center; }
.issuer img { max-width: 64px; max-height: 64px; }
.warning { color: #92400e; font-weight: 600; }
ul.offered { padding-left: 1.25rem; } ul.offered li { margin: 0.25rem 0; overflow-wrap: anywhere; }
fieldset { border: 1px solid #d0d4da; border-radius: 6px; margin: 1rem 0; padding: 0.75rem 1rem; min-width: 0; }
legend { font-weight: 600; padding: 0 0.25rem; }
.account { display: flex; gap: 0.5rem; align-items: center; } .account input { width: auto; }
.account label { font-weight: normal; margin: 0; }
.actions { display: flex; gap: 0.75rem; flex-wrap: wrap; }
.secondary { background: #fff; color: #1d4ed8; border: 2px solid #1d4ed8; }
`;

const FORMAT_NAMES: Record<string, string> = {
  'dc+sd-jwt': 'SD-JWT VC',
  mso_mdoc: 'ISO mdoc',
  jwt_vc_json: 'W3C VC (JWT)',
  ldp_vc: 'W3C VC (Data Integrity)',
};

function issuerSection(issuance: IssuanceDescription): string {
  const { issuer } = issuance;
  const logo = issuer.logo
    ? `<img src="${escapeHtml(issuer.logo.uri)}" alt="${escapeHtml(issuer.logo.alt_text ?? `${issuer.name} logo`)}">`
    : '';
  const trust = issuer.verified
    ? `<p>Verified: its metadata is signed by <strong>${escapeHtml(issuer.certificate?.subject ?? '')}</strong>, whose certificate chains to an issuer this wallet trusts.</p>`
    : '<p class="warning">Unverified issuer: the wallet could not confirm who runs this service. Add credentials only from issuers you expect.</p>';
  const what = issuance.wallet_initiated ? 'issues the credentials below' : 'offers you credentials';
  return `<div class="issuer">${logo}<div><p><strong>${escapeHtml(issuer.name)}</strong> ${what}.</p>
<p>Address: <code>${escapeHtml(issuer.identifier)}</code></p>${trust}</div></div>`;
}

const describeOffered = (c: IssuanceDescription['credentials'][number]) =>
  `<strong>${escapeHtml(c.name)}</strong> (${escapeHtml(FORMAT_NAMES[c.format] ?? c.format)})${c.description ? ` – ${escapeHtml(c.description)}` : ''}`;

/** Started from the wallet with several credentials: the person ticks the ones to add. */
const choosing = (issuance: IssuanceDescription) =>
  issuance.wallet_initiated && issuance.credentials.length > 1;

function offeredList(issuance: IssuanceDescription, loggedIn: boolean): string {
  if (choosing(issuance) && loggedIn) return '';
  const items = issuance.credentials.map((c) => `<li>${describeOffered(c)}</li>`).join('');
  return `<h2>${issuance.wallet_initiated ? 'Available' : 'Offered'}</h2><ul class="offered">${items}</ul>`;
}

function choiceField(issuance: IssuanceDescription): string {
  if (!choosing(issuance)) return '';
  const options = issuance.credentials
    .map(
      (
        c,
        i,
      ) => `<div class="account"><input type="checkbox" name="credential" id="credential-${i}" value="${escapeHtml(c.id)}">
<label for="credential-${i}">${describeOffered(c)}</label></div>`,
    )
    .join('\n');
  return `<fieldset><legend>Which credentials do you want?</legend>${options}</fieldset>`;
}

function txCodeField(issuance: IssuanceDescription): string {
  const tx = issuance.tx_code;
  if (!tx) return '';
  const hint =
    tx.description ?? 'The issuer sent you a code separately (for example by e-mail or text message).';
  const length = tx.length === null ? '' : ` maxlength="${tx.length}"`;
  const numeric = tx.input_mode === 'numeric' ? ' inputmode="numeric" pattern="[0-9]*"' : '';
  return `<label for="tx-code">Transaction code</label>
<p class="hint" id="tx-code-hint">${escapeHtml(hint)}${tx.length === null ? '' : ` (${tx.length} ${tx.input_mode === 'numeric' ? 'digits' : 'characters'})`}</p>
<input id="tx-code" name="tx_code" autocomplete="one-time-code" required aria-describedby="tx-code-hint"${length}${numeric}>`;
}

function accountField(issuance: IssuanceDescription): string {
  if (issuance.accounts.length < 2) return '';
  const options = issuance.accounts
    .map(
      (
        a,
        i,
      ) => `<div class="account"><input type="radio" name="account" id="account-${i}" value="${escapeHtml(a.account)}"${i === 0 ? ' checked' : ''}>
<label for="account-${i}">Your account at ${escapeHtml(a.tenant)}</label></div>`,
    )
    .join('\n');
  return `<fieldset><legend>Which account receives them?</legend>${options}</fieldset>`;
}

export interface IssuancePageInput {
  interactionId: string;
  csrfToken: string;
  siwe: SiweChallenge;
  cspNonce: string;
  loggedIn: boolean;
  issuance: IssuanceDescription;
}

/** The https origin of the issuer's logo, for the page's img-src. */
export const logoOrigins = (issuance: IssuanceDescription) =>
  issuance.issuer.logo ? [new URL(issuance.issuer.logo.uri).origin] : [];

export function renderIssuancePage(input: IssuancePageInput): string {
  const nonce = escapeHtml(input.cspNonce);
  const { issuance } = input;
  const data = { interactionId: input.interactionId, csrfToken: input.csrfToken, siwe: input.siwe };
  let main: string;
  if (!input.loggedIn) {
    main = `<p>Log in to your wallet to add these credentials.</p>${WALLET_SECTION}${EMAIL_SECTION}`;
  } else if (issuance.accounts.length === 0) {
    main = `<p role="alert">Your identity has no account in any service of this wallet yet, so there is nowhere to keep these credentials.</p>`;
  } else {
    main = `<form id="issuance-form">
${choiceField(issuance)}
${txCodeField(issuance)}
${accountField(issuance)}
<div class="actions"><button type="submit" id="approve-button">Add to my wallet</button><button type="button" id="decline-button" class="secondary">Decline</button></div>
</form>`;
  }
  const body = `<main>
<h1>Add credentials from ${escapeHtml(issuance.issuer.name)}?</h1>
<div id="login-error" class="error" role="alert" aria-live="assertive"></div>
<div id="login-status" class="status" role="status" aria-live="polite"></div>
<noscript><p class="error">This page needs JavaScript.</p></noscript>
${issuerSection(issuance)}
${offeredList(issuance, input.loggedIn && issuance.accounts.length > 0)}
${main}
${input.loggedIn ? SIGN_OUT_SECTION : ''}
</main>
<style nonce="${nonce}">${ISSUANCE_STYLE}</style>
<script type="application/json" id="login-data" nonce="${nonce}">${jsonForScript(data)}</script>
<script nonce="${nonce}">${LOGIN_PAGE_SCRIPT}</script>
<script nonce="${nonce}">${ISSUANCE_PAGE_JS}</script>`;
  return page({ title: `Add credentials – ${issuance.issuer.name}`, cspNonce: input.cspNonce, body });
}

/** The page after the issuer's authorization (the callback): what was added, or what failed. */
export function renderIssuanceResult(input: { received: number; pending: number; cspNonce: string }): string {
  const added = input.received
    ? `<p>Added ${input.received} credential${input.received === 1 ? '' : 's'} to your wallet.</p>`
    : '';
  const later = input.pending
    ? `<p>${input.pending} will arrive later, when the issuer has them ready.</p>`
    : '';
  const body = `<main>
<h1>Credentials added</h1>
<div role="status">${added}${later}</div>
<p>You can close this page.</p>
</main>`;
  return page({ title: 'Credentials added', cspNonce: input.cspNonce, body });
}
