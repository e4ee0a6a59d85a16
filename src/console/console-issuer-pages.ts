import type { ErrorDetail } from '../errors.ts';
import { escapeHtml as h } from '../interaction/page-chrome.ts';
import type { CredentialConfiguration } from '../issuer/configurations.ts';
import type { ActingAdmin } from './console-access.ts';
import { claimsToLines, FORMATS, type Format, PAGE_SIZE, TYPE_MEMBER } from './console-issuer.ts';
import { base, consolePage } from './console-pages.ts';

/** The console's issuer pages: server-rendered forms, no script (console-pages.ts says why). */

interface PageInput {
  admin: ActingAdmin;
  csrfToken: string;
  cspNonce: string;
}

interface FormState {
  errors?: ErrorDetail[] | undefined;
  errorMessage?: string | undefined;
  values?: Record<string, string> | undefined;
}

type Configuration = CredentialConfiguration & { id: string };

const issuerBase = (admin: ActingAdmin) => `${base(admin)}/issuer`;
const token = (csrfToken: string) => `<input type="hidden" name="csrf_token" value="${h(csrfToken)}">`;
const time = (iso: string) => `<time datetime="${h(iso)}">${h(iso.replace('T', ' ').slice(0, 16))}</time>`;

const issuerPage = (input: PageInput & { title: string; body: string }) => {
  const b = issuerBase(input.admin);
  const nav = `<nav aria-label="Issuer"><ul class="choices"><li><a href="${b}">Configurations</a></li><li><a href="${b}/offers">Offers</a></li><li><a href="${b}/credentials">Issued credentials</a></li></ul></nav>`;
  return consolePage({ ...input, section: 'issuer', body: `${nav}${input.body}` });
};

function errorSummary(state: FormState): string {
  if (state.errorMessage === undefined) return '';
  const items = (state.errors ?? []).map((e) => `<li>${h(e.message)}</li>`).join('');
  return `<div class="error-summary" role="alert"><p>${h(state.errorMessage)}</p>${items ? `<ul>${items}</ul>` : ''}</div>`;
}

/** A labelled field with its hint and, after a refused submission, its problem. */
function field(
  state: FormState,
  name: string,
  label: string,
  control: (attributes: string) => string,
  hint = '',
): string {
  const error = state.errors?.find((e) => e.path === `/body/${name}`)?.message;
  const described = [hint ? `${name}-hint` : '', error ? `${name}-error` : ''].filter(Boolean).join(' ');
  const attributes = `id="${name}" name="${name}"${described ? ` aria-describedby="${described}"` : ''}${error ? ' aria-invalid="true"' : ''}`;
  return `<div><label for="${name}">${h(label)}</label>${hint ? `<p class="hint" id="${name}-hint">${h(hint)}</p>` : ''}${control(attributes)}${
    error ? `<p class="error" id="${name}-error">${h(error)}</p>` : ''
  }</div>`;
}

const pager = (path: string, page: number, more: boolean) => {
  const links = [
    page > 1 ? `<a href="${path}?page=${page - 1}">Newer</a>` : '',
    more ? `<a href="${path}?page=${page + 1}">Older</a>` : '',
  ].filter(Boolean);
  return links.length ? `<nav aria-label="Pages"><p>Page ${page}: ${links.join(' · ')}</p></nav>` : '';
};

export function renderIssuerNotEnabled(input: PageInput): string {
  const id = input.admin.caller.clientId;
  const body = `<p>This client is not a credential issuer yet. Making it one gives it a signing key and certificate, which is an operator's act: the API has no way for a client to do it itself.</p>
<p>Ask the operator of this Coffer to run:</p>
<pre><code>npx coffer issuer enable --client ${id} --key issuer-key.pem --chain issuer-chain.pem</code></pre>
<p class="hint">Without <code>--key</code> and <code>--chain</code> it makes a development certificate that wallets in production refuse; <code>--haip</code> makes a HAIP issuer.</p>`;
  return consolePage({ ...input, section: 'issuer', title: 'Issuer', body });
}

