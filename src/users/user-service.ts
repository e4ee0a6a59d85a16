import type { Kysely } from 'kysely';
import type { ApiCaller } from '../clients/client-repository.ts';
import { isUniqueViolation, now } from '../db/dialect.ts';
import type { Database } from '../db/schema.ts';
import { conflict } from '../errors.ts';
import type { BlindIndex } from '../keys/blind-index.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import { generateHolderKey } from '../keys/holder-key.ts';
import type { EncryptedStore } from '../storage/index.ts';
import { scopedSubClient } from '../subclients/subclient-service.ts';
import { findTakenIdentifiers, type UserCreator, type UserInserter } from './user-repository.ts';
import { normalizeCreateUserBody } from './user-rules.ts';
import type { CreateUserBody } from './user-schemas.ts';

export interface UserDeps {
  db: Kysely<Database>;
  store: EncryptedStore;
  cipher: FieldCipher;
  /** The e-mail's index under the current master key: what new rows hold. */
  emailIndex: BlindIndex;
  /** Its index under every key of the ring, current first: what lookups match (keys/blind-index.ts). */
  emailIndexes: (email: string) => string[];
  /** createUserInserter(db, dialect): group commit of user rows on SQLite. */
  insertUser: UserInserter;
}

/** The block context of a user's profile: the owner is the user's DID, known before the row exists. */
export const profileContext = (did: string) => ({ owner: did, kind: 'profile' });

/** The associated data that binds a sealed holder key to its user. */
export const holderKeyContext = (did: string) => `users/${did}/holder_key`;

/**
 * The caller's own tenant, or with `x-api-subclient-id` one of its sub-clients. Naming a
 * client that is not the caller's sub-client is 403, as on the sub-client endpoints.
 */
export async function tenantOfCaller(
  deps: Pick<UserDeps, 'db'>,
  caller: ApiCaller,
  scope: number | undefined,
): Promise<number> {
  if (scope === undefined) return caller.clientId;
  await scopedSubClient(deps.db, caller, scope);
  return scope;
}

function duplicate(taken: { email: boolean; wallet: boolean }) {
  return conflict(
    taken.email
      ? 'A user with this e-mail address already exists in this tenant.'
      : 'A user with this wallet address already exists in this tenant.',
  );
}

/** Which unique index a violation came from; both databases name the index or its columns. */
function takenByViolation(error: unknown): { email: boolean; wallet: boolean } {
  const e = error as { message?: unknown; constraint?: unknown };
  const text = `${String(e?.constraint ?? '')} ${String(e?.message ?? '')}`;
  return { email: !text.includes('wallet'), wallet: text.includes('wallet') };
}

/**
 * Creates a user: holder key and DID first, so that the DID can name the owner of the
 * encrypted profile block before the row (and its user_id) exists; then the block; then the row.
 */
export async function createUser(
  deps: UserDeps,
  caller: ApiCaller,
  scope: number | undefined,
  body: CreateUserBody,
  by?: UserCreator,
): Promise<{ user_id: number }> {
  const tenantId = await tenantOfCaller(deps, caller, scope);
  const { profile, wallet } = normalizeCreateUserBody(body);
  const emailIndexes = deps.emailIndexes(profile.email_address);
  const emailIndex = emailIndexes[0]!;

  // Spares writing a block that no row would reference; the unique indexes still decide races.
  const taken = await findTakenIdentifiers(deps.db, tenantId, emailIndexes, wallet?.address);
  if (taken.email || taken.wallet) throw duplicate(taken);

  const holder = generateHolderKey();
  const profileCid = await deps.store.putEncrypted(profile, profileContext(holder.did));
  try {
    const userId = await deps.insertUser(
      {
        tenant_id: tenantId,
        email_index: emailIndex,
        wallet_address: wallet?.address ?? null,
        wallet_chain_id: wallet?.chain_id ?? null,
        profile_cid: profileCid,
        did: holder.did,
        holder_key_sealed: deps.cipher.encrypt(
          JSON.stringify(holder.privateJwk),
          holderKeyContext(holder.did),
        ),
        created_at: now(),
      },
      by,
    );
    return { user_id: userId };
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate(takenByViolation(error));
    throw error;
  }
}
