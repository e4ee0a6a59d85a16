import type { AuditContext } from '../audit/audit-events.ts';
import type { DeletionDeps } from '../credentials/credential-deletion.ts';
import type { Dialect } from '../db/dialect.ts';
import { truncateDeletedPages } from '../db/erased-pages.ts';
import { notFound } from '../errors.ts';
import type { IssuerDeps } from '../issuer/issuer-deps.ts';
import { prepareOfferCancellation } from '../issuer/offer-cancellation.ts';
import { deleteClaimsAnsweredBy } from '../verifier/verifier-repository.ts';
import { deleteAccountRows } from './account-repository.ts';

export interface ErasureDeps extends DeletionDeps {
  dialect: Dialect;
  /** Signs the tenants' callback events of the offers an erasure cancels. */
  offerEvents: Pick<IssuerDeps, 'keys' | 'config' | 'now'>;
}

/**
 * Erases an account (DESIGN.md, A person's data over the years; GDPR art. 17). The rows go in
 * one transaction, so from its commit on every instance refuses the account's access tokens
 * (each bearer check reads the user) and its e-mail and wallet address can sign up again. The
 * blocks go after the commit: a crash in between leaves only blocks no row names, which
 * `coffer storage gc` collects; the opposite order could leave rows naming missing blocks.
 * Issuers that delivered by OpenID4VCI hear `credential_deleted` last; their failures are logged.
 * Offers a tenant's issuer made for the account and has not issued are cancelled in the same
 * transaction (issuer/offer-cancellation.ts), and the claims that the account's hosted wallet
 * gave Coffer's own verifier are deleted from those results.
 */
export async function eraseAccount(
  deps: ErasureDeps,
  account: { user_id: number; tenant_id: number },
  by: AuditContext,
): Promise<void> {
  const userId = account.user_id;
  const cancelOffers = await prepareOfferCancellation(
    { ...deps.offerEvents, db: deps.db, ...(deps.audit ? { audit: deps.audit } : {}) },
    userId,
    by,
  );
  const deleted = await deleteAccountRows(
    deps.db,
    deps.dialect,
    userId,
    async (trx) => {
      await cancelOffers(trx);
      await deleteClaimsAnsweredBy(trx, userId);
    },
    async (trx) => {
      await deps.audit?.record(trx, {
        ...by,
        clientId: account.tenant_id,
        type: 'user.erase',
        targets: { user_id: userId },
      });
    },
  );
  if (!deleted) throw notFound('The user');
  await truncateDeletedPages(deps.db, deps.dialect);
  await Promise.all(
    deleted.blocks.map((cid) =>
      deps.store.removeEncrypted(cid).catch((error: Error) => {
        deps.log.warn({ cid, reason: error.message }, 'a block of an erased account was not removed');
      }),
    ),
  );
  await Promise.all(deleted.notify.map((row) => deps.notifyIssuer(row)));
}
