import type { Static } from 'typebox';
import type { InteractionKind } from '../interaction/interaction-kinds.ts';
import type { ConsentBody } from '../interaction/interaction-schemas.ts';
import { continueWithIdentity, notTakenHere } from '../interaction/interaction-service.ts';
import { startPage } from '../interaction/page-chrome.ts';
import { renderConsentPage } from './consent-page.ts';
import { decideConsent, describeConsent, type PresentationDeps } from './presentation-service.ts';

/** What a consent interaction keeps in `params` that the log-in part shows. */
interface ConsentDisplay {
  verifier: { name: string; privacyLink: string | null };
}

/**
 * A verifier's presentation request (OpenID4VP): the person proves who they are (unless a session
 * says so), sees what is asked and from which of their credentials, and approves or declines.
 */
export function consentKind(deps: PresentationDeps): InteractionKind {
  return {
    name: 'consent',
    tenantLogin: false,
    async asker(row) {
      const { verifier } = JSON.parse(row.params) as ConsentDisplay;
      return { client_id: row.client_id, name: verifier.name, privacy_link: verifier.privacyLink };
    },
    logIn: (row, proof) => continueWithIdentity(deps.interactions, row, proof),
    describe: async (id) => ({ consent: await describeConsent(deps, id) }),
    render: async (view, reply) =>
      renderConsentPage({
        interactionId: view.id,
        csrfToken: view.csrf_token,
        siwe: view.siwe,
        cspNonce: startPage(reply),
        loggedIn: view.logged_in,
        consent: await describeConsent(deps, view.id),
        privacyLink: view.client.privacy_link,
      }),
    answer: {
      at: 'consent',
      async decide(row, answer) {
        const body = answer as Static<typeof ConsentBody>;
        const what = 'a presentation request';
        if (body.tx_code !== undefined) throw notTakenHere('tx_code', what);
        if (body.credential_configuration_ids !== undefined) {
          throw notTakenHere('credential_configuration_ids', what);
        }
        if (body.account !== undefined) throw notTakenHere('account', what);
        const result = await decideConsent(deps, row.id, {
          decision: body.decision,
          selections: body.selections,
        });
        return result.redirectTo ? { redirect_to: result.redirectTo } : { next: 'done' };
      },
    },
  };
}