export function renderIssuerPage(
  input: PageInput & {
    state: { credentialIssuer: string; metadata: string; haip: boolean };
    configurations: Configuration[];
    canWrite: boolean;
    canOffer: boolean;
    notice?: string | undefined;
  },
): string {
  const b = issuerBase(input.admin);
  const rows = input.configurations
    .map((c) => {
      const typeValue = c[TYPE_MEMBER[c.format]] ?? '';
      const acts = [
        `<a href="${b}/configurations/${encodeURIComponent(c.id)}">${input.canWrite ? 'Edit' : 'View'}<span class="hint"> ${h(c.id)}</span></a>`,
        input.canOffer
          ? `<a href="${b}/offers/new?configuration=${encodeURIComponent(c.id)}">Offer<span class="hint"> ${h(c.id)}</span></a>`
          : '',
        input.canWrite
          ? `<a href="${b}/configurations/${encodeURIComponent(c.id)}/delete">Delete<span class="hint"> ${h(c.id)}</span></a>`
          : '',
      ].filter(Boolean);
      return `<tr><td data-label="Id">${h(c.id)}</td><td data-label="Format">${h(c.format)}</td><td data-label="Type">${h(typeValue)}</td><td data-label="Claims">${c.claims.length}</td><td data-label="Status list">${c.status ? 'on' : 'off'}</td><td data-label="Actions">${acts.join(' · ')}</td></tr>`;
    })
    .join('\n');
  const list = input.configurations.length
    ? `<table><caption class="hint">The credentials this issuer offers, by id.</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Format</th><th scope="col">Type</th><th scope="col">Claims</th><th scope="col">Status list</th><th scope="col">Actions</th></tr></thead>
<tbody>${rows}</tbody></table>`
    : '<p>No configurations yet.</p>';
  const body = `${input.notice ? `<p class="notice" role="status">${h(input.notice)}</p>` : ''}
<p>Credential issuer: <code>${h(input.state.credentialIssuer)}</code>${input.state.haip ? ' (HAIP)' : ''}. <a href="${h(input.state.metadata)}">Its metadata</a>.</p>
<section aria-labelledby="configurations-heading"><h2 id="configurations-heading">Configurations</h2>${list}
${input.canWrite ? `<p><a href="${b}/configurations/new">Write a new configuration</a></p>` : `<p class="hint">Your role (${h(input.admin.role)}) reads configurations; an owner writes them.</p>`}</section>`;
  return issuerPage({ ...input, title: 'Issuer', body });
}

/** A configuration: its common fields as a form, and the whole of it as JSON. */
export function renderConfigurationPage(
  input: PageInput &
    FormState & {
      configuration: Configuration | undefined;
      canWrite: boolean;
      saved?: boolean | undefined;
    },
): string {
  const c = input.configuration;
  const b = issuerBase(input.admin);
  const title = c ? `Configuration ${c.id}` : 'New configuration';
  if (!input.canWrite) {
    const body = c ? `<pre><code>${h(JSON.stringify({ ...c, id: undefined }, null, 2))}</code></pre>` : '';
    return issuerPage({ ...input, title, body });
  }
  const format = (input.values?.['format'] ?? c?.format ?? 'dc+sd-jwt') as Format;
  const values = {
    id: c?.id ?? '',
    type_value: c ? (c[TYPE_MEMBER[c.format]] ?? '') : '',
    claims: c ? claimsToLines(c.claims) : '',
    status: c?.status ? 'on' : '',
    json: c
      ? JSON.stringify({ ...c, id: undefined }, null, 2)
      : '{\n  "format": "dc+sd-jwt",\n  "claims": []\n}',
    ...input.values,
  };
  const state: FormState = { ...input, values };
  const action = c ? `${b}/configurations/${encodeURIComponent(c.id)}` : `${b}/configurations`;
  const idField = c
    ? `<input type="hidden" name="id" value="${h(c.id)}">`
    : field(
        state,
        'id',
        'Id',
        (a) => `<input ${a} required maxlength="64" value="${h(values.id)}">`,
        'Letters, digits and . _ : - (up to 64); wallets see it.',
      );
  const fields = `<form class="fields" method="post" action="${action}">${token(input.csrfToken)}<input type="hidden" name="form" value="fields">
${idField}
${field(state, 'format', 'Format', (a) => `<select ${a}>${FORMATS.map((f) => `<option${f === format ? ' selected' : ''}>${f}</option>`).join('')}</select>`)}
${field(state, 'type_value', 'Type', (a) => `<input ${a} value="${h(values.type_value)}">`, 'dc+sd-jwt: the vct; mso_mdoc: the doctype; jwt_vc_json and ldp_vc: the VC type.')}
${field(state, 'claims', 'Claims', (a) => `<textarea ${a} rows="6">${h(values.claims)}</textarea>`, 'One a line: the path, steps separated by /, then | and the name wallets show. E.g. given_name | Given name, or credentialSubject/degree | Degree.')}
<div><input type="checkbox" id="status" name="status"${values.status === 'on' ? ' checked' : ''}> <label for="status">Status list, so the credentials can be revoked</label></div>
<div class="actions"><button type="submit">Save configuration</button></div>
</form>`;
  const json = `<form method="post" action="${action}">${token(input.csrfToken)}<input type="hidden" name="form" value="json">
${c ? `<input type="hidden" name="id" value="${h(c.id)}">` : field(state, 'json_id', 'Id of the JSON configuration', (a) => `<input ${a} maxlength="64" value="${h(input.values?.['json_id'] ?? '')}">`)}
${field(state, 'json', 'The whole configuration (JSON)', (a) => `<textarea ${a} rows="16" spellcheck="false">${h(values.json)}</textarea>`, 'As the body of PUT /v1/issuer/configurations/{id}: display, scope, validity, from_profile and the rest.')}
<div class="actions"><button type="submit" class="secondary">Save the JSON</button></div>
</form>`;
  const body = `${input.saved ? '<p class="notice" role="status">The configuration was saved.</p>' : ''}${errorSummary(state)}
<section aria-labelledby="fields-heading"><h2 id="fields-heading">Common fields</h2>${fields}</section>
<section aria-labelledby="json-heading"><h2 id="json-heading">Full configuration</h2>${json}</section>`;
  return issuerPage({ ...input, title, body });
}

