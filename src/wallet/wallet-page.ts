import type { HistoryEvent } from '../credentials/history-events.ts';
import { escapeHtml, jsonForScript, page } from '../interaction/page-chrome.ts';
import type { WalletAccount, WalletCredential, WalletView } from './wallet-service.ts';

/**
 * The person's wallet page: server-rendered, one nonced script for deletion and sign-out, which
 * drive the same endpoints a headless client could. Claims open with <details>, the deletion
 * asks in a modal <dialog>: both are keyboard-operable and announced by screen readers without
 * any script of ours.
 */

const WALLET_STYLE = `
main { max-width: 48rem; }
header.wallet { max-width: 48rem; margin: 1rem auto 0; padding: 0 1.5rem; display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 0.5rem; }
header.wallet p { margin: 0; font-weight: 600; }
header.wallet button { margin-top: 0; }
ul.credentials, ol.history { list-style: none; padding: 0; margin: 0; }
ul.credentials > li { border: 1px solid #d0d4da; border-radius: 8px; padding: 1rem; margin: 1rem 0; }
.credential-head { display: flex; gap: 0.75rem; align-items: flex-start; }
.credential-head img { width: 48px; height: 48px; object-fit: contain; flex: none; }
h3 { font-size: 1.05rem; margin: 0 0 0.25rem; overflow-wrap: anywhere; }
.meta { margin: 0.25rem 0; color: #374151; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 0 0.5rem; border-radius: 999px; font-size: 0.9rem; font-weight: 600; border: 1px solid currentColor; }
.badge-valid { color: #166534; }
.badge-revoked, .badge-suspended, .badge-expired { color: #b00020; }
.badge-unknown, .badge-not_yet_valid { color: #92400e; }
details { margin: 0.5rem 0; }
summary { cursor: pointer; min-height: 44px; display: flex; align-items: center; color: #1d4ed8; font-weight: 600; }
details.identifier summary { font-weight: normal; }
details.identifier code { display: block; margin: 0.25rem 0; overflow-wrap: anywhere; }
dl.claims { display: grid; grid-template-columns: minmax(8rem, max-content) 1fr; gap: 0.25rem 1rem; margin: 0.5rem 0; }
dl.claims dt { font-weight: 600; overflow-wrap: anywhere; }
dl.claims dd { margin: 0; overflow-wrap: anywhere; }
button.secondary { background: #fff; color: #1d4ed8; border: 1px solid #1d4ed8; }
button.danger { background: #b00020; }
ol.history li { border-top: 1px solid #d0d4da; padding: 0.75rem 0; overflow-wrap: anywhere; }
dialog { max-width: min(28rem, calc(100vw - 2rem)); border: 0; border-radius: 8px; padding: 1.5rem; }
dialog::backdrop { background: rgba(0, 0, 0, 0.45); }
ul.accounts { list-style: none; padding: 0; }
ul.accounts li { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 0.5rem; border-top: 1px solid #d0d4da; padding: 0.5rem 0; overflow-wrap: anywhere; }
a.download { display: inline-flex; align-items: center; min-height: 44px; font-weight: 600; }
@media (max-width: 30rem) { main { margin: 1rem 0.5rem; padding: 1rem; } dl.claims { grid-template-columns: 1fr; } }
`;

