import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Selectable } from 'kysely';
import type { FederationKeysTable } from '../db/schema.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import type { StatementSigner } from './federation-statements.ts';

/** How long a retired federation key stays published beside its successor. */
export const ROTATION_OVERLAP_MS = 7 * 86_400_000;
/**
 * A new key is published at once but signs only a day later (a statement's lifetime): the
 * superior has that long to take it into its statement about Coffer, so no chain breaks.
 */
export const ACTIVATION_DELAY_MS = 86_400_000;

export const federationKeyContext = (kid: string) => `federation/keys/${kid}`;
export const entityKeyContext = (clientId: number) => `federation/entities/${clientId}`;
export const encryptionKeyContext = (clientId: number) => `federation/entities/${clientId}/encryption`;

/** A new ES256 key, named by its JWK thumbprint (RFC 7638). */
export async function newFederationKey(): Promise<{ kid: string; privateJwk: JWK }> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const privateJwk = await exportJWK(privateKey);
  return { kid: await calculateJwkThumbprint(privateJwk), privateJwk };
}

/** A new ECDH-ES P-256 key to which wallets encrypt their answers, named by its thumbprint. */
export async function newEncryptionKey(): Promise<{ kid: string; privateJwk: JWK }> {
  const { privateKey } = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
  const privateJwk = await exportJWK(privateKey);
  return { kid: await calculateJwkThumbprint(privateJwk), privateJwk };
}

export const publicEncryptionJwkOf = (privateJwk: JWK, kid: string): JWK => ({
  kty: privateJwk.kty!,
  crv: privateJwk.crv!,
  x: privateJwk.x!,
  y: privateJwk.y!,
  kid,
  alg: 'ECDH-ES',
  use: 'enc',
});

export const publicJwkOf = (privateJwk: JWK, kid: string): JWK => ({
  kty: privateJwk.kty!,
  crv: privateJwk.crv!,
  x: privateJwk.x!,
  y: privateJwk.y!,
  kid,
  alg: 'ES256',
  use: 'sig',
});

export function openKey(
  cipher: FieldCipher,
  sealed: string,
  context: string,
  kid: string,
): StatementSigner & { publicJwk: JWK } {
  const privateJwk = JSON.parse(cipher.decrypt(sealed, context)) as JWK;
  return {
    kid,
    privateKey: createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' }),
    publicJwk: publicJwkOf(privateJwk, kid),
  };
}

/**
 * The keys Coffer publishes (in use, due, or retired within the overlap) and the one that signs:
 * a key whose retirement is still ahead (its successor not active yet), else the current one.
 */
export function federationKeysOf(rows: Selectable<FederationKeysTable>[], cipher: FieldCipher, now: Date) {
  const at = now.getTime();
  const retiredAt = (row: Selectable<FederationKeysTable>) =>
    row.retired_at === null ? Number.POSITIVE_INFINITY : new Date(row.retired_at).getTime();
  const published = rows.filter((row) => retiredAt(row) > at - ROTATION_OVERLAP_MS);
  const signing = rows
    .filter((row) => retiredAt(row) > at)
    .sort((a, b) => retiredAt(a) - retiredAt(b) || b.created_at.localeCompare(a.created_at))[0];
  if (!signing) return undefined;
  const opened = published.map((row) =>
    openKey(cipher, row.key_sealed, federationKeyContext(row.kid), row.kid),
  );
  return { jwks: opened.map((key) => key.publicJwk), signer: opened.find((key) => key.kid === signing.kid)! };
}
