import { createHash, type JsonWebKey, type X509Certificate } from 'node:crypto';
import { pemCertificates } from '../keys/certificate-chain.ts';
import { dnsNamesOf } from '../keys/certificate-fields.ts';
import { ALGORITHM_OF_CURVE } from '../keys/signing-certificate.ts';

export interface VerifierIdentity {
  /**
   * The chain's certificates, leaf first, as `x5c` carries them (base64 DER), without a
   * self-signed root at its end: a wallet validates the chain to a trust anchor it already holds,
   * and HAIP 1.0 wants the anchor left out of `x5c`. A self-signed leaf (a development certificate)
   * stays, being all there is.
   */
  x5c: string[];
  leaf: X509Certificate;
  /** `x509_hash:` of the leaf, always; `x509_san_dns:` when the leaf names the service's host. */
  clientIds: { x509_hash: string; x509_san_dns: string | null };
  algorithm: string;
}

/** A root: issued by itself, and signed with its own key. */
const selfSigned = (certificate: X509Certificate) =>
  certificate.checkIssued(certificate) && certificate.verify(certificate.publicKey);

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
    x5c: chain
      .filter((certificate, index) => index === 0 || !selfSigned(certificate))
      .map((certificate) => certificate.raw.toString('base64')),
    leaf,
    clientIds: {
      x509_hash: `x509_hash:${hash}`,
      x509_san_dns: dnsNamesOf(leaf).includes(host) ? `x509_san_dns:${host}` : null,
    },
    algorithm: ALGORITHM_OF_CURVE[privateJwk.crv ?? ''] ?? 'ES256',
  };
}