const WALLET_JS = `(function () {
'use strict';
const data = JSON.parse(document.getElementById('wallet-data').textContent);
const alertBox = document.getElementById('wallet-error');
const statusBox = document.getElementById('wallet-status');
const dialog = document.getElementById('delete-dialog');
const what = document.getElementById('delete-what');
let pending = null;

async function send(method, path) {
  let response;
  try {
    response = await fetch(path, {
      method: method,
      credentials: 'same-origin',
      headers: { accept: 'application/json', 'x-csrf-token': data.csrfToken },
    });
  } catch (error) {
    throw new Error('The server could not be reached; check your connection and try again.');
  }
  if (response.status === 204) return null;
  const answer = await response.json().catch(function () { return null; });
  if (!response.ok) throw new Error((answer && answer.error_description) || 'That did not work (HTTP ' + response.status + ').');
  return answer;
}

document.querySelectorAll('button[data-delete]').forEach(function (button) {
  button.addEventListener('click', function () {
    pending = button;
    what.textContent = button.getAttribute('data-name');
    alertBox.textContent = '';
    dialog.showModal();
    document.getElementById('cancel-delete').focus();
  });
});
document.getElementById('cancel-delete').addEventListener('click', function () { dialog.close(); });
document.getElementById('confirm-delete').addEventListener('click', async function () {
  const button = pending;
  dialog.close();
  if (!button) return;
  try {
    await send('DELETE', '/wallet/credentials/' + encodeURIComponent(button.getAttribute('data-delete')));
    const item = button.closest('li');
    const name = button.getAttribute('data-name');
    item.remove();
    // The count is of every credential held, not only of those this page shows (CREDENTIALS_SHOWN).
    const count = document.getElementById('credential-count');
    const left = Math.max(0, Number(count.textContent) - 1);
    count.textContent = String(left);
    if (left === 0) document.getElementById('no-credentials').hidden = false;
    statusBox.textContent = name + ' was deleted.';
    document.getElementById('credentials-heading').focus();
  } catch (error) {
    alertBox.textContent = error.message;
    button.focus();
  }
});
dialog.addEventListener('close', function () { if (pending && document.body.contains(pending)) pending.focus(); });

const eraseDialog = document.getElementById('erase-dialog');
let erasing = null;
document.querySelectorAll('button[data-erase]').forEach(function (button) {
  button.addEventListener('click', function () {
    erasing = button;
    document.getElementById('erase-what').textContent = button.getAttribute('data-name');
    document.getElementById('erase-count').textContent = button.getAttribute('data-credentials');
    alertBox.textContent = '';
    eraseDialog.showModal();
    document.getElementById('cancel-erase').focus();
  });
});
document.getElementById('cancel-erase').addEventListener('click', function () { eraseDialog.close(); });
eraseDialog.addEventListener('close', function () { if (erasing && document.body.contains(erasing)) erasing.focus(); });
document.getElementById('confirm-erase').addEventListener('click', async function () {
  const button = erasing;
  const confirmButton = this;
  if (!button) return;
  confirmButton.disabled = true;
  try {
    const answer = await send('DELETE', '/wallet/accounts/' + encodeURIComponent(button.getAttribute('data-erase')));
    erasing = null;
    eraseDialog.close();
    window.location.assign(answer && answer.redirect_to ? answer.redirect_to : '/wallet');
  } catch (error) {
    confirmButton.disabled = false;
    eraseDialog.close();
    alertBox.textContent = error.message;
  }
});

document.getElementById('sign-out-button').addEventListener('click', async function () {
  try {
    const answer = await send('POST', '/wallet/sign-out');
    window.location.assign(answer && answer.redirect_to ? answer.redirect_to : '/wallet');
  } catch (error) {
    alertBox.textContent = error.message;
  }
});
})();`;

const date = (iso: string | null) => (iso ? escapeHtml(iso.slice(0, 10)) : '');

const STATUS_TEXT: Record<string, string> = {
  valid: 'Valid',
  revoked: 'Revoked by its issuer',
  suspended: 'Suspended by its issuer',
  unknown: 'Status unknown',
};

function statusLine(credential: WalletCredential): string {
  const validity =
    credential.validity === 'expired'
      ? `<span class="badge badge-expired">Expired ${date(credential.validUntil)}</span>`
      : credential.validity === 'not_yet_valid'
        ? `<span class="badge badge-not_yet_valid">Valid from ${date(credential.validFrom)}</span>`
        : credential.validUntil
          ? `Valid until ${date(credential.validUntil)}`
          : 'No expiry date';
  const status = credential.status;
  if (!status) return `<p class="meta">${validity}</p>`;
  const why =
    status.state === 'unknown'
      ? ` <span>(${escapeHtml(status.reason ?? 'the status list could not be checked')}; it can still be shared, and the verifier checks the status itself)</span>`
      : '';
  return `<p class="meta">${validity} · <span class="badge badge-${status.state}">${STATUS_TEXT[status.state]}</span>${why}</p>`;
}

/**
 * The issuer's full identifier on request (a did:key runs to 140 characters): a <details>, which
 * keyboards and screen readers operate without script. None where the line shows it whole.
 */
