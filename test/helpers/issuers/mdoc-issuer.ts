import {
  createHash,
  createPrivateKey,
  type JsonWebKey,
  randomBytes,
  sign,
  verify,
  X509Certificate,
} from 'node:crypto';
import { base64url, CoseKey, DateOnly, DeviceKey, Issuer, type MdocContext } from '@owf/mdoc';
import type { IssuerIdentity } from './issuer-ca.ts';

/**
 * An mdoc issuer built on the OpenWallet Foundation's @owf/mdoc, with its own small crypto context
 * (not Coffer's): ES256 issuerAuth over the document-signer certificate (x5chain), device key =
 * the holder's key. The same context serves the test verifier's DeviceResponse checks.
 */

export const MDL_DOCTYPE = 'org.iso.18013.5.1.mDL';
export const MDL_NAMESPACE = 'org.iso.18013.5.1';

const hashOf = (alg: string) => ({ ES256: 'sha256', ES384: 'sha384', ES512: 'sha512' })[alg] ?? 'sha256';

function publicKeyOf(key: CoseKey) {
  const { kty, crv, x, y } = key.jwk as JsonWebKey;
  return {
    key: Object.fromEntries(Object.entries({ kty, crv, x, y }).filter(([, v]) => v)) as JsonWebKey,
    format: 'jwk' as const,
  };
}

export const testMdocContext: MdocContext = {
  crypto: {
    random: (length) => new Uint8Array(randomBytes(length)),
    digest: ({ digestAlgorithm, bytes }) =>
      new Uint8Array(createHash(digestAlgorithm.replace('-', '').toLowerCase()).update(bytes).digest()),
    calculateEphemeralMacKey: () => {
      throw new Error('not used');
    },
  },
  cose: {
    sign1: {
      sign: ({ toBeSigned, key }) => {
        const { alg: _a, kid: _k, key_ops: _o, ...jwk } = key.jwk as Record<string, unknown>;
        const privateKey = createPrivateKey({
          key: Object.fromEntries(Object.entries(jwk).filter(([, v]) => v !== undefined)) as JsonWebKey,
          format: 'jwk',
        });
        return new Uint8Array(sign('sha256', toBeSigned, { key: privateKey, dsaEncoding: 'ieee-p1363' }));
      },
      verify: ({ key, sign1 }) => {
        const alg = sign1.signatureAlgorithmName;
        const publicKey = publicKeyOf(key);
        return alg === 'EdDSA'
          ? verify(null, sign1.toBeSigned, publicKey, sign1.signature)
          : verify(
              hashOf(alg),
              sign1.toBeSigned,
              { ...publicKey, dsaEncoding: 'ieee-p1363' },
              sign1.signature,
            );
      },
    },
    mac0: {
      sign: () => {
        throw new Error('not used');
      },
      verify: () => false,
    },
  },
  x509: {
    getIssuerNameField: ({ certificate, field }) =>
      new X509Certificate(certificate).subject
        .split('\n')
        .filter((l) => l.startsWith(`${field}=`))
        .map((l) => l.slice(field.length + 1)),
    getPublicKey: ({ certificate }) =>
      CoseKey.fromJwk(
        new X509Certificate(certificate).publicKey.export({ format: 'jwk' }) as Record<string, unknown>,
      ),
    verifyCertificateChain: ({ trustedCertificates, x5chain }) => {
      const leaf = new X509Certificate(x5chain[0]!);
      if (!trustedCertificates.some((der) => leaf.verify(new X509Certificate(der).publicKey))) {
        throw new Error('the document signer is not issued by a trusted certificate');
      }
    },
    getCertificateData: ({ certificate }) => {
      const c = new X509Certificate(certificate);
      return {
        issuerName: c.issuer,
        subjectName: c.subject,
        serialNumber: c.serialNumber,
        thumbprint: c.fingerprint256,
        notBefore: new Date(c.validFrom),
        notAfter: new Date(c.validTo),
        pem: c.toString(),
      };
    },
  },
};

export const MDL_ELEMENTS = {
  given_name: 'Ada',
  family_name: 'Lovelace',
  birth_date: new DateOnly('1815-12-10'),
  age_over_18: true,
  nationality: 'GB',
  document_number: 'GB-123456',
};

export interface MdocOptions {
  deviceJwk: JsonWebKey;
  elements?: Record<string, unknown>;
  validFrom?: Date;
  validUntil?: Date;
}

/** A base64url IssuerSigned (as OpenID4VCI delivers it). */
export async function issueMdoc(identity: IssuerIdentity, options: MdocOptions): Promise<string> {
  const signerJwk = (await crypto.subtle.exportKey('jwk', identity.signer.keys.privateKey)) as Record<
    string,
    unknown
  >;
  const now = Date.now();
  const issuerSigned = await new Issuer(MDL_DOCTYPE, testMdocContext)
    .addIssuerNamespace(MDL_NAMESPACE, options.elements ?? MDL_ELEMENTS)
    .sign({
      signingKey: CoseKey.fromJwk(signerJwk),
      algorithm: -7 as never,
      digestAlgorithm: 'SHA-256',
      validityInfo: {
        signed: new Date(now - 60_000),
        validFrom: options.validFrom ?? new Date(now - 60_000),
        validUntil: options.validUntil ?? new Date(now + 3600_000),
      },
      deviceKeyInfo: { deviceKey: DeviceKey.fromJwk(options.deviceJwk as Record<string, unknown>) },
      certificates: [new Uint8Array(Buffer.from(identity.signer.der, 'base64'))],
    });
  return base64url.encode(issuerSigned.encode());
}