export function renderDeleteConfiguration(input: PageInput & { id: string }): string {
  const b = issuerBase(input.admin);
  const body = `<p>Wallets will no longer be offered <strong>${h(input.id)}</strong>; credentials issued under it stay as they are.</p>
<form method="post" action="${b}/configurations/${encodeURIComponent(input.id)}/delete">${token(input.csrfToken)}
<button type="submit">Delete ${h(input.id)}</button> <a href="${b}">Keep it</a></form>`;
  return issuerPage({ ...input, title: `Delete configuration ${input.id}?`, body });
}

export function renderOffersPage(
  input: PageInput &
    FormState & {
      configurations: Configuration[];
      chosen: Configuration | undefined;
      canOffer: boolean;
      offers: Array<{
        id: string;
        configurationIds: string[];
        status: string;
        createdAt: string;
        expiresAt: string;
      }>;
      page: number;
      more: boolean;
    },
): string {
  const b = issuerBase(input.admin);
  let create = '';
  if (input.canOffer && input.chosen) {
    const c = input.chosen;
    const claimFields = c.from_profile
      ? "<p>This configuration's claims come from the person's profile.</p>"
      : c.claims
          .map((claim, i) =>
            claim.path.every((s) => typeof s === 'string')
              ? field(
                  input,
                  `claim_${i}`,
                  claim.display?.[0]?.name ?? claim.path.join(' / '),
                  (a) => `<input ${a} value="${h(input.values?.[`claim_${i}`] ?? '')}">`,
                  claim.path.join(' / '),
                )
              : '',
          )
          .join('\n');
    create = `<section aria-labelledby="create-heading"><h2 id="create-heading">Offer ${h(c.id)}</h2>${errorSummary(input)}
<form class="fields" method="post" action="${b}/offers">${token(input.csrfToken)}<input type="hidden" name="configuration" value="${h(c.id)}">
${claimFields}
${field(input, 'expires_in_minutes', 'Expires in (minutes)', (a) => `<input ${a} inputmode="numeric" value="${h(input.values?.['expires_in_minutes'] ?? '10')}">`)}
<div><input type="checkbox" id="tx_code" name="tx_code"${input.values?.['tx_code'] === 'on' ? ' checked' : ''}> <label for="tx_code">Ask for a transaction code</label></div>
<div class="actions"><button type="submit">Make the offer</button></div>
</form></section>`;
  } else if (input.canOffer) {
    create = input.configurations.length
      ? `<form method="get" action="${b}/offers/new">${field(input, 'configuration', 'Configuration to offer', (a) => `<select ${a}>${input.configurations.map((c) => `<option>${h(c.id)}</option>`).join('')}</select>`)}<button type="submit">Fill in its claims</button></form>`
      : `<p>Write a configuration first, on the <a href="${b}">issuer page</a>.</p>`;
  }
  const rows = input.offers
    .map(
      (o) =>
        `<tr><td data-label="Offer"><code>${h(o.id)}</code></td><td data-label="Configurations">${h(o.configurationIds.join(', '))}</td><td data-label="Status">${h(o.status)}</td><td data-label="Created (UTC)">${time(o.createdAt)}</td><td data-label="Expires (UTC)">${time(o.expiresAt)}</td></tr>`,
    )
    .join('\n');
  const list = input.offers.length
    ? `<table><caption class="hint">Newest first, ${PAGE_SIZE} a page.</caption><thead><tr><th scope="col">Offer</th><th scope="col">Configurations</th><th scope="col">Status</th><th scope="col">Created (UTC)</th><th scope="col">Expires (UTC)</th></tr></thead><tbody>${rows}</tbody></table>${pager(`${b}/offers`, input.page, input.more)}`
    : '<p>No offers yet.</p>';
  const body = `${create}<section aria-labelledby="offers-heading"><h2 id="offers-heading">Offers</h2>${list}</section>`;
  return issuerPage({ ...input, title: 'Offers', body });
}

