import {
  createHash,
  createPrivateKey,
  type JsonWebKey,
  type KeyObject,
  type X509Certificate,
} from 'node:crypto';
import { pemCertificates } from '../keys/certificate-chain.ts';
import { dnsNamesOf } from '../keys/certificate-fields.ts';

/** The algorithms a verifier's request-signing key may use, by curve (HAIP asks for ES256). */
const ALGORITHM_OF_CURVE: Record<string, string> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' };

export interface VerifierIdentity {
  /** The PEM certificates, leaf first, as `x5c` carries them (base64 DER). */
  x5c: string[];
  leaf: X509Certificate;
  /** `x509_hash:` of the leaf, always; `x509_san_dns:` when the leaf names the service's host. */
  clientIds: { x509_hash: string; x509_san_dns: string | null };
  algorithm: string;
}

/** What a verifier's certificate chain says about it: the wallet-facing client ids and `x5c`. */
export function verifierIdentity(
  chainPem: string,
  privateJwk: JsonWebKey,
  publicUrl: string,
): VerifierIdentity {
  const chain = pemCertificates(chainPem);
  const leaf = chain[0]!;
  const host = new URL(publicUrl).hostname;
  const hash = createHash('sha256').update(leaf.raw).digest('base64url');
  return {
    x5c: chain.map((certificate) => certificate.raw.toString('base64')),
    leaf,
    clientIds: {
      x509_hash: `x509_hash:${hash}`,
      x509_san_dns: dnsNamesOf(leaf).includes(host) ? `x509_san_dns:${host}` : null,
    },
    algorithm: ALGORITHM_OF_CURVE[privateJwk.crv ?? ''] ?? 'ES256',
  };
}

/**
 * Checks a key and chain given to `coffer verifier enable`: an EC key of a curve JOSE signs with,
 * a leaf certificate of that key, valid now, allowed to sign. Returns the key as a private JWK.
 */
export function checkVerifierKey(keyPem: string, chainPem: string, now: Date): JsonWebKey {
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    throw new Error('the key file holds no private key that can be read (PEM, PKCS #8 or SEC 1)');
  }
  const jwk = key.export({ format: 'jwk' });
  if (jwk.kty !== 'EC' || !ALGORITHM_OF_CURVE[jwk.crv ?? '']) {
    throw new Error('the key must be an EC key on P-256, P-384 or P-521');
  }
  let chain: X509Certificate[];
  try {
    chain = pemCertificates(chainPem);
  } catch {
    throw new Error('the chain file holds a certificate that cannot be read');
  }
  const leaf = chain[0];
  if (!leaf) throw new Error('the chain file holds no PEM certificate');
  if (!leaf.checkPrivateKey(key)) throw new Error('the first certificate of the chain is not of this key');
  if (new Date(leaf.validFrom) > now || new Date(leaf.validTo) < now) {
    throw new Error(`the certificate is not valid now (valid ${leaf.validFrom} to ${leaf.validTo})`);
  }
  return jwk;
}
