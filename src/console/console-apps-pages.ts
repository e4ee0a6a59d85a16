import { escapeHtml } from '../interaction/page-chrome.ts';
import type { AppRegistration } from './console-apps.ts';
import type { ConsolePageContext } from './console-guards.ts';
import { consolePage } from './console-pages.ts';

const uriList = (uris: string[], none: string) =>
  uris.length
    ? `<ul>${uris.map((uri) => `<li><code>${escapeHtml(uri)}</code></li>`).join('')}</ul>`
    : `<p>${escapeHtml(none)}</p>`;

const yesNo = (value: boolean) => (value ? 'yes' : 'no');

/** The operator's commands that change what the API leaves to the operator. */
function commands(app: AppRegistration): string {
  const id = app.client_id;
  const lines = [
    [`npx coffer client set ${id} --redirect-uri URI [--redirect-uri URI]…`, 'replaces the redirect URIs'],
    [`npx coffer client set ${id} --post-logout-redirect-uri URI…`, 'replaces where signing out may return'],
    ...(app.confidential
      ? [
          [
            `npx coffer client secret-rotate ${id}`,
            'a new client secret, printed once; the old one stops working',
          ],
        ]
      : []),
    [
      `npx coffer client set ${id} --wallet-login FILE|none`,
      app.verifier
        ? 'offers (or stops offering) log-in with a credential from a wallet'
        : `log-in with a wallet; the client must be a verifier first: npx coffer verifier enable --client ${id}`,
    ],
  ];
  return `<ul>${lines
    .map(([command, what]) => `<li><code>${escapeHtml(command!)}</code> — ${escapeHtml(what!)}</li>`)
    .join('')}</ul>`;
}

function appSection(app: AppRegistration): string {
  const heading = `app-${app.client_id}`;
  const wallet = app.wallet_login
    ? `offered; the account is named by ${escapeHtml(app.wallet_login.account_claim.join(', ') || 'its claims')}${
        app.wallet_login.trusted_issuers
          ? `; ${app.wallet_login.trusted_issuers} trusted issuer${app.wallet_login.trusted_issuers === 1 ? '' : 's'}`
          : '; issuers trusted by ISSUER_TRUST_ANCHORS'
      }`
    : 'not offered';
  return `<section aria-labelledby="${heading}"><h2 id="${heading}">${escapeHtml(app.name)} <span class="hint">(client_id ${app.client_id})</span></h2>
<dl>
<dt>Kind</dt><dd>${app.confidential ? 'confidential: it has a client secret (Coffer keeps only its hash)' : 'public: no secret, PKCE on every log-in'}</dd>
<dt>Redirect URIs</dt><dd>${uriList(app.redirect_uris, 'None: nobody can log in through this app until one is registered.')}</dd>
<dt>Post-logout redirect URIs</dt><dd>${uriList(app.post_logout_redirect_uris, 'None.')}</dd>
<dt>Grants</dt><dd>${escapeHtml(app.grant_types.join(', '))}</dd>
<dt>DPoP-bound tokens</dt><dd>${yesNo(app.dpop_bound)}</dd>
<dt>Pushed authorization requests only</dt><dd>${yesNo(app.require_par)}</dd>
<dt>Log-in with a wallet</dt><dd>${wallet}</dd>
</dl>
<details><summary>How to change this app</summary>${commands(app)}</details>
</section>`;
}

/**
 * The client's apps: their log-in registrations, read only. The API gives a client's token no way
 * to change a registration or its secret, and the console acts with exactly that token's rights,
 * so the page names the command an operator of this Coffer runs.
 */
export function renderAppsPage(ctx: ConsolePageContext & { apps: AppRegistration[] }): string {
  const more = ctx.apps.length > 100 ? '<p class="hint">The first 100 apps, by client id.</p>' : '';
  const body = `<p>Each app logs people in with OpenID Connect at <code>/.well-known/openid-configuration</code>, as its client_id.${
    ctx.admin.caller.isMaster ? ' A master client’s sub-clients are apps of their own.' : ''
  }</p>
<p class="hint" role="note">Redirect URIs, secrets and wallet log-in are changed by an operator of this Coffer with the <code>coffer</code> command line, not from the console: the API gives this client’s token no way to change them, and the console acts with exactly its rights. Ask an operator to run the commands under each app.</p>
${more}${ctx.apps.slice(0, 100).map(appSection).join('\n')}`;
  return consolePage({ ...ctx, section: 'apps', title: 'Apps', body });
}
