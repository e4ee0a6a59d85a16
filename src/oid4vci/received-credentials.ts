import type { JsonWebKey, X509Certificate } from 'node:crypto';
import type { Kysely } from 'kysely';
import { insertReceivedCredential } from '../credentials/credential-repository.ts';
import { contentHash, credentialContext, readable } from '../credentials/credential-service.ts';
import {
  copyKeyContext,
  issuerDisplayContext,
  notificationContext,
  type StoredIssuerDisplay,
} from '../credentials/held-credential-contexts.ts';
import { type RecordHistory, typesOf } from '../credentials/history-events.ts';
import { isUniqueViolation, now } from '../db/dialect.ts';
import type { Database } from '../db/schema.ts';
import { type FormatId, type ParsedCredential, rejected } from '../formats/credential-format.ts';
import type { FormatRegistry } from '../formats/registry.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import type { EncryptedStore } from '../storage/index.ts';
import type { UserIdentity } from '../users/user-repository.ts';
import { type IssuanceKey, privateJwkOf } from './issuer-client.ts';

export interface ReceivedStoreDeps {
  db: Kysely<Database>;
  store: EncryptedStore;
  cipher: FieldCipher;
  formats: FormatRegistry;
  contentKey: Uint8Array;
  issuerTrustAnchors: X509Certificate[];
  /** The wallet history's arrival events (wallet/wallet-history.ts). */
  recordHistory: RecordHistory;
  now: () => Date;
}

/** One copy as the issuer delivered it, with the holder key its proof named. */
export interface ReceivedCopy {
  value: unknown;
  key: IssuanceKey;
}

export interface ReceivedCredential {
  credentialId: string;
  format: FormatId;
  type: string | string[];
}

const sameKey = (a: JsonWebKey, b: JsonWebKey) =>
  a.kty === b.kty && a.crv === b.crv && a.x === b.x && (a.y ?? null) === (b.y ?? null);

/**
 * A copy is kept only when it passes the store's checks and names as its holder a key the
 * wallet proved or attested for this request (SD-JWT cnf, mdoc deviceKey), or the account's
 * own DID for the W3C formats, whose proofs the account's did:key signs. An issuer may answer
 * in another order than the keys were named (an `attestation` proof names them all at once),
 * so the copy is paired with the key it is bound to.
 */
async function checkedCopy(
  deps: ReceivedStoreDeps,
  account: UserIdentity,
  formatId: FormatId,
  copy: ReceivedCopy,
  requestKeys: ReceivedCopy['key'][],
): Promise<{ parsed: ParsedCredential; key: ReceivedCopy['key'] }> {
  const format = deps.formats.get(formatId);
  if ((formatId === 'ldp_vc') !== (typeof copy.value === 'object' && copy.value !== null)) {
    throw rejected(`the issuer's answer is not a ${formatId} credential`);
  }
  const parsed = await readable(format, () =>
    format.parse(copy.value, { now: deps.now(), issuerTrustAnchors: deps.issuerTrustAnchors }),
  );
  const holder = parsed.holder;
  const key =
    holder.kind === 'key'
      ? requestKeys.find((candidate) => sameKey(holder.jwk, candidate.publicJwk))
      : holder.did === account.did
        ? copy.key
        : undefined;
  if (!key) throw rejected('it is not bound to a key this wallet proved to the issuer');
  await readable(format, () => parsed.verify());
  return { parsed, key };
}

/**
 * Stores every copy of one received credential for the chosen account, or none: all copies are
 * checked before the first block is written, and the row and its copies are one transaction.
 */
export async function storeReceivedCredential(
  deps: ReceivedStoreDeps,
  account: UserIdentity,
  input: {
    format: FormatId;
    credentialIssuer: string;
    issuerDisplay: StoredIssuerDisplay;
    copies: ReceivedCopy[];
    notification: unknown;
  },
): Promise<ReceivedCredential> {
  const parsed: ParsedCredential[] = [];
  const keys: ReceivedCopy['key'][] = [];
  const requestKeys = input.copies.map((copy) => copy.key);
  for (const copy of input.copies) {
    const checked = await checkedCopy(deps, account, input.format, copy, requestKeys);
    parsed.push(checked.parsed);
    keys.push(checked.key);
  }
  const first = parsed[0]!;
  const cids = await Promise.all(
    parsed.map((p) => deps.store.putEncrypted(p.stored, credentialContext(account.did))),
  );
  try {
    await insertReceivedCredential(
      deps.db,
      {
        user_id: account.user_id,
        credential_id: first.summary.id,
        cid: cids[0]!,
        content_hash: contentHash(deps, first.stored),
        issuer_client_id: null,
        credential_issuer: input.credentialIssuer,
        notification_sealed:
          input.notification === null
            ? null
            : deps.cipher.encrypt(
                JSON.stringify(input.notification),
                notificationContext(account.did, first.summary.id),
              ),
        issuer_display_sealed: deps.cipher.encrypt(
          JSON.stringify(input.issuerDisplay),
          issuerDisplayContext(account.did, first.summary.id),
        ),
        created_at: now(),
        format: input.format,
      },
      cids.map((cid, i) => ({
        cid,
        holder_key_sealed: deps.cipher.encrypt(
          JSON.stringify(privateJwkOf(keys[i]!)),
          copyKeyContext(account.did, cid),
        ),
      })),
    );
  } catch (error) {
    if (isUniqueViolation(error)) throw rejected(`this wallet already holds credential ${first.summary.id}`);
    throw error;
  }
  await deps.recordHistory([
    {
      account,
      event: {
        kind: 'arrival',
        at: deps.now().toISOString(),
        credential: { id: first.summary.id, format: input.format, types: typesOf(first.summary.type) },
        from: { name: input.issuerDisplay.name, via: 'oid4vci', identifier: input.credentialIssuer },
      },
    },
  ]);
  return { credentialId: first.summary.id, format: input.format, type: first.summary.type };
}
