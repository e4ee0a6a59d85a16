import { escapeHtml, jsonForScript, page } from '../interaction/page-chrome.ts';

/** RP-Initiated Logout's confirmation page (§6); the signed-out note is interaction/page-chrome.ts. */

const CONFIRM_JS = `(function () {
'use strict';
const data = JSON.parse(document.getElementById('logout-data').textContent);
const alertBox = document.getElementById('logout-error');
const statusBox = document.getElementById('logout-status');
async function decide(decision) {
  alertBox.textContent = '';
  let response;
  try {
    response = await fetch('/interaction/' + encodeURIComponent(data.interactionId) + '/logout', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': data.csrfToken },
      body: JSON.stringify({ decision: decision }),
    });
  } catch (error) {
    alertBox.textContent = 'The server could not be reached; check your connection and try again.';
    return;
  }
  const answer = await response.json().catch(function () { return null; });
  if (!response.ok) {
    alertBox.textContent = (answer && answer.error_description) || 'That did not work (HTTP ' + response.status + ').';
  } else if (answer && typeof answer.redirect_to === 'string') {
    window.location.assign(answer.redirect_to);
  } else {
    document.getElementById('logout-choice').hidden = true;
    statusBox.textContent = decision === 'sign_out' ? 'You are signed out. You can close this page.' : 'You are still signed in.';
  }
}
document.getElementById('sign-out-button').addEventListener('click', function () { decide('sign_out'); });
document.getElementById('stay-button').addEventListener('click', function () { decide('stay'); });
})();`;

export function renderLogoutConfirmPage(input: {
  interactionId: string;
  csrfToken: string;
  cspNonce: string;
  host: string;
  clientName: string | null;
}): string {
  const nonce = escapeHtml(input.cspNonce);
  const from = input.clientName ? ` ${escapeHtml(input.clientName)} asks you to sign out.` : '';
  const body = `<main>
<h1>Sign out of ${escapeHtml(input.host)}?</h1>
<p>${from} Signing out ends your session here for every app and your wallet page; the next log-in asks who you are again.</p>
<div id="logout-error" class="error" role="alert" aria-live="assertive"></div>
<div id="logout-status" class="status" role="status" aria-live="polite"></div>
<noscript><p class="error">This page needs JavaScript.</p></noscript>
<div id="logout-choice">
<button type="button" id="sign-out-button">Sign out</button>
<button type="button" id="stay-button">Stay signed in</button>
</div>
</main>
<script type="application/json" id="logout-data" nonce="${nonce}">${jsonForScript({
    interactionId: input.interactionId,
    csrfToken: input.csrfToken,
  })}</script>
<script nonce="${nonce}">${CONFIRM_JS}</script>`;
  return page({ title: `Sign out – ${input.host}`, cspNonce: input.cspNonce, body });
}
