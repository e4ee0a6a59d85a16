import type { InteractionView } from './interaction-kinds.ts';
import { escapeHtml, jsonForScript, page, safeLink } from './page-chrome.ts';
import type { SiweChallenge } from './siwe.ts';

/**
 * The server-rendered pages of the log-in interaction: plain HTML with one inline script, no
 * build step and no third-party assets. The page drives the same JSON endpoints that headless
 * clients use (/interaction/{id}/login/…), so there is one log-in protocol, not two.
 */

/**
 * Browser JavaScript that builds the EIP-4361 message exactly as viem's createSiweMessage does,
 * including the EIP-55 checksum of the address (wallets return lower-case addresses, and
 * EIP-4361 requires the checksummed form), for which it carries a small Keccak-256. Kept as a
 * string of its own so that tests can run it in Node against viem.
 */
export const SIWE_MESSAGE_JS = String.raw`
const KECCAK_RC = ['1', '8082', '800000000000808a', '8000000080008000', '808b', '80000001',
  '8000000080008081', '8000000000008009', '8a', '88', '80008009', '8000000a', '8000808b',
  '800000000000008b', '8000000000008089', '8000000000008003', '8000000000008002',
  '8000000000000080', '800a', '800000008000000a', '8000000080008081', '8000000000008080',
  '80000001', '8000000080008008'].map(function (h) {
  return [h.length > 8 ? parseInt(h.slice(0, -8), 16) : 0, parseInt(h.slice(-8), 16)];
});
const KECCAK_ROTC = [1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14, 27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44];
const KECCAK_PILN = [10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4, 15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1];

// Keccak-f[1600] on 25 lanes of two 32-bit words each (low word first), as browsers lack 64-bit ints.
function keccakF1600(s) {
  const c = new Uint32Array(10);
  for (let round = 0; round < 24; round++) {
    for (let x = 0; x < 10; x++) c[x] = s[x] ^ s[x + 10] ^ s[x + 20] ^ s[x + 30] ^ s[x + 40];
    for (let x = 0; x < 5; x++) {
      const n = ((x + 1) % 5) * 2;
      const p = ((x + 4) % 5) * 2;
      const lo = c[p] ^ ((c[n] << 1) | (c[n + 1] >>> 31));
      const hi = c[p + 1] ^ ((c[n + 1] << 1) | (c[n] >>> 31));
      for (let y = 0; y < 50; y += 10) {
        s[y + 2 * x] ^= lo;
        s[y + 2 * x + 1] ^= hi;
      }
    }
    let lo = s[2];
    let hi = s[3];
    for (let i = 0; i < 24; i++) {
      const j = KECCAK_PILN[i] * 2;
      const r = KECCAK_ROTC[i];
      const tlo = s[j];
      const thi = s[j + 1];
      if (r < 32) {
        s[j] = (lo << r) | (hi >>> (32 - r));
        s[j + 1] = (hi << r) | (lo >>> (32 - r));
      } else {
        s[j] = (hi << (r - 32)) | (lo >>> (64 - r));
        s[j + 1] = (lo << (r - 32)) | (hi >>> (64 - r));
      }
      lo = tlo;
      hi = thi;
    }
    for (let y = 0; y < 50; y += 10) {
      for (let x = 0; x < 10; x++) c[x] = s[y + x];
      for (let x = 0; x < 5; x++) {
        const a = ((x + 1) % 5) * 2;
        const b = ((x + 2) % 5) * 2;
        s[y + 2 * x] = c[2 * x] ^ (~c[a] & c[b]);
        s[y + 2 * x + 1] = c[2 * x + 1] ^ (~c[a + 1] & c[b + 1]);
      }
    }
    s[0] ^= KECCAK_RC[round][1];
    s[1] ^= KECCAK_RC[round][0];
  }
}

// Keccak-256 as Ethereum uses it (original padding 0x01, not SHA-3's 0x06); hex without 0x.
function keccak256Hex(bytes) {
  const rate = 136;
  const s = new Uint32Array(50);
  const padded = new Uint8Array((Math.floor(bytes.length / rate) + 1) * rate);
  padded.set(bytes);
  padded[bytes.length] ^= 0x01;
  padded[padded.length - 1] ^= 0x80;
  for (let offset = 0; offset < padded.length; offset += rate) {
    for (let i = 0; i < rate / 4; i++) {
      const k = offset + 4 * i;
      s[i] ^= padded[k] | (padded[k + 1] << 8) | (padded[k + 2] << 16) | (padded[k + 3] << 24);
    }
    keccakF1600(s);
  }
  let hex = '';
  for (let i = 0; i < 32; i++) hex += ((s[i >> 2] >>> (8 * (i & 3))) & 255).toString(16).padStart(2, '0');
  return hex;
}

// EIP-55: a letter is upper case where the Keccak-256 of the lower-case hex has a nibble >= 8.
function toChecksumAddress(address) {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new Error('The wallet returned an address that is not valid.');
  const lower = address.slice(2).toLowerCase();
  const hash = keccak256Hex(new TextEncoder().encode(lower));
  let out = '0x';
  for (let i = 0; i < 40; i++) out += parseInt(hash[i], 16) >= 8 ? lower[i].toUpperCase() : lower[i];
  return out;
}

// The EIP-4361 text, field for field as the server builds it (viem's createSiweMessage).
function buildSiweMessage(f) {
  return f.domain + ' wants you to sign in with your Ethereum account:\n' +
    toChecksumAddress(f.address) + '\n\n' +
    (f.statement ? f.statement + '\n' : '') +
    '\nURI: ' + f.uri +
    '\nVersion: 1' +
    '\nChain ID: ' + f.chainId +
    '\nNonce: ' + f.nonce +
    '\nIssued At: ' + f.issuedAt +
    (f.expirationTime ? '\nExpiration Time: ' + f.expirationTime : '');
}
`;