export function renderOfferMade(
  input: PageInput & {
    offer: { id: string; offer_link: string; page: string; tx_code?: string | undefined; expires_at: string };
    qr: string;
  },
): string {
  const o = input.offer;
  const body = `<p class="notice" role="status">The offer was made. It works once and expires at ${time(o.expires_at)} UTC.</p>
${input.qr}
<p><a href="${h(o.offer_link)}">The offer link</a> (for a wallet on this device): <code>${h(o.offer_link)}</code></p>
<p><a href="${h(o.page)}">The offer's page</a>, to send to the person.</p>
${o.tx_code ? `<p>Transaction code: <strong>${h(o.tx_code)}</strong>. It is shown only now: give it to the person apart from the offer.</p>` : ''}
<p><a href="${issuerBase(input.admin)}/offers">All offers</a></p>`;
  return issuerPage({ ...input, title: 'Offer made', body });
}

export function renderCredentialsPage(
  input: PageInput & {
    credentials: Array<{
      id: string;
      configuration_id: string;
      format: string;
      status: string;
      issued_at: string;
      status_list: unknown;
    }>;
    canChange: boolean;
    page: number;
    more: boolean;
    notice?: string | undefined;
  },
): string {
  const b = issuerBase(input.admin);
  const acts = (c: (typeof input.credentials)[number]) => {
    if (!input.canChange || !c.status_list || c.status === 'revoked') return '';
    const w3c = c.format === 'jwt_vc_json' || c.format === 'ldp_vc';
    const choices = (['revoked', ...(w3c ? [] : ['suspended']), 'valid'] as const).filter(
      (s) => s !== c.status,
    );
    const label: Record<string, string> = { revoked: 'Revoke', suspended: 'Suspend', valid: 'Reinstate' };
    return choices
      .map(
        (s) =>
          `<form method="post" action="${b}/credentials/${encodeURIComponent(c.id)}/status">${token(input.csrfToken)}<input type="hidden" name="status" value="${s}"><button type="submit" class="secondary">${label[s]}<span class="hint"> ${h(c.id)}</span></button></form>`,
      )
      .join('');
  };
  const rows = input.credentials
    .map(
      (c) =>
        `<tr><td data-label="Credential"><code>${h(c.id)}</code></td><td data-label="Configuration">${h(c.configuration_id)}</td><td data-label="Status">${h(c.status)}</td><td data-label="Issued (UTC)">${time(c.issued_at)}</td><td data-label="Change">${acts(c) || '—'}</td></tr>`,
    )
    .join('\n');
  const list = input.credentials.length
    ? `<table><caption class="hint">Newest first, ${PAGE_SIZE} a page; never the credentials or their claims.</caption><thead><tr><th scope="col">Credential</th><th scope="col">Configuration</th><th scope="col">Status</th><th scope="col">Issued (UTC)</th><th scope="col">Change</th></tr></thead><tbody>${rows}</tbody></table>${pager(`${b}/credentials`, input.page, input.more)}`
    : '<p>Nothing issued yet.</p>';
  const body = `${input.notice ? `<p class="notice" role="status">${h(input.notice)}</p>` : ''}${list}`;
  return issuerPage({ ...input, title: 'Issued credentials', body });
}
