import type { Static } from 'typebox';
import { findCopyBlocks, findExportedAccounts } from '../accounts/account-repository.ts';
import type { AccountExport } from '../accounts/account-schemas.ts';
import { credentialContext } from '../credentials/credential-service.ts';
import { findClientNames, findWalletCredentials } from '../credentials/held-credential-repository.ts';
import type { UserIdentity } from '../users/user-repository.ts';
import { profileContext } from '../users/user-service.ts';
import { readHistory } from './wallet-history.ts';
import type { WalletPageDeps } from './wallet-service.ts';

/**
 * Everything Coffer holds about every account of the person (GDPR art. 20), opened: the profile,
 * each credential as it was issued (and its other copies), the whole history. Keys stay behind:
 * a holder key is what makes a credential the person's in this wallet, and an export is a file
 * that travels.
 */
export async function exportWallet(
  deps: Pick<WalletPageDeps, 'db' | 'store' | 'cipher' | 'now'>,
  accounts: UserIdentity[],
): Promise<Static<typeof AccountExport>> {
  const userIds = accounts.map((a) => a.user_id);
  const [rows, credentials, copies] = await Promise.all([
    findExportedAccounts(deps.db, userIds),
    findWalletCredentials(deps.db, userIds),
    findCopyBlocks(deps.db, userIds),
  ]);
  const apps = await findClientNames(deps.db, [
    ...new Set(credentials.flatMap((c) => (c.issuer_client_id === null ? [] : [c.issuer_client_id]))),
  ]);
  const exported = await Promise.all(
    rows.map(async (account) => {
      const own = credentials.filter((c) => c.user_id === account.user_id);
      const context = credentialContext(account.did);
      return {
        user_id: account.user_id,
        did: account.did,
        tenant: { client_id: account.tenant_id, name: account.tenant_name },
        created_at: account.created_at,
        email_verified: account.email_verified === 1,
        wallet_address: account.wallet_address,
        profile: await deps.store.getEncrypted(account.profile_cid, profileContext(account.did)),
        credentials: await Promise.all(
          own.map(async (row) => ({
            id: row.credential_id,
            format: row.format,
            received_at: row.created_at,
            received_from: row.credential_issuer ?? apps.get(row.issuer_client_id ?? -1) ?? 'an app',
            credential: await deps.store.getEncrypted(row.cid, context),
            other_copies: await Promise.all(
              (copies.get(row.credential_pk) ?? [])
                .filter((cid) => cid !== row.cid)
                .map((cid) => deps.store.getEncrypted(cid, context)),
            ),
          })),
        ),
        history: await readHistory(deps, [account], null),
      };
    }),
  );
  return { exported_at: deps.now().toISOString(), accounts: exported };
}
