import {
  createHash,
  createPrivateKey,
  createPublicKey,
  type JsonWebKey,
  type KeyObject,
  randomBytes,
  sign,
  verify,
  X509Certificate,
} from 'node:crypto';
import { CoseKey, type MdocContext } from '@owf/mdoc';
import { chainsToAnchor } from '../../keys/certificate-chain.ts';

/**
 * The cryptography @owf/mdoc leaves to its caller, with node:crypto: digests, COSE_Sign1 with
 * ECDSA (raw r‖s signatures, as COSE has them) and EdDSA, and the X.509 facts it asks for.
 * Coffer never uses device MACs (it signs as the device), so none is made here.
 */

const HASH_OF: Record<string, string> = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512' };
const HASH_OF_CURVE: Record<string, string> = {
  prime256v1: 'sha256',
  secp384r1: 'sha384',
  secp521r1: 'sha512',
};

const publicKeyObjects = new WeakMap<CoseKey, KeyObject>();

function keyOf(key: CoseKey, kind: 'private' | 'public'): KeyObject {
  if (kind === 'public') {
    const known = publicKeyObjects.get(key);
    if (known) return known;
  }
  const jwk = key.jwk as JsonWebKey & { alg?: string; kid?: string; key_ops?: unknown };
  const { alg: _alg, kid: _kid, key_ops: _ops, ...plain } = jwk;
  const cleaned = Object.fromEntries(Object.entries(plain).filter(([, v]) => v !== undefined)) as JsonWebKey;
  if (kind === 'private') return createPrivateKey({ key: cleaned, format: 'jwk' });
  const { d: _d, ...publicJwk } = cleaned;
  const publicKey = createPublicKey({ key: publicJwk, format: 'jwk' });
  publicKeyObjects.set(key, publicKey);
  return publicKey;
}

/**
 * Parsed certificates by their DER bytes: the library asks for the same document signer's
 * subject, key and dates several times per verification, and issuers reuse one signer for many
 * mdocs. Bounded.
 */
const parsed = new Map<string, { certificate: X509Certificate; key: CoseKey }>();
const MAX_PARSED = 256;

function certificateOf(der: Uint8Array) {
  const id = Buffer.from(der).toString('base64');
  let entry = parsed.get(id);
  if (!entry) {
    const certificate = new X509Certificate(der);
    entry = {
      certificate,
      key: CoseKey.fromJwk(certificate.publicKey.export({ format: 'jwk' }) as Record<string, unknown>),
    };
    if (parsed.size >= MAX_PARSED) parsed.delete(parsed.keys().next().value!);
    parsed.set(id, entry);
  }
  return entry;
}

const digestName = (algorithm: string) => algorithm.replace('-', '').toLowerCase();

function subjectField(certificate: Uint8Array, field: string): string[] {
  const prefix = `${field}=`;
  return certificateOf(certificate)
    .certificate.subject.split('\n')
    .filter((line) => line.startsWith(prefix))
    .map((line) => line.slice(prefix.length));
}

export const mdocContext: MdocContext = {
  crypto: {
    random: (length) => new Uint8Array(randomBytes(length)),
    digest: ({ digestAlgorithm, bytes }) =>
      new Uint8Array(createHash(digestName(digestAlgorithm)).update(bytes).digest()),
    calculateEphemeralMacKey: () => {
      throw new Error('device MACs are not used by this wallet');
    },
  },
  cose: {
    sign1: {
      sign: ({ toBeSigned, key }) => {
        const privateKey = keyOf(key, 'private');
        if (privateKey.asymmetricKeyType === 'ed25519')
          return new Uint8Array(sign(null, toBeSigned, privateKey));
        const hash = HASH_OF_CURVE[String(privateKey.asymmetricKeyDetails?.namedCurve)] ?? 'sha256';
        return new Uint8Array(sign(hash, toBeSigned, { key: privateKey, dsaEncoding: 'ieee-p1363' }));
      },
      verify: ({ key, sign1 }) => {
        const publicKey = keyOf(key, 'public');
        const algorithm = sign1.signatureAlgorithmName;
        try {
          if (publicKey.asymmetricKeyType === 'ed25519') {
            return algorithm === 'EdDSA' && verify(null, sign1.toBeSigned, publicKey, sign1.signature);
          }
          const hash = HASH_OF[algorithm];
          if (!hash) return false;
          return verify(
            hash,
            sign1.toBeSigned,
            { key: publicKey, dsaEncoding: 'ieee-p1363' },
            sign1.signature,
          );
        } catch {
          return false;
        }
      },
    },
    mac0: {
      sign: () => {
        throw new Error('device MACs are not used by this wallet');
      },
      verify: () => false,
    },
  },
  x509: {
    getIssuerNameField: ({ certificate, field }) => subjectField(certificate, field),
    getPublicKey: ({ certificate }) => certificateOf(certificate).key,
    verifyCertificateChain: ({ trustedCertificates, x5chain, now }) => {
      const [leaf, ...rest] = x5chain.map((der) => new X509Certificate(der));
      const anchors = trustedCertificates.map((der) => new X509Certificate(der));
      if (!leaf || !chainsToAnchor(leaf, rest, anchors, now ?? new Date())) {
        throw new Error('the certificate chain does not reach a trusted certificate');
      }
    },
    getCertificateData: ({ certificate }) => {
      const { certificate: parsed } = certificateOf(certificate);
      return {
        issuerName: parsed.issuer.replaceAll('\n', ', '),
        subjectName: parsed.subject.replaceAll('\n', ', '),
        serialNumber: parsed.serialNumber,
        thumbprint: parsed.fingerprint256.replaceAll(':', '').toLowerCase(),
        notBefore: new Date(parsed.validFrom),
        notAfter: new Date(parsed.validTo),
        pem: parsed.toString(),
      };
    },
  },
};
