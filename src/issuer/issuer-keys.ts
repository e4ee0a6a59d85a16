import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto';
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
  /** The id of this ES256 key: the status lists it signs carry it (status-lists.ts). */
  signingKeyId: string;
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
    signingKeyId: row.signing_key_id,
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

/** An issuer's earlier ES256 key, opened to sign the status lists it signed before. */
export function openRetiredKey(
  cipher: FieldCipher,
  row: { client_id: number; key_sealed: string; chain_pem: string },
): { privateKey: KeyObject; x5c: string[] } {
  const privateJwk = JSON.parse(cipher.decrypt(row.key_sealed, es256Context(row.client_id))) as JsonWebKey;
  return {
    privateKey: createPrivateKey({ key: privateJwk, format: 'jwk' }),
    x5c: pemCertificates(row.chain_pem).map((c) => c.raw.toString('base64')),
  };
}

/**
 * Opened keys per client, by the id of the key enabled: the row is read on every call (one
 * primary-key lookup), so `coffer issuer enable` counts at once on every instance, and a
 * credential is never signed by a key its status list does not belong to; opening (unsealing,
 * the BLS public key) happens once per key.
 */
export function createIssuerKeyCache(
  load: (clientId: number) => Promise<Selectable<IssuersTable> | undefined>,
  open: (row: Selectable<IssuersTable>) => Promise<IssuerKeys>,
) {
  const cache = new Map<number, { signingKeyId: string; keys: Promise<IssuerKeys> }>();
  return async (clientId: number): Promise<IssuerKeys | undefined> => {
    const row = await load(clientId);
    if (!row) {
      cache.delete(clientId);
      return undefined;
    }
    const hit = cache.get(clientId);
    if (hit && hit.signingKeyId === row.signing_key_id) return hit.keys;
    const keys = open(row);
    if (cache.size > 1000) cache.clear();
    cache.set(clientId, { signingKeyId: row.signing_key_id, keys });
    keys.catch(() => cache.delete(clientId));
    return keys;
  };
}