function issuerIdentifier(credential: WalletCredential, key: string): string {
  const { identifier, label, shortIdentifier } = credential.issuer;
  if (identifier === label || identifier === shortIdentifier) return '';
  return `<details class="identifier"><summary aria-describedby="credential-${key}-title">Show the issuer's full identifier</summary><code>${escapeHtml(identifier)}</code></details>`;
}

function credentialItem(credential: WalletCredential, several: boolean): string {
  const key = String(credential.key);
  const title = credential.typeName;
  const issuer = credential.issuer;
  const logo = credential.issuer.logo
    ? `<img src="${escapeHtml(credential.issuer.logo.uri)}" alt="${escapeHtml(credential.issuer.logo.alt_text ?? `Logo of ${credential.issuer.name}`)}">`
    : '';
  const certificate = credential.issuer.certificate
    ? credential.issuer.certificate.trusted
      ? ' (certificate of a trusted issuer)'
      : ' (certificate not from a trusted issuer)'
    : '';
  const claims = credential.claims
    .map((c) => `<dt>${escapeHtml(c.label)}</dt><dd>${escapeHtml(c.value)}</dd>`)
    .join('');
  return `<li>
<article aria-labelledby="credential-${key}-title">
<div class="credential-head">${logo}<div>
<h3 id="credential-${key}-title">${escapeHtml(title)}</h3>
<p class="meta">Issued by ${escapeHtml(issuer.label)}${issuer.shortIdentifier ? ` (${escapeHtml(issuer.shortIdentifier)})` : ''}${certificate} · ${escapeHtml(credential.format)}</p>
${issuerIdentifier(credential, key)}
<p class="meta">Received from ${escapeHtml(credential.receivedFrom)} on ${date(credential.receivedAt)}${several ? ` · account at ${escapeHtml(credential.account.tenant)}` : ''}</p>
</div></div>
${statusLine(credential)}
<details><summary>Show its ${credential.claims.length} claims</summary><dl class="claims">${claims}</dl></details>
<button type="button" class="danger" data-delete="${key}" data-name="${escapeHtml(title)}" aria-describedby="credential-${key}-title">Delete…</button>
</article>
</li>`;
}

const pathText = (path: unknown[]) => path.map((p) => (p === null ? '*' : String(p))).join('.');

/** `typeName`: as the credential's card names it (wallet-service.ts, WalletHistoryEvent). */
function historyItem(event: HistoryEvent & { credential: { typeName: string } }): string {
  const when = `<time datetime="${escapeHtml(event.at)}">${escapeHtml(event.at.slice(0, 16).replace('T', ' '))} UTC</time>`;
  const credential = escapeHtml(event.credential.typeName);
  if (event.kind === 'arrival') {
    return `<li>${when}: <strong>${credential}</strong> arrived from ${escapeHtml(event.from.name)}${event.from.via === 'oid4vci' ? ' (OpenID4VCI)' : ''}.</li>`;
  }
  const verifier = event.verifier.certificate_subject
    ? `${escapeHtml(event.verifier.name)} (certificate: ${escapeHtml(event.verifier.certificate_subject)})`
    : escapeHtml(event.verifier.name);
  const claims = event.claims.length
    ? event.claims.map((c) => escapeHtml(pathText(c))).join(', ')
    : 'no claims';
  const outcome =
    event.outcome === 'delivered'
      ? 'delivered'
      : `<strong>not delivered</strong>${event.reason ? ` (${escapeHtml(event.reason)})` : ''}`;
  return `<li>${when}: shared ${claims} of <strong>${credential}</strong> with ${verifier}: ${outcome}.</li>`;
}

function accountItem(account: WalletAccount): string {
  const name = `your account at ${account.tenant}`;
  return `<li><span>Account at <strong>${escapeHtml(account.tenant)}</strong> · ${account.credentials} credential${account.credentials === 1 ? '' : 's'}</span>
<button type="button" class="danger" data-erase="${account.key}" data-name="${escapeHtml(name)}" data-credentials="${account.credentials}">Delete this account…</button></li>`;
}

