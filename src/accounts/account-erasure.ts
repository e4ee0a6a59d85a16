import type { DeletionDeps } from '../credentials/credential-deletion.ts';
import type { Dialect } from '../db/dialect.ts';
import { truncateDeletedPages } from '../db/erased-pages.ts';
import { notFound } from '../errors.ts';
import { deleteAccountRows } from './account-repository.ts';

export interface ErasureDeps extends DeletionDeps {
  dialect: Dialect;
}

/**
 * Erases an account (DESIGN.md, A person's data over the years; GDPR art. 17). The rows go in
 * one transaction, so from its commit on every instance refuses the account's access tokens
 * (each bearer check reads the user) and its e-mail and wallet address can sign up again. The
 * blocks go after the commit: a crash in between leaves only blocks no row names, which
 * `coffer storage gc` collects; the opposite order could leave rows naming missing blocks.
 * Issuers that delivered by OpenID4VCI hear `credential_deleted` last; their failures are logged.
 */
export async function eraseAccount(deps: ErasureDeps, userId: number): Promise<void> {
  const deleted = await deleteAccountRows(deps.db, userId);
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
