import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { findClient } from '../clients/client-repository.ts';
import type { Database } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import { generateBbsKey } from '../formats/credential-issuance.ts';
import { pemCertificates } from '../keys/certificate-chain.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import { checkKeyAndChain } from '../keys/signing-certificate.ts';
import { issuerIdOf, sealIssuerKeys } from './issuer-keys.ts';
import { findIssuerRow, retireIssuerKey, saveIssuer } from './issuer-repository.ts';

export interface EnabledIssuer {
  client_id: number;
  credential_issuer: string;
  metadata: string;
  /** The issuer of ldp_vc (bbs-2023) credentials. */
  did: string;
  haip: boolean;
  certificate: { subject: string; not_after: string; sha256: string };
}

/**
 * `coffer issuer enable`: gives a client its credential issuer — the ES256 key and chain that
 * sign SD-JWT VCs, mdocs, VC-JWTs and status lists, and a fresh BLS12-381 key for bbs-2023.
 * Enabling again replaces the ES256 key and chain but keeps the BLS key, so the issuer's
 * `did:key` (and every ldp_vc credential it issued) stays valid; the replaced ES256 key is kept
 * only to sign the status lists of the credentials it signed, new credentials get new lists.
 */
export async function enableIssuer(
  deps: { db: Kysely<Database>; cipher: FieldCipher; publicUrl: string; now: Date },
  clientId: number,
  material: { keyPem: string; chainPem: string },
  options: { haip: boolean },
): Promise<EnabledIssuer> {
  if (!(await findClient(deps.db, clientId))) throw notFound(`Client ${clientId}`);
  const privateJwk = checkKeyAndChain(material.keyPem, material.chainPem, deps.now);
  if (privateJwk.crv !== 'P-256') throw new Error('an issuer key must be on P-256 (ES256, as HAIP asks)');
  const existing = await findIssuerRow(deps.db, clientId);
  const bbs = existing ?? (await sealIssuerKeys.bbs(deps.cipher, clientId, await generateBbsKey()));
  await deps.db.transaction().execute(async (tx) => {
    // The key being replaced keeps signing the status lists it signed (status-lists.ts).
    if (existing) await retireIssuerKey(tx, existing, deps.now.toISOString());
    await saveIssuer(tx, {
      client_id: clientId,
      key_sealed: sealIssuerKeys.es256(deps.cipher, clientId, privateJwk),
      chain_pem: material.chainPem,
      bbs_key_sealed: bbs.bbs_key_sealed,
      bbs_did: bbs.bbs_did,
      haip: options.haip ? 1 : 0,
      signing_key_id: randomBytes(12).toString('base64url'),
      created_at: deps.now.toISOString(),
    });
  });
  const leaf = pemCertificates(material.chainPem)[0]!;
  const credentialIssuer = issuerIdOf(deps.publicUrl, clientId);
  return {
    client_id: clientId,
    credential_issuer: credentialIssuer,
    metadata: `${deps.publicUrl}/.well-known/openid-credential-issuer/issuers/${clientId}`,
    did: bbs.bbs_did,
    haip: options.haip,
    certificate: {
      subject: leaf.subject.replaceAll('\n', ', '),
      not_after: new Date(leaf.validTo).toISOString(),
      sha256: leaf.fingerprint256,
    },
  };
}
