import type { AuditRecord } from '../audit/audit-export.ts';
import type { ErrorDetail } from '../errors.ts';
import { escapeHtml, page } from '../interaction/page-chrome.ts';
import type { SubClient } from '../subclients/subclient-schemas.ts';
import type { ActingAdmin } from './console-access.ts';
import type { ConsoleAdminRow } from './console-admins.ts';
import type { Overview } from './console-overview.ts';

/**
 * The console's pages: server-rendered HTML over the shared page chrome, with no script at all.
 * Every action is an HTML form (POST, with the session's token in a hidden field), so it works
 * by keyboard and with assistive technology as browsers make forms work.
 */

export const CONSOLE_STYLE = `
main { max-width: 60rem; }
header.console { max-width: 60rem; margin: 1rem auto 0; padding: 0 1.5rem; display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 0.5rem; }
header.console p { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
header.console form button { margin-top: 0; }
nav.console ul { list-style: none; display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; padding: 0; margin: 0.5rem 0 0; }
nav.console a { display: inline-flex; align-items: center; min-height: 44px; font-weight: 600; }
nav.console a[aria-current="page"] { color: #1a1a1a; text-decoration-thickness: 3px; }
button.secondary { background: #fff; color: #1d4ed8; border: 1px solid #1d4ed8; }
dl.counts { display: grid; grid-template-columns: repeat(auto-fit, minmax(10rem, 1fr)); gap: 1rem; margin: 1rem 0; }
dl.counts div { border: 1px solid #d0d4da; border-radius: 8px; padding: 0.75rem; }
dl.counts dt { font-weight: 600; color: #374151; }
dl.counts dd { margin: 0; font-size: 1.5rem; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0; }
th, td { text-align: left; padding: 0.4rem 0.5rem; border-top: 1px solid #d0d4da; vertical-align: top; overflow-wrap: anywhere; }
form.filters { display: grid; grid-template-columns: repeat(auto-fit, minmax(12rem, 1fr)); gap: 0 1rem; align-items: end; }
form.fields { display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: 0 1rem; }
form.fields .actions { grid-column: 1 / -1; }
ul.choices { list-style: none; padding: 0; }
ul.choices a { display: inline-flex; align-items: center; min-height: 44px; font-weight: 600; }
textarea, select { box-sizing: border-box; width: 100%; font: inherit; padding: 0.6rem; border: 1px solid #6b7280; border-radius: 4px; background: #fff; }
textarea { min-height: 6rem; }
.check label { display: inline; font-weight: 600; }
.check input { width: auto; min-width: 24px; min-height: 24px; margin-right: 0.5rem; vertical-align: middle; }
fieldset { border: 0; padding: 0; margin: 0.5rem 0; }
legend { font-weight: 600; margin: 0.5rem 0 0.25rem; }
.check { margin: 0.25rem 0; }
.notice { border-left: 4px solid #166534; padding: 0.5rem 0.75rem; background: #f0fdf4; }
.qr { display: block; width: 100%; max-width: 18rem; height: auto; margin: 1rem 0; }
.error-summary { border-left: 4px solid #b00020; padding: 0.5rem 0.75rem; background: #fef2f2; }
dd, code { overflow-wrap: anywhere; }
@media (max-width: 40rem) {
  main { margin: 1rem 0.5rem; padding: 1rem; }
  table, caption, thead, tbody, tr, th, td { display: block; }
  caption { text-align: left; }
  thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  tr { border-top: 1px solid #d0d4da; padding: 0.5rem 0; }
  td { border: 0; padding: 0.1rem 0; }
  td::before { content: attr(data-label) ": "; font-weight: 600; }
}
`;

export type ConsoleSection = 'overview' | 'audit' | 'subclients' | 'apps' | 'users' | 'issuer' | 'verifier';

const SECTIONS: Array<[ConsoleSection, string, string]> = [
  ['overview', 'Overview', ''],
  ['subclients', 'Sub-clients', '/subclients'],
  ['apps', 'Apps', '/apps'],
  ['users', 'Users', '/users'],
  ['issuer', 'Issuer', '/issuer'],
  ['verifier', 'Verifier', '/verifier'],
  ['audit', 'Audit trail', '/audit'],
];

export const base = (admin: ActingAdmin) => `/console/clients/${admin.caller.clientId}`;

const signOutForm = (csrfToken: string) =>
  `<form method="post" action="/console/sign-out"><input type="hidden" name="csrf_token" value="${escapeHtml(csrfToken)}"><button type="submit" class="secondary">Sign out</button></form>`;

