import type { Static } from 'typebox';
import type { InteractionKind } from '../interaction/interaction-kinds.ts';
import type { ConsentBody } from '../interaction/interaction-schemas.ts';
import { continueWithIdentity, notTakenHere } from '../interaction/interaction-service.ts';
import { startPage } from '../interaction/page-chrome.ts';
import { logoOrigins, renderIssuancePage } from './issuance-page.ts';
import { decideIssuance, describeIssuance, type IssuanceDeps, resultView } from './issuance-service.ts';

/** What an issuance interaction keeps in `params` that the log-in part shows. */
interface IssuanceDisplay {
  issuer: { name: string };
}

/**
 * A credential offer, or an issuance the person started from their wallet (OpenID4VCI): they
 * prove who they are, see the issuer and what it offers, and accept (with a tx_code when asked)
 * or decline.
 */
export function issuanceKind(deps: IssuanceDeps): InteractionKind {
  return {
    name: 'issuance',
    tenantLogin: false,
    async asker(row) {
      const { issuer } = JSON.parse(row.params) as IssuanceDisplay;
      return { client_id: null, name: issuer.name, privacy_link: null };
    },
    logIn: (row, proof) => continueWithIdentity(deps.interactions, row, proof),
    describe: async (id) => ({ issuance: await describeIssuance(deps, id) }),
    async render(view, reply) {
      const described = await describeIssuance(deps, view.id);
      return renderIssuancePage({
        interactionId: view.id,
        csrfToken: view.csrf_token,
        siwe: view.siwe,
        // The issuer's logo is the one image from elsewhere the page may load.
        cspNonce: startPage(reply, logoOrigins(described)),
        loggedIn: view.logged_in,
        issuance: described,
      });
    },
    answer: {
      at: 'consent',
      async decide(row, answer) {
        const body = answer as Static<typeof ConsentBody>;
        if (body.selections !== undefined) throw notTakenHere('selections', 'a credential offer');
        const result = await decideIssuance(deps, row.id, {
          decision: body.decision,
          tx_code: body.tx_code,
          account: body.account,
          credential_configuration_ids: body.credential_configuration_ids,
        });
        return result.redirectTo ? { redirect_to: result.redirectTo } : resultView(result);
      },
    },
  };
}
