import type { ErrorDetail } from '../errors.ts';
import { escapeHtml } from '../interaction/page-chrome.ts';
import type { AppRegistration } from './console-apps.ts';
import type { ConsolePageContext } from './console-guards.ts';
import { base, consolePage } from './console-pages.ts';

const uriList = (uris: string[], none: string) =>
  uris.length
    ? `<ul>${uris.map((uri) => `<li><code>${escapeHtml(uri)}</code></li>`).join('')}</ul>`
    : `<p>${escapeHtml(none)}</p>`;

const yesNo = (value: boolean) => (value ? 'yes' : 'no');
const token = (ctx: ConsolePageContext) =>
  `<input type="hidden" name="csrf_token" value="${escapeHtml(ctx.csrfToken)}">`;
const appsPath = (ctx: ConsolePageContext) => `${base(ctx.admin)}/apps`;

/** A refused form's message, above the form, read out at once. */
export interface AppsProblem {
  appId: number | 'new';
  message: string;
  details?: ErrorDetail[] | undefined;
  values: Record<string, string>;
}

const problemOf = (problem: AppsProblem | undefined, appId: number | 'new') =>
  problem && problem.appId === appId
    ? `<div class="error-summary" role="alert"><p>${escapeHtml(problem.message)}</p></div>`
    : '';

/** The fields a registration has in both forms: redirect URIs, post-logout URIs, refresh grant. */
function registrationFields(prefix: string, values: Record<string, string>): string {
  const area = (name: string, label: string, hint: string) =>
    `<div><label for="${prefix}-${name}">${escapeHtml(label)}</label><p class="hint" id="${prefix}-${name}-hint">${escapeHtml(hint)}</p>
<textarea id="${prefix}-${name}" name="${name}" rows="3" aria-describedby="${prefix}-${name}-hint">${escapeHtml(values[name] ?? '')}</textarea></div>`;
  const refresh = values['refresh_token'] === 'yes';
  return `${area('redirect_uris', 'Redirect URIs', 'One a line, matched exactly: where people return after logging in.')}
${area('post_logout_redirect_uris', 'Post-logout redirect URIs', 'One a line: where signing out may return. May be empty.')}
<fieldset><legend>Refresh tokens</legend>
<div class="check"><input type="radio" id="${prefix}-refresh-no" name="refresh_token" value="no"${refresh ? '' : ' checked'}><label for="${prefix}-refresh-no">No: people log in again when the access token ends</label></div>
<div class="check"><input type="radio" id="${prefix}-refresh-yes" name="refresh_token" value="yes"${refresh ? ' checked' : ''}><label for="${prefix}-refresh-yes">Yes: the app may use the refresh_token grant</label></div>
</fieldset>`;
}

const valuesOf = (app: AppRegistration): Record<string, string> => ({
  redirect_uris: app.redirect_uris.join('\n'),
  post_logout_redirect_uris: app.post_logout_redirect_uris.join('\n'),
  refresh_token: app.grant_types.includes('refresh_token') ? 'yes' : 'no',
});

/** An owner's forms under one app: its registration, its secret, wallet log-in. */
function ownerForms(ctx: ConsolePageContext, app: AppRegistration, problem?: AppsProblem): string {
  const id = app.client_id;
  const action = `${appsPath(ctx)}/${id}`;
  const values = problem?.appId === id ? problem.values : valuesOf(app);
  const rotate = app.confidential
    ? `<p><a href="${action}/rotate">Rotate the client secret of ${escapeHtml(app.name)}…</a></p>`
    : '';
  const walletOn = app.verifier
    ? `<div class="check"><input type="radio" id="app-${id}-wallet-on" name="wallet_login" value="on"${app.wallet_login ? ' checked' : ''}><label for="app-${id}-wallet-on">On, with this configuration</label></div>
<div><label for="app-${id}-wallet-json">Configuration (JSON)</label><p class="hint" id="app-${id}-wallet-hint">As the file of <code>coffer client set --wallet-login</code>: {"dcql_query": …, "account_claim": ["email"], "trusted_issuers": […]}. The query must ask for the account claim.</p>
<textarea id="app-${id}-wallet-json" name="wallet_login_json" rows="6" aria-describedby="app-${id}-wallet-hint">${escapeHtml(problem?.appId === id ? (problem.values['wallet_login_json'] ?? '') : '')}</textarea></div>`
    : `<p class="hint">To offer it, this client must be a verifier first: the verifier page turns that on.</p>`;
  return `<details${problem?.appId === id ? ' open' : ''}><summary>Change ${escapeHtml(app.name)}</summary>
${problemOf(problem, id)}
<form class="fields" method="post" action="${action}">${token(ctx)}
${registrationFields(`app-${id}`, values)}
<div class="actions"><button type="submit">Save ${escapeHtml(app.name)}</button></div>
</form>${rotate}
<form class="fields" method="post" action="${action}/wallet-login">${token(ctx)}
<fieldset><legend>Log-in with a wallet</legend>
<div class="check"><input type="radio" id="app-${id}-wallet-off" name="wallet_login" value="off"${app.wallet_login ? '' : ' checked'}><label for="app-${id}-wallet-off">Off</label></div>
${walletOn}</fieldset>
<div class="actions"><button type="submit">Save wallet log-in</button></div>
</form></details>`;
}