/** A page of the console at one client: the header with the client, role and sections, then `body`. */
export function consolePage(input: {
  admin: ActingAdmin;
  section: ConsoleSection;
  title: string;
  body: string;
  csrfToken: string;
  cspNonce: string;
}): string {
  const { admin } = input;
  const links = SECTIONS.map(
    ([section, label, path]) =>
      `<li><a href="${base(admin)}${path}"${section === input.section ? ' aria-current="page"' : ''}>${label}</a></li>`,
  ).join('');
  const body = `<header class="console">
<div><p>${escapeHtml(admin.clientName)} <span class="hint">(client ${admin.caller.clientId}, you are ${escapeHtml(admin.role)})</span></p>
<nav class="console" aria-label="Console"><ul>${links}<li><a href="/console">Switch client</a></li></ul></nav></div>
${signOutForm(input.csrfToken)}
</header>
<main>
<h1>${escapeHtml(input.title)}</h1>
${input.body}
</main>`;
  return page({
    title: `${input.title} · ${admin.clientName} · Coffer console`,
    cspNonce: input.cspNonce,
    style: CONSOLE_STYLE,
    body,
  });
}

function eventsTable(events: AuditRecord[], caption: string): string {
  if (!events.length) return '<p>No events yet.</p>';
  const rows = events
    .map(
      (
        e,
      ) => `<tr><td data-label="Time"><time datetime="${escapeHtml(e.time)}">${escapeHtml(e.time.replace('T', ' ').slice(0, 19))}</time></td>
<td data-label="Event">${escapeHtml(e.type)}</td><td data-label="Actor">${escapeHtml(e.actor)}</td>
<td data-label="Targets">${escapeHtml(
        Object.entries(e.targets)
          .map(([k, v]) => `${k} ${v}`)
          .join(', '),
      )}</td><td data-label="Outcome">${escapeHtml(e.outcome)}${e.reason ? ` (${escapeHtml(e.reason)})` : ''}</td></tr>`,
    )
    .join('\n');
  return `<table><caption class="hint">${escapeHtml(caption)}</caption>
<thead><tr><th scope="col">Time (UTC)</th><th scope="col">Event</th><th scope="col">Actor</th><th scope="col">Targets</th><th scope="col">Outcome</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}

export function renderOverview(input: {
  admin: ActingAdmin;
  overview: Overview;
  csrfToken: string;
  cspNonce: string;
}): string {
  const o = input.overview;
  const count = (label: string, value: number) => `<div><dt>${label}</dt><dd>${value}</dd></div>`;
  const body = `<dl class="counts">
${input.admin.caller.isMaster ? count('Sub-clients', o.subClients) : ''}
${count('Users', o.users)}
${count('Issued credentials', o.issuedCredentials)}
${count('Verifier requests', o.verifierRequests)}
</dl>
<section aria-labelledby="recent-heading">
<h2 id="recent-heading">Recent events</h2>
${eventsTable(o.recentEvents, 'The ten newest events of this client’s audit trail.')}
<p><a href="${base(input.admin)}/audit">The whole audit trail</a></p>
</section>`;
  return consolePage({ ...input, section: 'overview', title: 'Overview', body });
}

export interface AuditFilters {
  type?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
}

export function renderAuditPage(input: {
  admin: ActingAdmin;
  filters: AuditFilters;
  events: AuditRecord[];
  nextCursor: string | null;
  csrfToken: string;
  cspNonce: string;
}): string {
  const f = input.filters;
  const value = (v: string | undefined) => (v ? ` value="${escapeHtml(v)}"` : '');
  const next = input.nextCursor
    ? (() => {
        const query = new URLSearchParams();
        for (const [k, v] of Object.entries(f)) if (v) query.set(k, v);
        query.set('cursor', input.nextCursor);
        return `<p><a href="${base(input.admin)}/audit?${escapeHtml(query.toString())}">Older events</a></p>`;
      })()
    : '';
  const body = `<form class="filters" method="get" action="${base(input.admin)}/audit" role="search" aria-label="Filter the audit trail">
<div><label for="type">Event type</label><input id="type" name="type" maxlength="64" placeholder="subclient.create"${value(f.type)}></div>
<div><label for="since">From (UTC)</label><input id="since" name="since" type="datetime-local" step="1"${value(f.since)}></div>
<div><label for="until">Before (UTC)</label><input id="until" name="until" type="datetime-local" step="1"${value(f.until)}></div>
<div><button type="submit">Show events</button></div>
</form>
${eventsTable(input.events, 'Newest first.')}
${next}`;
  return consolePage({ ...input, section: 'audit', title: 'Audit trail', body });
}

export const SUBCLIENT_FIELDS: Array<[keyof SubClient & string, string, string]> = [
  ['name', 'Name', ''],
  ['address_1', 'Address', ''],
  ['address_2', 'Address, second line (optional)', ''],
  ['city', 'City', ''],
  ['province', 'Province or region', 'An ISO 3166-2 code such as GB-ENG where the country has them.'],
  ['country', 'Country', 'Two letters, such as GB.'],
  ['timezone', 'Time zone', 'Such as Europe/London.'],
  ['domain', 'Domain of the app', 'Such as app.example.com.'],
  ['subdomain', 'Subdomain', 'One label, unique on this Coffer.'],
];

export function renderSubClientsPage(input: {
  admin: ActingAdmin;
  subClients: SubClient[];
  canCreate: boolean;
  created?: number | undefined;
  errors?: ErrorDetail[] | undefined;
  errorMessage?: string | undefined;
  values?: Record<string, string> | undefined;
  csrfToken: string;
  cspNonce: string;
}): string {
  const { admin } = input;
  if (!admin.caller.isMaster) {
    const body = '<p>This client is not a master client, so it has no sub-clients.</p>';
    return consolePage({ ...input, section: 'subclients', title: 'Sub-clients', body });
  }
  const notice = input.created
    ? `<p class="notice" role="status">Sub-client ${input.created} was created.</p>`
    : '';
  const list = input.subClients.length
    ? `<table><caption class="hint">By id, the first 100.</caption>
<thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">Domain</th><th scope="col">Subdomain</th><th scope="col">Created</th></tr></thead>
<tbody>${input.subClients
        .map(
          (s) =>
            `<tr><td data-label="Id">${s.client_id}</td><td data-label="Name"><a href="${base(admin)}/subclients/${s.client_id}">${escapeHtml(s.name)}</a></td><td data-label="Domain">${escapeHtml(s.domain)}</td><td data-label="Subdomain">${escapeHtml(s.subdomain)}</td><td data-label="Created">${escapeHtml(s.created_at.slice(0, 10))}</td></tr>`,
        )
        .join('\n')}</tbody></table>`
    : '<p>No sub-clients yet.</p>';
  const { summary, fields } = subClientForm(input);
  const form = input.canCreate
    ? `<section aria-labelledby="create-heading"><h2 id="create-heading">Create a sub-client</h2>
${summary}
<form class="fields" method="post" action="${base(admin)}/subclients">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
${fields}
<div class="actions"><button type="submit">Create sub-client</button></div>
</form></section>`
    : `<p class="hint">Your role (${escapeHtml(admin.role)}) reads sub-clients; an owner creates them.</p>`;
  const body = `${notice}<section aria-labelledby="list-heading"><h2 id="list-heading">Existing sub-clients</h2>${list}</section>${form}`;
  return consolePage({ ...input, section: 'subclients', title: 'Sub-clients', body });
}

/** The sub-client fields as a form's inputs, with the problems of a refused submission. */
function subClientForm(input: {
  errors?: ErrorDetail[] | undefined;
  errorMessage?: string | undefined;
  values?: Record<string, string> | undefined;
}): { summary: string; fields: string } {
  const errors = input.errors ?? [];
  const fieldError = (name: string) => errors.find((e) => e.path === `/body/${name}`)?.message;
  const summary =
    input.errorMessage !== undefined
      ? `<div class="error-summary" role="alert"><p>${escapeHtml(input.errorMessage)}</p>${
          errors.length
            ? `<ul>${errors.map((e) => `<li>${escapeHtml(labelOf(e.path))}: ${escapeHtml(e.message)}</li>`).join('')}</ul>`
            : ''
        }</div>`
      : '';
  const fields = SUBCLIENT_FIELDS.map(([name, label, hint]) => {
    const error = fieldError(name);
    const described = [hint ? `${name}-hint` : '', error ? `${name}-error` : ''].filter(Boolean).join(' ');
    const optional = name === 'address_2';
    return `<div><label for="${name}">${escapeHtml(label)}</label>${
      hint ? `<p class="hint" id="${name}-hint">${escapeHtml(hint)}</p>` : ''
    }<input id="${name}" name="${name}"${optional ? '' : ' required'}${described ? ` aria-describedby="${described}"` : ''}${
      error ? ' aria-invalid="true"' : ''
    } value="${escapeHtml(input.values?.[name] ?? '')}">${error ? `<p class="error" id="${name}-error">${escapeHtml(error)}</p>` : ''}</div>`;
  }).join('\n');
  return { summary, fields };
}

/** One sub-client: its fields, as a form for owners and as a list for the other roles. */
export function renderSubClientPage(input: {
  admin: ActingAdmin;
  subClient: SubClient;
  canEdit: boolean;
  updated?: boolean | undefined;
  errors?: ErrorDetail[] | undefined;
  errorMessage?: string | undefined;
  values?: Record<string, string> | undefined;
  csrfToken: string;
  cspNonce: string;
}): string {
  const { admin, subClient } = input;
  const values =
    input.values ??
    Object.fromEntries(SUBCLIENT_FIELDS.map(([name]) => [name, String(subClient[name] ?? '')]));
  const notice = input.updated ? '<p class="notice" role="status">The sub-client was saved.</p>' : '';
  let content: string;
  if (input.canEdit) {
    const { summary, fields } = subClientForm({ ...input, values });
    content = `${summary}<form class="fields" method="post" action="${base(admin)}/subclients/${subClient.client_id}">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
${fields}
<div class="actions"><button type="submit">Save sub-client</button></div>
</form>`;
  } else {
    content = `<dl>${SUBCLIENT_FIELDS.map(
      ([name, label]) => `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(values[name] ?? '')}</dd>`,
    ).join('')}</dl>`;
  }
  const body = `${notice}<p class="hint">Sub-client ${subClient.client_id}, created ${escapeHtml(subClient.created_at.slice(0, 10))}.</p>
${content}
<p><a href="${base(admin)}/subclients">All sub-clients</a></p>`;
  return consolePage({ ...input, section: 'subclients', title: subClient.name, body });
}

function labelOf(path: string): string {
  const name = path.replace(/^\/body\//, '');
  return SUBCLIENT_FIELDS.find(([field]) => field === name)?.[1] ?? name;
}

/** The clients the person administers, to pick one; or a plain statement that there are none. */
export function renderChooser(input: {
  admins: Array<ConsoleAdminRow & { client_name: string }>;
  csrfToken: string;
  cspNonce: string;
}): string {
  const items = input.admins
    .map(
      (a) =>
        `<li><a href="/console/clients/${a.client_id}">${escapeHtml(a.client_name)}</a> <span class="hint">(client ${a.client_id}, ${escapeHtml(a.role)})</span></li>`,
    )
    .join('\n');
  const body = `<main>
<h1>Choose a client</h1>
<p>You administer several clients. The console acts for one at a time.</p>
<ul class="choices">${items}</ul>
${signOutForm(input.csrfToken)}
</main>`;
  return page({
    title: 'Choose a client · Coffer console',
    cspNonce: input.cspNonce,
    style: CONSOLE_STYLE,
    body,
  });
}

export function renderNotAnAdmin(input: { csrfToken: string; cspNonce: string }): string {
  const body = `<main>
<h1>You administer no client here</h1>
<p role="alert">You are logged in, but no client of this Coffer has made you an administrator.</p>
<p>An operator of the service grants the role with <code>coffer admin add</code>; ask them, then log in again. If you logged in with a different e-mail address or wallet than the one you were given the role for, sign out and log in with that one.</p>
${signOutForm(input.csrfToken)}
</main>`;
  return page({ title: 'Not an administrator · Coffer console', cspNonce: input.cspNonce, body });
}

export function renderConsoleSignedOut(input: { cspNonce: string }): string {
  const body = `<main>
<h1>You are signed out of the console</h1>
<p>Your console session has ended. You can close this page.</p>
<p><a href="/console">Log in to the console again</a></p>
</main>`;
  return page({ title: 'Signed out · Coffer console', cspNonce: input.cspNonce, body });
}

/** An error a person meets in the console: what happened, and the way back. */
export function renderConsoleError(input: { message: string; cspNonce: string }): string {
  const body = `<main>
<h1>The console cannot do that</h1>
<p role="alert">${escapeHtml(input.message)}</p>
<p><a href="/console">Back to the console</a></p>
</main>`;
  return page({ title: 'Error · Coffer console', cspNonce: input.cspNonce, body });
}