/** The page's behaviour; reads its data from the #login-data JSON block. */
const LOGIN_PAGE_JS = `
const data = JSON.parse(document.getElementById('login-data').textContent);
const base = '/interaction/' + encodeURIComponent(data.interactionId);
const alertBox = document.getElementById('login-error');
const statusBox = document.getElementById('login-status');

function showError(text) {
  statusBox.textContent = '';
  alertBox.textContent = text;
}
function showStatus(text) {
  alertBox.textContent = '';
  statusBox.textContent = text;
}
function describe(error) {
  if (error && error.code === 4001) return 'You declined the request in your wallet.';
  if (error && typeof error.message === 'string' && error.message) return error.message;
  return 'Something went wrong; please try again.';
}

async function post(path, body) {
  let response;
  try {
    response = await fetch(base + path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': data.csrfToken },
      body: JSON.stringify(body),
    });
  } catch (error) {
    throw new Error('The server could not be reached; check your connection and try again.');
  }
  let answer = null;
  try {
    answer = await response.json();
  } catch (error) {
    answer = null;
  }
  if (!response.ok) {
    throw new Error((answer && answer.error_description) || 'Logging in failed (HTTP ' + response.status + ').');
  }
  return { status: response.status, body: answer };
}

// A finished interaction names where to go next; "consent" means the same page now shows the
// consent, "done" that the verifier was answered and asked for nothing more.
function follow(answer) {
  if (answer && typeof answer.redirect_to === 'string') {
    showStatus('Done; taking you back…');
    window.location.assign(answer.redirect_to);
  } else if (answer && answer.next === 'consent') {
    window.location.reload();
  } else if (answer && answer.next === 'done') {
    showStatus('Done. You can close this page.');
  } else {
    showError('The server gave an answer this page does not understand; please try again.');
  }
}

// One request at a time; buttons stay focusable (disabling them would drop keyboard focus).
let busy = false;
async function exclusively(button, task) {
  if (busy) return;
  busy = true;
  button.setAttribute('aria-disabled', 'true');
  try {
    await task();
  } catch (error) {
    showError(describe(error));
  } finally {
    busy = false;
    button.removeAttribute('aria-disabled');
  }
}

function utf8Hex(text) {
  let hex = '0x';
  for (const byte of new TextEncoder().encode(text)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

const walletButton = document.getElementById('wallet-button');
if (walletButton) {
  walletButton.addEventListener('click', function () {
    exclusively(walletButton, async function () {
      const provider = window.ethereum;
      if (!provider || typeof provider.request !== 'function') {
        showError('No Ethereum wallet was found in this browser. Install a wallet extension, or log in another way.');
        return;
      }
      showStatus('Waiting for your wallet…');
      const accounts = await provider.request({ method: 'eth_requestAccounts' });
      if (!Array.isArray(accounts) || typeof accounts[0] !== 'string') throw new Error('The wallet shared no account.');
      const chainId = parseInt(await provider.request({ method: 'eth_chainId' }), 16);
      const message = buildSiweMessage({
        domain: data.siwe.domain,
        address: accounts[0],
        statement: data.siwe.statement,
        uri: data.siwe.uri,
        chainId: chainId,
        nonce: data.siwe.nonce,
        issuedAt: data.siwe.issued_at,
        expirationTime: data.siwe.expiration_time,
      });
      showStatus('Please sign the message in your wallet. Signing is free and sends no transaction.');
      const signature = await provider.request({ method: 'personal_sign', params: [utf8Hex(message), accounts[0]] });
      showStatus('Checking the signature…');
      follow((await post('/login/wallet', { message: message, signature: signature })).body);
    });
  });
}

// Consent and offer pages: sign out to log in as someone else; the page then asks again.
const signOutButton = document.getElementById('interaction-sign-out');
if (signOutButton) {
  signOutButton.addEventListener('click', function () {
    exclusively(signOutButton, async function () {
      showStatus('Signing out…');
      follow((await post('/sign-out', {})).body);
    });
  });
}

// A credential from a digital wallet: the server makes a request for the app's verifier; the
// page shows its QR code and an "Open your wallet" link, then asks every 2 s where it stands.
const credentialButton = document.getElementById('credential-button');
if (credentialButton) {
  const ways = document.getElementById('credential-ways');
  const qrBox = document.getElementById('credential-qr');
  const openLink = document.getElementById('credential-open');
  const waiting = {
    created: 'Scan the code with the wallet on your phone, or open your wallet on this device.',
    retrieved: 'Your wallet has the request. Choose what to share there.',
    // Anyone who saw the code can answer "no": the request stays open for the real wallet.
    declined: 'A wallet declined to share. To log in, share from your wallet, or log in another way.',
    rejected: 'A credential could not be verified. Share one from your wallet again, or log in another way.',
  };
  let timer = null;
  let said = '';
  // Announced once per change, not at every poll.
  function say(text) {
    if (text !== said) showStatus(text);
    said = text;
  }
  function stop() {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  }
  // The SVG is parsed as SVG, never as HTML, and only an <svg> root is shown.
  function showQr(text) {
    const parsed = new DOMParser().parseFromString(String(text || ''), 'image/svg+xml').documentElement;
    if (parsed && parsed.nodeName === 'svg') qrBox.replaceChildren(document.importNode(parsed, true));
  }
  async function check() {
    timer = null;
    let answer;
    try {
      answer = await post('/login/credential/check', {});
    } catch (error) {
      ways.hidden = true;
      said = '';
      credentialButton.textContent = 'Try again with a wallet';
      showError(describe(error));
      return;
    }
    if (answer.status === 202) {
      say(waiting[answer.body && answer.body.status] || waiting.created);
      timer = setTimeout(check, 2000);
      return;
    }
    ways.hidden = true;
    follow(answer.body);
  }
  credentialButton.addEventListener('click', function () {
    exclusively(credentialButton, async function () {
      stop();
      showStatus('Preparing a request for your wallet…');
      const started = (await post('/login/credential', {})).body;
      showQr(started.qr_svg);
      openLink.setAttribute('href', started.authorization_request);
      ways.hidden = false;
      said = '';
      say(waiting.created);
      timer = setTimeout(check, 2000);
    });
  });
}

const emailForm = document.getElementById('email-form');
const codeForm = document.getElementById('code-form');
if (emailForm && codeForm) {
  const emailInput = document.getElementById('email');
  const codeInput = document.getElementById('code');
  const emailButton = document.getElementById('email-button');
  const codeButton = document.getElementById('code-button');
  emailForm.addEventListener('submit', function (event) {
    event.preventDefault();
    exclusively(emailButton, async function () {
      const email = emailInput.value.trim();
      showStatus('Sending a code…');
      const answer = await post('/login/email', { email: email });
      if (answer.status !== 202) return follow(answer.body);
      codeForm.hidden = false;
      document.getElementById('code-address').textContent = email;
      showStatus('We sent a code to ' + email + '. Enter it below.');
      codeInput.focus();
    });
  });
  codeForm.addEventListener('submit', function (event) {
    event.preventDefault();
    exclusively(codeButton, async function () {
      showStatus('Checking the code…');
      follow((await post('/login/email/verify', { code: codeInput.value.trim() })).body);
    });
  });
}

// Where the kind takes a refusal: the person goes back to the app without logging in.
const cancelButton = document.getElementById('login-cancel');
if (cancelButton) {
  cancelButton.addEventListener('click', function () {
    exclusively(cancelButton, async function () {
      follow((await post('/consent', { decision: 'decline' })).body);
    });
  });
}
`;

