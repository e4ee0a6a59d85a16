import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject, randomBytes } from 'node:crypto';
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import { now } from '../db/dialect.ts';
import type { Database } from '../db/schema.ts';
import type { FieldCipher } from './field-cipher.ts';

/**
 * ES256 signing keys kept in the database (private parts sealed with the master key), so every
 * instance that shares the database signs and verifies alike. The newest key signs; older keys
 * stay published until `retire_after`, when every token they signed has expired.
 */

export interface SigningKey {
  kid: string;
  alg: 'ES256';
  privateKey: CryptoKey;
  /** The same key for node:crypto (compact-jws.ts signs the tokens with it, synchronously). */
  privateKeyObject: KeyObject;
  publicJwk: JWK;
}

export interface PublishedKey {
  kid: string;
  publicKey: CryptoKey;
  publicKeyObject: KeyObject;
  publicJwk: JWK;
}

export const sealContext = (kid: string) => `signing_keys/${kid}`;

/** Adds a new signing key and schedules the current ones to leave the JWKS after `retireAfterSeconds`. */
export async function rotateSigningKey(
  db: Kysely<Database>,
  cipher: FieldCipher,
  retireAfterSeconds: number,
): Promise<{ kid: string }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = randomBytes(12).toString('base64url');
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  const privateJwk = await exportJWK(privateKey);
  const retireAt = new Date(Date.now() + retireAfterSeconds * 1000).toISOString();
  await db.transaction().execute(async (tx) => {
    await tx
      .updateTable('signing_keys')
      .set({ retire_after: retireAt })
      .where('retire_after', 'is', null)
      .execute();
    await tx
      .insertInto('signing_keys')
      .values({
        kid,
        alg: 'ES256',
        public_jwk: JSON.stringify(publicJwk),
        private_jwk_sealed: cipher.encrypt(JSON.stringify(privateJwk), sealContext(kid)),
        created_at: now(),
        retire_after: null,
      })
      .execute();
  });
  return { kid };
}

export interface KeyRing {
  /** The key to sign with now. */
  current(): Promise<SigningKey>;
  /** A published key by kid (reloads once from the database for a kid it does not know yet). */
  find(kid: string): Promise<PublishedKey | undefined>;
  /** The public JWKS document. */
  jwks(): Promise<{ keys: JWK[] }>;
}

/**
 * Caches the keys for `refreshSeconds`, so a rotation made by the CLI or another instance is
 * picked up within that time, and an unknown kid triggers an immediate reload.
 */
export function createKeyRing(
  db: Kysely<Database>,
  cipher: FieldCipher,
  options: { retireAfterSeconds: number; refreshSeconds?: number },
): KeyRing {
  const refreshMs = (options.refreshSeconds ?? 30) * 1000;
  let lastForcedReload = 0;
  let loaded: Promise<{ at: number; signing: SigningKey; published: Map<string, PublishedKey> }> | undefined;

  async function load() {
    const nowIso = new Date().toISOString();
    let rows = await db
      .selectFrom('signing_keys')
      .selectAll()
      .where((eb) => eb.or([eb('retire_after', 'is', null), eb('retire_after', '>', nowIso)]))
      .orderBy('created_at', 'desc')
      .execute();
    if (!rows.some((r) => r.retire_after === null)) {
      // First start (or every key retired): make one. Two instances racing both add one; the newest signs.
      await rotateSigningKey(db, cipher, options.retireAfterSeconds);
      rows = await db
        .selectFrom('signing_keys')
        .selectAll()
        .where((eb) => eb.or([eb('retire_after', 'is', null), eb('retire_after', '>', nowIso)]))
        .orderBy('created_at', 'desc')
        .execute();
    }
    const published = new Map<string, PublishedKey>();
    for (const row of rows) {
      const publicJwk = JSON.parse(row.public_jwk) as JWK;
      published.set(row.kid, {
        kid: row.kid,
        publicJwk,
        publicKey: (await importJWK(publicJwk, 'ES256')) as CryptoKey,
        publicKeyObject: createPublicKey({ key: publicJwk as JsonWebKey, format: 'jwk' }),
      });
    }
    const active = rows.find((r) => r.retire_after === null)!;
    const privateJwk = JSON.parse(cipher.decrypt(active.private_jwk_sealed, sealContext(active.kid))) as JWK;
    const signing: SigningKey = {
      kid: active.kid,
      alg: 'ES256',
      privateKey: (await importJWK(privateJwk, 'ES256')) as CryptoKey,
      privateKeyObject: createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' }),
      publicJwk: published.get(active.kid)!.publicJwk,
    };
    return { at: Date.now(), signing, published };
  }

  async function state(force = false) {
    const current = loaded ? await loaded.catch(() => undefined) : undefined;
    if (!force && current && Date.now() - current.at < refreshMs) return current;
    loaded = load();
    return loaded;
  }

  return {
    current: async () => (await state()).signing,
    async find(kid) {
      const known = (await state()).published.get(kid);
      if (known || Date.now() - lastForcedReload < 5000) return known;
      // An unknown kid may be a key another instance just made; reload, but at most every 5 s so
      // tokens with made-up kids cannot turn into a stream of database reads.
      lastForcedReload = Date.now();
      return (await state(true)).published.get(kid);
    },
    async jwks() {
      return { keys: [...(await state()).published.values()].map((k) => k.publicJwk) };
    },
  };
}
