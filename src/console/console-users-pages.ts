import type { ErrorDetail } from '../errors.ts';
import { escapeHtml } from '../interaction/page-chrome.ts';
import type { ConsolePageContext } from './console-guards.ts';
import { consolePage } from './console-pages.ts';
import { USER_FIELDS, type UserView } from './console-users.ts';

const usersPath = (ctx: ConsolePageContext) => `/console/clients/${ctx.admin.caller.clientId}/users`;
const token = (ctx: ConsolePageContext) =>
  `<input type="hidden" name="csrf_token" value="${escapeHtml(ctx.csrfToken)}">`;

export interface CreateUserForm {
  errors?: ErrorDetail[] | undefined;
  errorMessage?: string | undefined;
  values?: Record<string, string> | undefined;
}

/** The users page: find one by exact e-mail address and, for those who may, create one. */
export function renderUsersPage(
  ctx: ConsolePageContext & {
    canWrite: boolean;
    email?: string | undefined;
    notFound?: boolean | undefined;
    erased?: number | undefined;
    create?: CreateUserForm | undefined;
  },
): string {
  const notice =
    ctx.erased !== undefined
      ? `<p class="notice" role="status">User ${ctx.erased} was erased, with its profile, credentials and sessions.</p>`
      : '';
  const missing = ctx.notFound
    ? '<p class="error" id="find-email-error">No user of this client has that e-mail address.</p>'
    : '';
  const find = `<section aria-labelledby="find-heading"><h2 id="find-heading">Find a user</h2>
<p class="hint" id="find-email-hint">By the exact e-mail address the user signed up with. Coffer keeps no list of addresses, only a keyed hash of each, so a user is found by the whole address or not at all.</p>
<form method="post" action="${usersPath(ctx)}/find">${token(ctx)}
<label for="find-email">E-mail address to find</label>
<input id="find-email" name="email" type="email" required autocomplete="off" maxlength="254" aria-describedby="find-email-hint${ctx.notFound ? ' find-email-error' : ''}"${ctx.notFound ? ' aria-invalid="true"' : ''} value="${escapeHtml(ctx.email ?? '')}">${missing}
<button type="submit">Find user</button>
</form></section>`;
  const create = ctx.canWrite
    ? createForm(ctx, ctx.create ?? {})
    : `<p class="hint">Your role (${escapeHtml(ctx.admin.role)}) finds and reads users; an owner or operator creates and erases them.</p>`;
  return consolePage({ ...ctx, section: 'users', title: 'Users', body: `${notice}${find}${create}` });
}

function createForm(ctx: ConsolePageContext, form: CreateUserForm): string {
  const errors = form.errors ?? [];
  const fieldError = (name: string) => errors.find((e) => e.path === `/body/profile/${name}`)?.message;
  const labelOf = (path: string) => {
    const name = path.replace(/^\/body\/profile\//, '');
    return USER_FIELDS.find(([field]) => field === name)?.[1] ?? name;
  };
  const summary =
    form.errorMessage !== undefined
      ? `<div class="error-summary" role="alert"><p>${escapeHtml(form.errorMessage)}</p>${
          errors.length
            ? `<ul>${errors.map((e) => `<li>${escapeHtml(labelOf(e.path))}: ${escapeHtml(e.message)}</li>`).join('')}</ul>`
            : ''
        }</div>`
      : '';
  const fields = USER_FIELDS.map(([name, label, hint, required]) => {
    const error = fieldError(name);
    const described = [hint ? `${name}-hint` : '', error ? `${name}-error` : ''].filter(Boolean).join(' ');
    const type = name === 'email_address' ? 'email' : name === 'date_of_birth' ? 'date' : 'text';
    return `<div><label for="${name}">${escapeHtml(label)}</label>${
      hint ? `<p class="hint" id="${name}-hint">${escapeHtml(hint)}</p>` : ''
    }<input id="${name}" name="${name}" type="${type}"${required ? ' required' : ''} autocomplete="off"${
      described ? ` aria-describedby="${described}"` : ''
    }${error ? ' aria-invalid="true"' : ''} value="${escapeHtml(form.values?.[name] ?? '')}">${
      error ? `<p class="error" id="${name}-error">${escapeHtml(error)}</p>` : ''
    }</div>`;
  }).join('\n');
  return `<section aria-labelledby="create-heading"><h2 id="create-heading">Create a user</h2>
<p class="hint">As <code>POST /v1/user/create</code>: the person can then log in to this client's apps with this address.</p>
${summary}<form class="fields" method="post" action="${usersPath(ctx)}">${token(ctx)}
${fields}
<div class="actions"><button type="submit">Create user</button></div>
</form></section>`;
}

const claimText = (value: unknown) =>
  typeof value === 'string' ? value : value === null ? '—' : JSON.stringify(value);

function userFacts(user: UserView): string {
  const profile = Object.entries(user.profile)
    .map(([claim, value]) => `<dt>${escapeHtml(claim)}</dt><dd>${escapeHtml(claimText(value))}</dd>`)
    .join('');
  return `<dl>
<dt>User id</dt><dd>${user.user_id}</dd>
<dt>DID</dt><dd><code>${escapeHtml(user.did)}</code></dd>
<dt>Created (UTC)</dt><dd><time datetime="${escapeHtml(user.created_at)}">${escapeHtml(user.created_at.replace('T', ' ').slice(0, 19))}</time></dd>
<dt>Credentials held</dt><dd>${user.credentials}</dd>
</dl>
<section aria-labelledby="profile-heading"><h2 id="profile-heading">Profile</h2>
<p class="hint">The claims userinfo (<code>GET /v2/openidc/user</code>) gives this client's apps for this user.</p>
<dl>${profile}</dl></section>`;
}

/** One user: what the console may show of it and, for those who may, the way to erase it. */
export function renderUserPage(
  ctx: ConsolePageContext & { user: UserView; canErase: boolean; created?: boolean | undefined },
): string {
  const notice = ctx.created
    ? `<p class="notice" role="status">User ${ctx.user.user_id} was created.</p>`
    : '';
  const erase = ctx.canErase
    ? `<section aria-labelledby="erase-heading"><h2 id="erase-heading">Erase</h2>
<p>Erasing removes the account, its profile, credentials, wallet history and sessions (as <code>DELETE /v1/user/{id}</code>). You will be asked to confirm.</p>
<p><a href="${usersPath(ctx)}/${ctx.user.user_id}/erase">Erase this user…</a></p></section>`
    : '';
  const body = `${notice}${userFacts(ctx.user)}${erase}<p><a href="${usersPath(ctx)}">Find another user</a></p>`;
  return consolePage({ ...ctx, section: 'users', title: `User ${ctx.user.user_id}`, body });
}

/** The confirmation step before an erasure: nothing is erased until this form is sent. */
export function renderEraseConfirmation(ctx: ConsolePageContext & { user: UserView }): string {
  const { user } = ctx;
  const body = `<div class="error-summary"><p>User ${user.user_id} (<code>${escapeHtml(user.did)}</code>) and ${user.credentials} credential${user.credentials === 1 ? '' : 's'} will be erased for good. The e-mail address and wallet can sign up again afterwards.</p></div>
<form method="post" action="${usersPath(ctx)}/${user.user_id}/erase">${token(ctx)}
<input type="hidden" name="confirm" value="erase">
<button type="submit">Erase user ${user.user_id}</button>
</form>
<p><a href="${usersPath(ctx)}/${user.user_id}">Cancel, keep the user</a></p>`;
  return consolePage({ ...ctx, section: 'users', title: `Erase user ${user.user_id}?`, body });
}