/** The whole inline script: strict mode, nothing leaked into the page's global scope. */
export const LOGIN_PAGE_SCRIPT = `(function () {\n'use strict';\n${SIWE_MESSAGE_JS}\n${LOGIN_PAGE_JS}\n})();`;

export type LoginMethod = 'wallet' | 'email' | 'credential';

export interface LoginPageInput {
  tenantName: string;
  interactionId: string;
  siwe: SiweChallenge;
  csrfToken: string;
  cspNonce: string;
  privacyLink?: string | undefined;
  /** Shown at once, e.g. when the interaction was reloaded after a failure. */
  error?: string | undefined;
  /** Which ways to log in to offer; wallet and e-mail unless the interaction says otherwise. */
  methods?: readonly string[] | undefined;
  /** Offers "Cancel", which declines (`POST /interaction/{id}/consent` with decision decline). */
  cancellable?: boolean | undefined;
}

export const WALLET_SECTION = `<section aria-labelledby="wallet-heading">
<h2 id="wallet-heading">With an Ethereum wallet</h2>
<p>Your wallet asks you to sign a message. Signing is free and sends no transaction.</p>
<button type="button" id="wallet-button">Connect wallet</button>
</section>`;

/** Declining instead of logging in, where the interaction's kind takes it. */
export const CANCEL_SECTION = `<p class="cancel"><button type="button" id="login-cancel" class="secondary">Cancel</button> Go back without logging in.</p>`;

