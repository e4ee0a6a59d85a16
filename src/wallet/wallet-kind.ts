import { CofferError } from '../errors.ts';
import type { InteractionKind } from '../interaction/interaction-kinds.ts';
import { finishInteraction } from '../interaction/interaction-repository.ts';
import {
  authTimeNow,
  gone,
  type InteractionDeps,
  identityOfProof,
  SESSION_TTL_MS,
  startSession,
} from '../interaction/interaction-service.ts';
import { renderLoginStep } from '../interaction/login-page.ts';
import { startPage } from '../interaction/page-chrome.ts';
import { findAccountsOfIdentity } from '../users/user-repository.ts';

/**
 * The wallet page's log-in: the person's session starts for the first account of the identity
 * (the page shows every account's credentials) and the browser goes back to the page. An
 * identity without an account here has no wallet, and nobody is signed up by looking.
 */
export function walletKind(deps: InteractionDeps): InteractionKind {
  return {
    name: 'wallet',
    tenantLogin: false,
    asker: async () => ({ client_id: null, name: 'your wallet', privacy_link: null }),
    async logIn(row, proof) {
      const [account] = await findAccountsOfIdentity(deps.db, identityOfProof(deps, proof));
      if (!account) {
        throw new CofferError(
          'not_found',
          'No account here belongs to that wallet or e-mail address, so there is no wallet to show.',
        );
      }
      const authTime = authTimeNow(deps);
      const finished = await finishInteraction(deps.db, row.id, {
        user_id: account.user_id,
        login_type: proof.method,
        auth_time: authTime,
      });
      if (!finished) throw gone();
      return {
        redirectTo: '/wallet',
        sessionId: await startSession(deps, account, proof.method, authTime),
        sessionMaxAgeSeconds: SESSION_TTL_MS / 1000,
      };
    },
    render: async (view, reply) => renderLoginStep(view, startPage(reply)),
  };
}
