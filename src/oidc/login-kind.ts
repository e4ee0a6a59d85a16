import type { FinishedLogin, InteractionKind, LoginProof } from '../interaction/interaction-kinds.ts';
import type { InteractionRow } from '../interaction/interaction-repository.ts';
import {
  clientAsker,
  gone,
  type InteractionDeps,
  logInToTenant,
  SESSION_TTL_MS,
  startInteraction,
} from '../interaction/interaction-service.ts';
import { renderLoginStep } from '../interaction/login-page.ts';
import { startPage } from '../interaction/page-chrome.ts';
import { type AuthorizationRequest, authorizationResponse, issueAuthorizationCode } from './authorization.ts';
import { oidcClaimsOfCredential, sealLoginClaims } from './login-claims.ts';

/** The tenant a client's users belong to: the client itself (a sub-client is its own tenant). */
function tenantOfClient(row: InteractionRow): number {
  if (row.client_id === null) throw gone();
  return row.client_id;
}

/**
 * An app's log-in (`GET /v2/openidc/authorize` without a session): the person logs in to the
 * client's tenant, signed up there when unknown, and the browser goes back with a code. After a
 * credential log-in the code carries the disclosed claims (sealed) for the tokens.
 */
export function loginKind(deps: InteractionDeps): InteractionKind {
  return {
    name: 'login',
    tenantLogin: true,
    asker: (row) => clientAsker(deps, row),
    async logIn(row: InteractionRow, proof: LoginProof): Promise<FinishedLogin> {
      const tenant = tenantOfClient(row);
      // A credential's verified e-mail claim logs in (or signs up) like a proven e-mail address.
      const { user, authTime, sessionId } = await logInToTenant(deps, row, tenant, proof);
      const request = JSON.parse(row.params) as AuthorizationRequest;
      const claimsSealed =
        proof.method === 'credential'
          ? sealLoginClaims(
              deps.cipher,
              request.clientId,
              user.user_id,
              oidcClaimsOfCredential(proof.claims, proof.email),
            )
          : null;
      const grant = { loginType: proof.method, authTime, claimsSealed };
      const code = await issueAuthorizationCode(deps.db, request, user, grant, authTime);
      return {
        redirectTo: authorizationResponse(request, deps.config.publicUrl, { code }),
        sessionId,
        sessionMaxAgeSeconds: SESSION_TTL_MS / 1000,
      };
    },
    render: async (view, reply) => renderLoginStep(view, startPage(reply)),
  };
}

export function startLoginInteraction(deps: InteractionDeps, request: AuthorizationRequest): Promise<string> {
  return startInteraction(deps, {
    kind: 'login',
    clientId: request.clientId,
    params: JSON.stringify(request),
  });
}
