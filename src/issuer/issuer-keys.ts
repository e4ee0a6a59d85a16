import type { JsonWebKey, KeyObject } from 'node:crypto';
import type { Selectable } from 'kysely';
import { fastBbs } from '../bbs/index.ts';
import type { IssuersTable } from '../db/schema.ts';
import {
  bbsDidKeyOf,
  type IssuerSigningMaterial,
  prepareSigningMaterial,
} from '../formats/credential-issuance.ts';
import { pemCertificates } from '../keys/certificate-chain.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import { deriveRequestEncryptionKey, type RequestEncryptionKey } from './message-encryption.ts';

/** The credential issuer identifier of a client (DESIGN.md): a path under PUBLIC_URL. */
export const issuerIdOf = (publicUrl: string, clientId: number) => `${publicUrl}/issuers/${clientId}`;

export const es256Context = (clientId: number) => `issuers/${clientId}/es256`;
export const bbsContext = (clientId: number) => `issuers/${clientId}/bbs`;

export const sealIssuerKeys = {
  es256: (cipher: FieldCipher, clientId: number, privateJwk: JsonWebKey) =>
    cipher.encrypt(JSON.stringify(privateJwk), es256Context(clientId)),
  async bbs(cipher: FieldCipher, clientId: number, key: { secretKey: Uint8Array; publicKey: Uint8Array }) {
    return {
      bbs_key_sealed: cipher.encrypt(Buffer.from(key.secretKey).toString('base64url'), bbsContext(clientId)),
      bbs_did: bbsDidKeyOf(key.publicKey),
    };
  },
};

/** An issuer's keys, opened: what signs its credentials and status lists. */
export interface IssuerKeys {
  clientId: number;
  issuerId: string;
  haip: boolean;
  es256: { privateJwk: JsonWebKey; privateKey: KeyObject; x5c: string[] };
  bbs: { secretKey: Uint8Array; publicKey: Uint8Array; did: string; verificationMethod: string };
  /** What the formats sign with (formats/credential-issuance.ts), its ES256 key imported once. */
  material: IssuerSigningMaterial;
  /** The credential_request_encryption key (§10), derived, not stored (message-encryption.ts). */
  encryption: RequestEncryptionKey;
}

export async function openIssuerKeys(
  cipher: FieldCipher,
  publicUrl: string,
  row: Selectable<IssuersTable>,
  /** deriveKey(master key, 'issuer-request-encryption/v1'): each issuer's encryption key comes from it. */
  requestEncryptionSecret: Uint8Array,
): Promise<IssuerKeys> {
  const privateJwk = JSON.parse(cipher.decrypt(row.key_sealed, es256Context(row.client_id))) as JsonWebKey;
  const secretKey = new Uint8Array(
    Buffer.from(cipher.decrypt(row.bbs_key_sealed, bbsContext(row.client_id)), 'base64url'),
  );
  const publicKey = await fastBbs.secretKeyToPublicKey({ secretKey });
  const x5c = pemCertificates(row.chain_pem).map((c) => c.raw.toString('base64'));
  const issuerId = issuerIdOf(publicUrl, row.client_id);
  const material = prepareSigningMaterial({
    issuerId,
    es256: { privateJwk, x5c },
    bbs: { secretKey, publicKey, did: row.bbs_did },
  });
  return {
    clientId: row.client_id,
    issuerId,
    haip: row.haip === 1,
    es256: {
      privateJwk,
      privateKey: material.es256Key,
      x5c,
    },
    bbs: {
      secretKey,
      publicKey,
      did: row.bbs_did,
      verificationMethod: `${row.bbs_did}#${row.bbs_did.slice('did:key:'.length)}`,
    },
    material,
    encryption: deriveRequestEncryptionKey(requestEncryptionSecret, row.client_id),
  };
}

/** Opened keys per client, for a minute: enabling again (new chain) shows within that time. */
export function createIssuerKeyCache(
  load: (clientId: number) => Promise<Selectable<IssuersTable> | undefined>,
  open: (row: Selectable<IssuersTable>) => Promise<IssuerKeys>,
  now: () => number = Date.now,
) {
  const cache = new Map<number, { at: number; keys: Promise<IssuerKeys | undefined> }>();
  return (clientId: number): Promise<IssuerKeys | undefined> => {
    const hit = cache.get(clientId);
    if (hit && now() - hit.at < 60_000) return hit.keys;
    // An issuer not enabled yet is not remembered: `coffer issuer enable` counts at once.
    const keys = load(clientId).then((row) => {
      if (!row) cache.delete(clientId);
      return row ? open(row) : undefined;
    });
    if (cache.size > 1000) cache.clear();
    cache.set(clientId, { at: now(), keys });
    keys.catch(() => cache.delete(clientId));
    return keys;
  };
}
