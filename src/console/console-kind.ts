import type { Audit } from '../audit/audit-events.ts';
import type { InteractionKind } from '../interaction/interaction-kinds.ts';
import { finishInteraction } from '../interaction/interaction-repository.ts';
import {
  authTimeNow,
  clock,
  gone,
  type InteractionDeps,
  identityOfProof,
} from '../interaction/interaction-service.ts';
import { renderLoginStep } from '../interaction/login-page.ts';
import { startPage } from '../interaction/page-chrome.ts';
import { adminsOfIdentity } from './console-admins.ts';
import { CONSOLE_COOKIE, CONSOLE_SESSION_TTL_MS, startConsoleSession } from './console-sessions.ts';

/**
 * The console's log-in: the person proves an e-mail address or a wallet with Coffer's own
 * methods; nobody is signed up, and no account is needed. The session names the identity, not
 * a client: each page asks which clients grant it a role. Someone who administers nothing still
 * gets a session, so that /console can say so plainly rather than the log-in failing.
 */
export function consoleKind(deps: InteractionDeps & { audit: Audit }): InteractionKind {
  return {
    name: 'console',
    tenantLogin: false,
    asker: async () => ({ client_id: null, name: 'the Coffer console', privacy_link: null }),
    async logIn(row, proof) {
      const identity = identityOfProof(deps, proof);
      const admins = await adminsOfIdentity(deps.db, {
        emailIndexes:
          identity.emailIndex === undefined ? [] : (identity.emailIndexes ?? [identity.emailIndex]),
        wallet: identity.wallet ?? null,
      });
      // Until a master-key rotation reaches the rows, their index is the previous key's.
      const emailIndex = identity.emailIndex
        ? (admins.find((a) => a.email_index !== null)?.email_index ?? identity.emailIndex)
        : null;
      const authTime = authTimeNow(deps);
      const finished = await deps.db.transaction().execute(async (tx) => {
        const done = await finishInteraction(tx, row.id, { login_type: proof.method, auth_time: authTime });
        if (done)
          for (const admin of admins)
            await deps.audit.record(tx, {
              clientId: admin.client_id,
              actor: `admin:${admin.id}`,
              type: 'console.login',
              targets: { admin_id: admin.id, method: proof.method },
            });
        return done;
      });
      if (!finished) throw gone();
      const sessionId = await startConsoleSession(
        deps.db,
        { emailIndex, wallet: identity.wallet ?? null },
        clock(deps),
      );
      return {
        redirectTo: '/console',
        sessionId,
        sessionMaxAgeSeconds: CONSOLE_SESSION_TTL_MS / 1000,
        cookie: { name: CONSOLE_COOKIE, sameSite: 'Strict' },
      };
    },
    render: async (view, reply) => renderLoginStep(view, startPage(reply)),
  };
}