function appSection(ctx: ConsolePageContext & AppsPageInput, app: AppRegistration): string {
  const heading = `app-${app.client_id}`;
  const wallet = app.wallet_login
    ? `offered; the account is named by ${escapeHtml(app.wallet_login.account_claim.join(', ') || 'its claims')}${
        app.wallet_login.trusted_issuers
          ? `; ${app.wallet_login.trusted_issuers} trusted issuer${app.wallet_login.trusted_issuers === 1 ? '' : 's'}`
          : '; issuers trusted by ISSUER_TRUST_ANCHORS'
      }`
    : 'not offered';
  const forms = ctx.canWrite
    ? ownerForms(ctx, app, ctx.problem)
    : `<p class="hint">Your role (${escapeHtml(ctx.admin.role)}) reads apps; an owner changes them.</p>`;
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
${forms}
</section>`;
}

function newAppForm(ctx: ConsolePageContext & AppsPageInput): string {
  const values = ctx.problem?.appId === 'new' ? ctx.problem.values : {};
  const confidential = values['kind'] !== 'public';
  return `<section aria-labelledby="new-app-heading"><h2 id="new-app-heading">New app</h2>
<p class="hint">A new sub-client of this master client, with its own client_id.</p>
${problemOf(ctx.problem, 'new')}
<form class="fields" method="post" action="${appsPath(ctx)}">${token(ctx)}
<div><label for="new-app-name">Name</label><input id="new-app-name" name="name" required maxlength="100" value="${escapeHtml(values['name'] ?? '')}"></div>
${registrationFields('new-app', values)}
<fieldset><legend>Kind</legend>
<div class="check"><input type="radio" id="new-app-confidential" name="kind" value="confidential"${confidential ? ' checked' : ''}><label for="new-app-confidential">Confidential: a server that keeps a client secret</label></div>
<div class="check"><input type="radio" id="new-app-public" name="kind" value="public"${confidential ? '' : ' checked'}><label for="new-app-public">Public: a native or browser app, no secret, PKCE</label></div>
</fieldset>
<div class="actions"><button type="submit">Create app</button></div>
</form></section>`;
}

export interface AppsPageInput {
  apps: AppRegistration[];
  /** An owner: the forms; the other roles read. */
  canWrite: boolean;
  updated?: number | undefined;
  problem?: AppsProblem | undefined;
}

/** The client's apps: their log-in registrations, and for an owner the forms that change them. */
export function renderAppsPage(ctx: ConsolePageContext & AppsPageInput): string {
  const more = ctx.apps.length > 100 ? '<p class="hint">The first 100 apps, by client id.</p>' : '';
  const notice =
    ctx.updated !== undefined ? `<p class="notice" role="status">App ${ctx.updated} was changed.</p>` : '';
  const intro = `<p>Each app logs people in with OpenID Connect at <code>/.well-known/openid-configuration</code>, as its client_id.${
    ctx.admin.caller.isMaster ? ' A master client’s sub-clients are apps of their own.' : ''
  }</p>`;
  const create = ctx.canWrite && ctx.admin.caller.isMaster ? newAppForm(ctx) : '';
  const body = `${notice}${intro}
${more}${ctx.apps
  .slice(0, 100)
  .map((app) => appSection(ctx, app))
  .join('\n')}${create}`;
  return consolePage({ ...ctx, section: 'apps', title: 'Apps', body });
}

/** A client secret, shown this once: Coffer keeps only its hash. */
export function renderAppSecret(
  ctx: ConsolePageContext & { appId: number; secret: string | null; created: boolean },
): string {
  const what = ctx.created
    ? `App ${ctx.appId} was created.`
    : `App ${ctx.appId} has a new client secret; the old one no longer works.`;
  const secret =
    ctx.secret === null
      ? '<p>A public app: it has no client secret and uses PKCE on every log-in.</p>'
      : `<div class="error-summary" role="alert"><p>Copy the client secret now. It is shown only this once: Coffer keeps only its hash and cannot show it again.</p></div>
<dl><dt>client_id</dt><dd><code>${ctx.appId}</code></dd><dt>client_secret</dt><dd><code id="client-secret">${escapeHtml(ctx.secret)}</code></dd></dl>`;
  const body = `<p class="notice" role="status">${what}</p>${secret}<p><a href="${appsPath(ctx)}">Back to the apps</a></p>`;
  return consolePage({
    ...ctx,
    section: 'apps',
    title: ctx.created ? 'App created' : 'Client secret rotated',
    body,
  });
}

/** The confirmation step before a rotation: the old secret works until this form is sent. */
export function renderRotateConfirmation(ctx: ConsolePageContext & { app: AppRegistration }): string {
  const { app } = ctx;
  const body = `<div class="error-summary"><p>${escapeHtml(app.name)} (client_id ${app.client_id}) gets a new client secret, shown once. The current one stops working at once: the app cannot log anyone in until it has the new one.</p></div>
<form method="post" action="${appsPath(ctx)}/${app.client_id}/rotate">${token(ctx)}
<input type="hidden" name="confirm" value="rotate">
<button type="submit">Rotate the secret of app ${app.client_id}</button>
</form>
<p><a href="${appsPath(ctx)}">Cancel, keep the secret</a></p>`;
  return consolePage({ ...ctx, section: 'apps', title: `Rotate the secret of ${app.name}?`, body });
}