/** On a consent or offer page once someone logged in: the way to end that session. */
export const SIGN_OUT_SECTION = `<p class="signed-in">Not you, or done here? <button type="button" id="interaction-sign-out" class="secondary">Sign out</button></p>`;

export const EMAIL_SECTION = `<section aria-labelledby="email-heading">
<h2 id="email-heading">With your e-mail address</h2>
<form id="email-form">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254">
<button type="submit" id="email-button">Send me a code</button>
</form>
<form id="code-form" hidden>
<label for="code">Code from the e-mail</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="12" aria-describedby="code-hint">
<p id="code-hint">We sent a 6-digit code to <span id="code-address"></span>. It is valid for 10 minutes.</p>
<button type="submit" id="code-button">Log in</button>
</form>
</section>`;

/** Logging in with a credential from a digital wallet, for clients configured with --wallet-login. */
export const CREDENTIAL_SECTION = `<section aria-labelledby="credential-heading">
<h2 id="credential-heading">Use a digital wallet</h2>
<p>Share a credential from the wallet app on your phone, such as a proof of identity with your e-mail address.</p>
<button type="button" id="credential-button">Use a digital wallet</button>
<div id="credential-ways" hidden>
<h3>On another device</h3>
<p>Scan this code with your phone's wallet.</p>
<div id="credential-qr" class="qr-box"></div>
<h3>On this device</h3>
<p><a id="credential-open" class="open-wallet" href="#credential-heading">Open your wallet</a></p>
</div>
</section>`;

const CREDENTIAL_STYLE = `
.qr-box svg { display: block; width: 100%; max-width: 16rem; height: auto; margin: 0.5rem auto; background: #fff; }
.open-wallet { display: inline-block; min-height: 44px; box-sizing: border-box; padding: 0.7rem 1.2rem; background: #1d4ed8; color: #fff; border-radius: 4px; text-decoration: none; font-weight: 600; }
h3 { font-size: 1rem; margin: 1rem 0 0.25rem; }
`;

export function renderLoginPage(input: LoginPageInput): string {
  const nonce = escapeHtml(input.cspNonce);
  const methods = input.methods ?? ['wallet', 'email'];
  const data = {
    interactionId: input.interactionId,
    csrfToken: input.csrfToken,
    siwe: input.siwe,
  };
  const privacy = safeLink(input.privacyLink);
  const body = `<main>
<h1>Log in to ${escapeHtml(input.tenantName)}</h1>
<div id="login-error" class="error" role="alert" aria-live="assertive">${escapeHtml(input.error ?? '')}</div>
<div id="login-status" class="status" role="status" aria-live="polite"></div>
<noscript><p class="error">This page needs JavaScript to log you in.</p></noscript>
${methods.includes('wallet') ? WALLET_SECTION : ''}
${methods.includes('email') ? EMAIL_SECTION : ''}
${methods.includes('credential') ? CREDENTIAL_SECTION : ''}
${input.cancellable ? CANCEL_SECTION : ''}
</main>
${privacy ? `<footer><a href="${escapeHtml(privacy)}">Privacy policy of ${escapeHtml(input.tenantName)}</a></footer>` : ''}
<script type="application/json" id="login-data" nonce="${nonce}">${jsonForScript(data)}</script>
<script nonce="${nonce}">${LOGIN_PAGE_SCRIPT}</script>`;
  return page({
    title: `Log in – ${input.tenantName}`,
    cspNonce: input.cspNonce,
    body,
    ...(methods.includes('credential') ? { style: CREDENTIAL_STYLE } : {}),
  });
}

/** The log-in step of any interaction that starts with one (an app's log-in, the wallet page). */
export function renderLoginStep(
  view: InteractionView,
  cspNonce: string,
  options: { cancellable?: boolean } = {},
): string {
  return renderLoginPage({
    tenantName: view.client.name,
    interactionId: view.id,
    siwe: view.siwe,
    csrfToken: view.csrf_token,
    cspNonce,
    privacyLink: view.client.privacy_link ?? undefined,
    methods: view.methods,
    cancellable: options.cancellable,
  });
}
