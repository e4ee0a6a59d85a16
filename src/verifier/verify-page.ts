import { escapeHtml, jsonForScript, page } from '../interaction/page-chrome.ts';
import { qrCodeSvg } from '../interaction/qr-code.ts';

/** What the page says in each state; the script updates it as the state changes. */
export const STATUS_SENTENCES: Record<string, string> = {
  created: 'Scan the code with your wallet, or open your wallet on this device.',
  retrieved: 'Your wallet has the request. Choose what to share there.',
  verified: 'Done: your credential was verified. You can close this page.',
  rejected:
    'A credential could not be verified. You can share one again from your wallet until the request expires.',
  declined: 'A wallet declined to share. You can still share from your wallet until the request expires.',
  expired: 'This request has expired. Go back to the site and start again.',
};
/** Nothing changes after these; a declined or rejected request is answered again until it expires. */
const FINAL = ['verified', 'expired'];

const STYLE = `
.qr { display: block; width: 100%; max-width: 18rem; height: auto; margin: 1rem auto; }
.open { display: inline-block; min-height: 44px; box-sizing: border-box; padding: 0.7rem 1.2rem; background: #1d4ed8; color: #fff; border-radius: 4px; text-decoration: none; font-weight: 600; }
.state { font-size: 1.05rem; }
`;

const POLL_JS = `(function () {
'use strict';
var data = JSON.parse(document.getElementById('verify-data').textContent);
var state = document.getElementById('verify-state');
var ways = document.getElementById('verify-ways');
function show(status) {
  state.textContent = data.sentences[status] || status;
  if (data.final.indexOf(status) === -1) return false;
  if (ways && !ways.hidden) {
    // Hiding the link under the keyboard's focus would drop the focus on the body: it moves to the state.
    var hadFocus = ways.contains(document.activeElement);
    ways.hidden = true;
    if (hadFocus) state.focus();
  }
  return true;
}
function poll() {
  fetch(location.pathname, { headers: { accept: 'application/json' }, cache: 'no-store' })
    .then(function (r) { return r.ok ? r.json() : null; })
    .then(function (body) {
      if (body && show(body.status)) return;
      setTimeout(poll, 2000);
    })
    .catch(function () { setTimeout(poll, 4000); });
}
if (!show(data.status)) setTimeout(poll, 2000);
})();`;

/** The QR code of an openid4vp:// request (interaction/qr-code.ts); the log-in page's wallet method shows it too. */
export const requestQrSvg = (authorizationRequest: string) =>
  qrCodeSvg(authorizationRequest, 'QR code of the request, for a wallet on another device');

/**
 * GET /verify/{id}: the page a tenant sends people to. A QR code for a wallet on another device,
 * an "Open your wallet" link for this one, and the state as it changes, announced politely.
 * No claim is ever shown here: the tenant reads the result through the API.
 */
export async function renderVerifyPage(input: {
  cspNonce: string;
  verifier: string;
  status: string;
  authorizationRequest: string;
  dcApi: boolean;
}): Promise<string> {
  const nonce = escapeHtml(input.cspNonce);
  const qr = await requestQrSvg(input.authorizationRequest);
  const ways = input.dcApi
    ? ''
    : `<div id="verify-ways"${FINAL.includes(input.status) ? ' hidden' : ''}>
<h2>On another device</h2>
<p>Scan this code with your phone's wallet.</p>
${qr}
<h2>On this device</h2>
<p><a class="open" href="${escapeHtml(input.authorizationRequest)}">Open your wallet</a></p>
</div>`;
  const body = `<main>
<h1>${escapeHtml(input.verifier)} asks for a credential</h1>
<p id="verify-state" class="state" role="status" aria-live="polite" tabindex="-1">${escapeHtml(STATUS_SENTENCES[input.status] ?? input.status)}</p>
${ways}
</main>
<script type="application/json" id="verify-data" nonce="${nonce}">${jsonForScript({ status: input.status, sentences: STATUS_SENTENCES, final: FINAL })}</script>
<script nonce="${nonce}">${POLL_JS}</script>`;
  return page({
    title: `Share a credential – ${input.verifier}`,
    cspNonce: input.cspNonce,
    body,
    style: STYLE,
  });
}
