import { createPrivateKey, type JsonWebKey, type KeyObject, type X509Certificate } from 'node:crypto';
import { pemCertificates } from './certificate-chain.ts';

/** The JOSE algorithm of each EC curve a signing key may use (HAIP asks for ES256). */
export const ALGORITHM_OF_CURVE: Record<string, string> = {
  'P-256': 'ES256',
  'P-384': 'ES384',
  'P-521': 'ES512',
};

/**
 * Checks a key and chain given to `coffer verifier enable` or `coffer issuer enable`: an EC key of a curve JOSE signs with,
 * a leaf certificate of that key, valid now, allowed to sign. Returns the key as a private JWK.
 */
export function checkKeyAndChain(keyPem: string, chainPem: string, now: Date): JsonWebKey {
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
