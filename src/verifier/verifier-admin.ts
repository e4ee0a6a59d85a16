import type { Kysely } from 'kysely';
import { findClient } from '../clients/client-repository.ts';
import type { Database } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import { checkKeyAndChain } from '../keys/signing-certificate.ts';
import { verifierIdentity } from './verifier-keys.ts';
import { saveVerifier } from './verifier-repository.ts';

export const verifierKeyContext = (clientId: number) => `verifiers/${clientId}/key`;

export interface EnabledVerifier {
  client_id: number;
  /** The client ids wallets see: `x509_san_dns:` when the certificate names PUBLIC_URL's host. */
  client_ids: string[];
  certificate: { subject: string; not_after: string; sha256: string };
}

/**
 * `coffer verifier enable`: gives a client the key and certificate chain that sign its
 * presentation requests. The key is sealed with the master key like every other key.
 */
export async function enableVerifier(
  deps: { db: Kysely<Database>; cipher: FieldCipher; publicUrl: string; now: Date },
  clientId: number,
  material: { keyPem: string; chainPem: string },
): Promise<EnabledVerifier> {
  if (!(await findClient(deps.db, clientId))) throw notFound(`Client ${clientId}`);
  const privateJwk = checkKeyAndChain(material.keyPem, material.chainPem, deps.now);
  await saveVerifier(deps.db, {
    client_id: clientId,
    key_sealed: deps.cipher.encrypt(JSON.stringify(privateJwk), verifierKeyContext(clientId)),
    chain_pem: material.chainPem,
    created_at: deps.now.toISOString(),
  });
  const identity = verifierIdentity(material.chainPem, privateJwk, deps.publicUrl);
  return {
    client_id: clientId,
    client_ids: [identity.clientIds.x509_san_dns, identity.clientIds.x509_hash].filter(
      (id): id is string => id !== null,
    ),
    certificate: {
      subject: identity.leaf.subject.replaceAll('\n', ', '),
      not_after: new Date(identity.leaf.validTo).toISOString(),
      sha256: identity.leaf.fingerprint256,
    },
  };
}
