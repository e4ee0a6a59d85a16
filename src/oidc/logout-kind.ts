import type { InteractionKind } from '../interaction/interaction-kinds.ts';
import { finishInteraction } from '../interaction/interaction-repository.ts';
import { gone, type InteractionDeps } from '../interaction/interaction-service.ts';
import { startPage } from '../interaction/page-chrome.ts';
import { renderLogoutConfirmPage } from './logout-page.ts';

/** What the end-session endpoint keeps in a confirmation's `params`. */
export interface LogoutParams {
  clientName: string | null;
  returnTo: string | null;
}

/**
 * A sign-out an app asked for without proving whose session it is (RP-Initiated Logout 1.0 §6):
 * the person confirms or stays. Nobody logs in here. Answered once, either way.
 */
export function logoutKind(deps: InteractionDeps): InteractionKind {
  return {
    name: 'logout',
    tenantLogin: false,
    async asker(row) {
      const { clientName } = JSON.parse(row.params) as LogoutParams;
      return { client_id: row.client_id, name: clientName ?? '', privacy_link: null };
    },
    render: async (view, reply) =>
      renderLogoutConfirmPage({
        interactionId: view.id,
        csrfToken: view.csrf_token,
        cspNonce: startPage(reply),
        host: new URL(deps.config.publicUrl).host,
        clientName: view.client.name || null,
      }),
    answer: {
      at: 'logout',
      async decide(row, body) {
        if (!(await finishInteraction(deps.db, row.id, {}))) throw gone();
        if (body['decision'] === 'stay') return { next: 'done' };
        const { returnTo } = JSON.parse(row.params) as LogoutParams;
        return { endSession: true, ...(returnTo ? { redirect_to: returnTo } : { next: 'done' }) };
      },
    },
  };
}
