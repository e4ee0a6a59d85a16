import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';

export interface VerifierClientRow {
  client_id: number;
  name: string;
  redirect_uris: string;
  verifier_metadata: string | null;
  privacy_link: string | null;
}

export async function findVerifierClient(
  db: Kysely<Database>,
  clientId: number,
): Promise<VerifierClientRow | undefined> {
  return db
    .selectFrom('clients')
    .select(['client_id', 'name', 'redirect_uris', 'verifier_metadata', 'privacy_link'])
    .where('client_id', '=', clientId)
    .where('is_verifier', '=', 1)
    .executeTakeFirst();
}

/** Every credential of the given accounts in the given formats, newest first. */
export async function findCredentialsOfAccounts(db: Kysely<Database>, userIds: number[], formats: string[]) {
  if (userIds.length === 0 || formats.length === 0) return [];
  return db
    .selectFrom('credentials')
    .innerJoin('users', 'users.user_id', 'credentials.user_id')
    .select([
      'credentials.credential_pk',
      'credentials.credential_id',
      'credentials.cid',
      'credentials.prepared_cid',
      'credentials.issuer_client_id',
      'credentials.issuer_display_sealed',
      'credentials.format',
      'users.user_id',
      'users.did',
    ])
    .where('credentials.user_id', 'in', userIds)
    .where('credentials.format', 'in', formats)
    .orderBy('credentials.credential_pk', 'desc')
    .execute();
}

/** What a session's account proves about its person: its wallet and e-mail index. */
/**
 * The copy of a received credential to present next (DESIGN.md, batch issuance): one never
 * presented, else the one presented longest ago; it is marked presented now. Undefined for a
 * credential stored through the API, which has no copies and uses the account's hosted key.
 */
export async function takeCopy(db: Kysely<Database>, credentialPk: number, at: string) {
  const copy = await db
    .selectFrom('credential_copies')
    .select(['copy_index', 'cid', 'holder_key_sealed'])
    .where('credential_pk', '=', credentialPk)
    .orderBy((eb) => eb.case().when('presented_at', 'is', null).then(0).else(1).end())
    .orderBy('presented_at')
    .orderBy('copy_index')
    .limit(1)
    .executeTakeFirst();
  if (!copy) return undefined;
  await db
    .updateTable('credential_copies')
    .set({ presented_at: at })
    .where('credential_pk', '=', credentialPk)
    .where('copy_index', '=', copy.copy_index)
    .execute();
  return copy;
}