export function renderWalletPage(input: {
  view: WalletView;
  accounts: WalletAccount[];
  csrfToken: string;
  cspNonce: string;
  host: string;
}): string {
  const nonce = escapeHtml(input.cspNonce);
  const { credentials, history } = input.view;
  const several = new Set(credentials.map((c) => c.account.did)).size > 1;
  const body = `<header class="wallet">
<p>Your wallet at ${escapeHtml(input.host)}</p>
<button type="button" id="sign-out-button" class="secondary">Sign out</button>
</header>
<main>
<h1>Your wallet</h1>
<div id="wallet-error" class="error" role="alert" aria-live="assertive"></div>
<div id="wallet-status" class="status" role="status" aria-live="polite"></div>
<noscript><p class="error">Deleting and signing out need JavaScript.</p></noscript>
<section aria-labelledby="credentials-heading">
<h2 id="credentials-heading" tabindex="-1">Credentials (<span id="credential-count">${input.view.credentialsHeld}</span>)</h2>
<p id="no-credentials"${credentials.length ? ' hidden' : ''}>Your wallet holds no credentials.</p>${
    input.view.credentialsHeld > credentials.length
      ? `\n<p id="credentials-more">This page shows your newest ${credentials.length} of ${input.view.credentialsHeld} credentials. The download below holds all of them.</p>`
      : ''
  }
<ul class="credentials">
${credentials.map((c) => credentialItem(c, several)).join('\n')}
</ul>
</section>
<section aria-labelledby="add-heading">
<h2 id="add-heading">Add a credential</h2>
<form method="get" action="/v1/oid4vci/start">
<label for="credential-issuer">Issuer address</label>
<p class="hint" id="credential-issuer-hint">The https address of the service that issues it, for example https://issuer.example. It shows which credentials it has, and you confirm with it who you are.</p>
<input id="credential-issuer" name="credential_issuer" type="url" inputmode="url" required pattern="https://.*" autocomplete="url" aria-describedby="credential-issuer-hint">
<button type="submit">Continue</button>
</form>
</section>
<section aria-labelledby="history-heading">
<h2 id="history-heading">History</h2>
${history.length ? `<ol class="history">${history.map(historyItem).join('\n')}</ol>` : '<p>Nothing has been shared or received yet.</p>'}
</section>
<section aria-labelledby="data-heading">
<h2 id="data-heading">Your data</h2>
<p><a class="download" href="/wallet/export" download>Download all your data (JSON)</a></p>
<p class="hint">Your profile, every credential as it was issued and your history, for every account below.</p>
<ul class="accounts">
${input.accounts.map(accountItem).join('\n')}
</ul>
</section>
</main>
<dialog id="delete-dialog" aria-labelledby="delete-heading" aria-describedby="delete-warning">
<h2 id="delete-heading">Delete <span id="delete-what"></span>?</h2>
<p id="delete-warning">It is removed from your wallet for good and can no longer be shared. Its history stays.</p>
<button type="button" id="confirm-delete" class="danger">Delete</button>
<button type="button" id="cancel-delete" class="secondary">Keep it</button>
</dialog>
<dialog id="erase-dialog" aria-labelledby="erase-heading" aria-describedby="erase-warning">
<h2 id="erase-heading">Delete <span id="erase-what"></span>?</h2>
<p id="erase-warning">Your profile, its <span id="erase-count"></span> credentials and its history are erased for good, its log-ins end and the issuers that sent credentials by OpenID4VCI are told. This cannot be undone. Download your data first if you want to keep a copy.</p>
<button type="button" id="confirm-erase" class="danger">Delete the account</button>
<button type="button" id="cancel-erase" class="secondary">Keep it</button>
</dialog>
<script type="application/json" id="wallet-data" nonce="${nonce}">${jsonForScript({ csrfToken: input.csrfToken })}</script>
<script nonce="${nonce}">${WALLET_JS}</script>`;
  return page({ title: 'Your wallet', cspNonce: input.cspNonce, body, style: WALLET_STYLE });
}

/** The https origins of the issuers' logos: the page's CSP lets it load images from them. */
export function logoOriginsOf(view: WalletView): string[] {
  const origins = new Set<string>();
  for (const credential of view.credentials) {
    if (credential.issuer.logo) origins.add(new URL(credential.issuer.logo.uri).origin);
  }
  return [...origins];
}
