import { type KeyObject, randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { Database, IssuedCredentialStatus, StatusListsTable } from '../db/schema.ts';
import { CofferError } from '../errors.ts';
import type { Bbs2023Deps } from '../formats/ldp-vc/bbs-2023/base-proof.ts';
import {
  bitstringListCredential,
  signBitstringListJwt,
  signBitstringListLdp,
} from '../status/bitstring-status-list-publish.ts';
import {
  emptyBitstring,
  emptyTokenList,
  LIST_SIZE,
  setBitstringBit,
  setTokenStatus,
  TOKEN_STATUS,
} from '../status/status-list-bits.ts';
import { signTokenStatusListCwt, signTokenStatusListJwt } from '../status/token-status-list-publish.ts';
import type { IssuedFormat } from './configurations.ts';
import type { IssuerKeys } from './issuer-keys.ts';

/**
 * Status lists of an issuer (DESIGN.md, Status and revocation): one list per kind, filled at
 * random indexes, a new list when an eighth of one is used. Token Status Lists
 * (2 bits: valid, invalid, suspended) for SD-JWT VCs and mdocs; for the W3C formats a Bitstring
 * Status List of purpose revocation (status-changes.ts refuses to suspend them).
 */
export type ListKind = 'token' | 'bitstring-jwt' | 'bitstring-ldp';

export const kindOfFormat = (format: IssuedFormat): ListKind =>
  format === 'dc+sd-jwt' || format === 'mso_mdoc'
    ? 'token'
    : format === 'jwt_vc_json'
      ? 'bitstring-jwt'
      : 'bitstring-ldp';

/** Seconds a holder or verifier may keep a list: a revocation shows within this time. */
export const LIST_TTL = 60;
const FILL_LIMIT = LIST_SIZE / 8;
const TOKEN_BITS = 2;

export const statusListUri = (publicUrl: string, listId: string) => `${publicUrl}/v1/status-lists/${listId}`;

const emptyList = (kind: ListKind) => (kind === 'token' ? emptyTokenList(TOKEN_BITS) : emptyBitstring());

/** Whose list: an issuer's, signed by one of its keys (a new key starts new lists). */
export interface ListOwner {
  clientId: number;
  signingKeyId: string;
}

async function openList(db: Kysely<Database>, owner: ListOwner, kind: ListKind, now: string) {
  const open = await db
    .selectFrom('status_lists')
    .select(['id', 'used'])
    .where('client_id', '=', owner.clientId)
    .where('signing_key_id', '=', owner.signingKeyId)
    .where('kind', '=', kind)
    .where('used', '<', FILL_LIMIT)
    .orderBy('updated_at', 'desc')
    .executeTakeFirst();
  if (open) return open.id;
  const id = randomBytes(16).toString('base64url');
  await db
    .insertInto('status_lists')
    .values({
      id,
      client_id: owner.clientId,
      signing_key_id: owner.signingKeyId,
      kind,
      size: LIST_SIZE,
      bytes: Buffer.from(emptyList(kind)).toString('base64'),
      updated_at: now,
    })
    .execute();
  return id;
}

/**
 * A random index of the open list of that kind signed by the key that signs the credential. It is reserved when the credential's
 * row is inserted: (list, index) is unique, so a collision is a unique violation and a new draw.
 * A list takes at most an eighth of its entries, so a draw collides at most one time in eight,
 * and the many unused entries hide which indexes are real.
 */
export async function drawStatusEntry(db: Kysely<Database>, owner: ListOwner, kind: ListKind, now: string) {
  return { listId: await openList(db, owner, kind, now), index: randomIndex() };
}

export async function countStatusEntry(tx: Kysely<Database>, listId: string): Promise<void> {
  await tx
    .updateTable('status_lists')
    .set((eb) => ({ used: eb('used', '+', 1) }))
    .where('id', '=', listId)
    .execute();
}

const randomIndex = () => randomBytes(4).readUInt32BE() % LIST_SIZE;

/** Writes a credential's status into its list; the version (ETag) moves so caches refetch. */
export async function writeStatus(
  db: Kysely<Database>,
  listId: string,
  index: number,
  status: IssuedCredentialStatus,
  now: string,
): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const list = await db
      .selectFrom('status_lists')
      .selectAll()
      .where('id', '=', listId)
      .executeTakeFirstOrThrow();
    const bytes = new Uint8Array(Buffer.from(list.bytes, 'base64'));
    if (list.kind === 'token') {
      setTokenStatus(
        bytes,
        TOKEN_BITS,
        index,
        status === 'valid'
          ? TOKEN_STATUS.VALID
          : status === 'revoked'
            ? TOKEN_STATUS.INVALID
            : TOKEN_STATUS.SUSPENDED,
      );
    } else {
      setBitstringBit(bytes, index, status !== 'valid');
    }
    const updated = await db
      .updateTable('status_lists')
      .set({ bytes: Buffer.from(bytes).toString('base64'), version: list.version + 1, updated_at: now })
      .where('id', '=', listId)
      .where('version', '=', list.version)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 1) return;
  }
  throw new CofferError('server_error', 'The status list is changing too often; try again.');
}

export type ListMediaType =
  | 'application/statuslist+jwt'
  | 'application/statuslist+cwt'
  | 'application/vc+jwt'
  | 'application/vc+ld+json';

/** What signs a list: the ES256 key it belongs to, and the issuer's BLS key for bbs-2023 lists. */
export interface ListSigner {
  es256: { privateKey: KeyObject; x5c: string[] };
  issuerId: string;
  bbs: IssuerKeys['bbs'];
}

/**
 * The list as its kind serves it, signed at `iat`; a Token Status List also as CWT when asked.
 * The same list version signed at the same `iat` says the same thing on every instance.
 */
export async function renderStatusList(
  list: Selectable<StatusListsTable>,
  signer: ListSigner,
  publicUrl: string,
  wantsCwt: boolean,
  bbs2023: Bbs2023Deps,
  iat: Date,
): Promise<{ mediaType: ListMediaType; body: string | Uint8Array }> {
  const uri = statusListUri(publicUrl, list.id);
  const bytes = new Uint8Array(Buffer.from(list.bytes, 'base64'));
  const validUntil = new Date(iat.getTime() + 24 * 3600 * 1000);
  if (list.kind === 'token') {
    const input = { uri, bits: TOKEN_BITS as 2, bytes, iat, exp: validUntil, ttl: LIST_TTL };
    return wantsCwt
      ? { mediaType: 'application/statuslist+cwt', body: signTokenStatusListCwt(input, signer.es256) }
      : { mediaType: 'application/statuslist+jwt', body: signTokenStatusListJwt(input, signer.es256) };
  }
  const issuer = list.kind === 'bitstring-jwt' ? signer.issuerId : signer.bbs.did;
  const credential = bitstringListCredential({
    uri,
    issuer,
    purpose: 'revocation',
    bytes,
    validFrom: iat,
    validUntil,
    ttl: LIST_TTL * 1000,
  });
  if (list.kind === 'bitstring-jwt')
    return { mediaType: 'application/vc+jwt', body: signBitstringListJwt(credential, signer.es256) };
  const signed = await signBitstringListLdp(credential, signer.bbs, bbs2023);
  return { mediaType: 'application/vc+ld+json', body: JSON.stringify(signed) };
}
