import type { X509Certificate } from 'node:crypto';
import type { VerifyJwtCallback } from '@openid4vc/oauth2';
import { compactVerify } from 'jose';
import { certificateChain, JWS_ALGORITHMS, publicKeyOf } from '../formats/jose-credentials.ts';

/**
 * Signed Credential Issuer Metadata (OpenID4VCI §12.2.2–12.2.3): asked for with
 * `Accept: application/jwt` when the wallet can verify it. The library checks `typ` and `sub`;
 * this callback checks the `x5c` signer: the leaf valid now, the chain reaching
 * ISSUER_TRUST_ANCHORS, the signature by the leaf. An issuer that signs with anything else (or
 * an untrusted chain) is refused; one that serves plain JSON is shown unverified.
 */
export interface MetadataSigner {
  subject: string;
  fingerprint: string;
}

export function signedMetadataVerifier(
  issuerTrustAnchors: X509Certificate[],
  now: () => Date,
  verified: (signer: MetadataSigner) => void,
): VerifyJwtCallback {
  return async (signer, { compact }) => {
    if (signer.method !== 'x5c' || !JWS_ALGORITHMS.includes(signer.alg)) return { verified: false };
    try {
      const { leaf, info } = certificateChain(
        signer.x5c.map((der) => Buffer.from(der, 'base64')),
        { now: now(), issuerTrustAnchors },
      );
      if (!info.trusted) return { verified: false };
      await compactVerify(compact, publicKeyOf(leaf), { algorithms: [signer.alg] });
      verified({ subject: info.subject, fingerprint: info.fingerprint });
      const jwk = publicKeyOf(leaf).export({ format: 'jwk' });
      return { verified: true, signerJwk: jwk as never };
    } catch {
      return { verified: false };
    }
  };
}
