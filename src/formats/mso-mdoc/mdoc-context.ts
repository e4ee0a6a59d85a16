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
import { CoseKey, Curve, Header, KeyType, type MdocContext, type Sign1 } from '@owf/mdoc';
import { chainsToAnchor, parseCertificate } from '../../keys/certificate-chain.ts';

/**
 * The cryptography @owf/mdoc leaves to its caller, with node:crypto: digests, COSE_Sign1 with
 * ECDSA (raw r‖s signatures, as COSE has them) and EdDSA, and the X.509 facts it asks for.
 * Coffer never uses device MACs (it signs as the device), so none is made here.
 *
 * Two things are done here rather than by the library: COSE keys are turned into JWKs with this
 * module's own table (the library's names P-384 and P-521 `p-384` / `p-521`, which no JWK
 * consumer takes, and cannot read a JWK with `crv: "P-384"`), and the algorithm of a COSE_Sign1
 * is read as its number (the library knows no fully specified algorithm, -9 or -19).
 */

interface CoseAlgorithm {
  name: string;
  /** ECDSA's hash; absent for EdDSA. */
  hash?: string;
  /** The only curve the algorithm is defined for, where it names one. */
  curve?: string;
}

/**
 * The COSE algorithms Coffer signs and verifies with: ES256, ES384, ES512, EdDSA (Ed25519 only,
 * as Coffer knows no Ed448), and the fully specified ESP256 and Ed25519
 * (draft-ietf-jose-fully-specified-algorithms).
 */
export const COSE_ALGORITHMS: Record<number, CoseAlgorithm> = {
  [-7]: { name: 'ES256', hash: 'sha256' },
  [-35]: { name: 'ES384', hash: 'sha384' },
  [-36]: { name: 'ES512', hash: 'sha512' },
  [-9]: { name: 'ESP256', hash: 'sha256', curve: 'P-256' },
  [-8]: { name: 'EdDSA', curve: 'Ed25519' },
  [-19]: { name: 'Ed25519', curve: 'Ed25519' },
};

/** The algorithm a key of this curve signs with, polymorphic name first, then the fully specified one. */
export const ALGORITHMS_OF_CURVE: Record<string, number[]> = {
  'P-256': [-7, -9],
  'P-384': [-35, -51],
  'P-521': [-36, -52],
  Ed25519: [-8, -19],
};

const CURVE_NAMES: Record<number, string> = {
  [Curve['P-256']]: 'P-256',
  [Curve['P-384']]: 'P-384',
  [Curve['P-521']]: 'P-521',
  [Curve.Ed25519]: 'Ed25519',
};
const CURVE_NUMBERS: Record<string, Curve> = {
  'P-256': Curve['P-256'],
  'P-384': Curve['P-384'],
  'P-521': Curve['P-521'],
  Ed25519: Curve.Ed25519,
};
/** node:crypto's names of the JWK curves. */
const NODE_CURVES: Record<string, string> = {
  prime256v1: 'P-256',
  secp384r1: 'P-384',
  secp521r1: 'P-521',
};

const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const bytesOf = (text: unknown) =>
  typeof text === 'string' ? new Uint8Array(Buffer.from(text, 'base64url')) : undefined;

/** A COSE key (EC2 P-256/384/521 or OKP Ed25519) as a JWK, its private part too when it has one; null for others. */
export function jwkOfCoseKey(key: CoseKey): JsonWebKey | null {
  const crv = typeof key.curve === 'number' ? CURVE_NAMES[key.curve] : undefined;
  if (!crv || !(key.x instanceof Uint8Array)) return null;
  if (key.keyType === KeyType.Okp && crv === 'Ed25519') {
    return { kty: 'OKP', crv, x: b64u(key.x), ...(key.d ? { d: b64u(key.d) } : {}) };
  }
  if (key.keyType === KeyType.Ec && crv !== 'Ed25519' && key.y instanceof Uint8Array) {
    return { kty: 'EC', crv, x: b64u(key.x), y: b64u(key.y), ...(key.d ? { d: b64u(key.d) } : {}) };
  }
  return null;
}

/** A JWK (EC P-256/384/521 or OKP Ed25519, public or private) as a COSE key. */
export function coseKeyOfJwk(jwk: JsonWebKey): CoseKey {
  const curve = CURVE_NUMBERS[String(jwk.crv)];
  if (curve === undefined) throw new Error(`a ${String(jwk.crv)} key cannot be a COSE key here`);
  return CoseKey.create({
    keyType: jwk.kty === 'OKP' ? KeyType.Okp : KeyType.Ec,
    curve,
    x: bytesOf(jwk.x),
    y: bytesOf(jwk.y),
    d: bytesOf(jwk.d),
  });
}

/** The curve of a node:crypto key, by its JWK name (P-256, P-384, P-521, Ed25519), if it is one of those. */
export function curveOf(key: KeyObject): string | undefined {
  if (key.asymmetricKeyType === 'ed25519') return 'Ed25519';
  if (key.asymmetricKeyType !== 'ec') return undefined;
  return NODE_CURVES[String(key.asymmetricKeyDetails?.namedCurve)];
}

const publicKeyObjects = new WeakMap<CoseKey, KeyObject>();

function keyObjectOf(key: CoseKey, kind: 'private' | 'public'): KeyObject {
  if (kind === 'public') {
    const known = publicKeyObjects.get(key);
    if (known) return known;
  }
  const jwk = jwkOfCoseKey(key);
  if (!jwk) throw new Error('only EC P-256/384/521 and Ed25519 COSE keys are supported');
  if (kind === 'private') return createPrivateKey({ key: jwk, format: 'jwk' });
  const { d: _d, ...publicJwk } = jwk;
  const publicKey = createPublicKey({ key: publicJwk, format: 'jwk' });
  publicKeyObjects.set(key, publicKey);
  return publicKey;
}

/** The algorithm number in a COSE_Sign1's protected header (where COSE wants it), if any. */
export function algorithmOf(sign1: Sign1): number | undefined {
  const alg = sign1.protectedHeaders.headers?.get(Header.Algorithm);
  return typeof alg === 'number' ? alg : undefined;
}

/** Whether `alg` is one of COSE_ALGORITHMS and fits the key (EdDSA an Ed25519 key, ECDSA an EC key of its curve). */
export function algorithmFitsKey(alg: number, key: KeyObject): boolean {
  const algorithm = COSE_ALGORITHMS[alg];
  const curve = curveOf(key);
  if (!algorithm || !curve) return false;
  if (algorithm.hash === undefined) return curve === 'Ed25519';
  return curve !== 'Ed25519' && (algorithm.curve === undefined || algorithm.curve === curve);
}

/** The default COSE algorithm of a key: EdDSA for Ed25519, ES256/384/512 by the EC curve. */
export function algorithmForKey(key: KeyObject): number {
  const curve = curveOf(key);
  const alg = curve ? ALGORITHMS_OF_CURVE[curve]?.[0] : undefined;
  if (alg === undefined) throw new Error('only EC P-256/384/521 and Ed25519 keys sign mdoc structures here');
  return alg;
}

function signWith(alg: number, key: KeyObject, data: Uint8Array): Uint8Array {
  if (!algorithmFitsKey(alg, key)) throw new Error(`COSE algorithm ${alg} does not fit this key`);
  const { hash } = COSE_ALGORITHMS[alg]!;
  return new Uint8Array(hash ? sign(hash, data, { key, dsaEncoding: 'ieee-p1363' }) : sign(null, data, key));
}

/** Whether `signature` (raw r‖s for ECDSA, as COSE has it) verifies over `data` with `key` in COSE algorithm `alg`; false for an algorithm that does not fit the key. */
export function verifyCoseSignature(
  alg: number,
  key: KeyObject,
  data: Uint8Array,
  signature: Uint8Array,
): boolean {
  if (!algorithmFitsKey(alg, key)) return false;
  const { hash } = COSE_ALGORITHMS[alg]!;
  try {
    return hash
      ? verify(hash, data, { key, dsaEncoding: 'ieee-p1363' }, signature)
      : verify(null, data, key, signature);
  } catch {
    return false;
  }
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
    const jwk = certificate.publicKey.export({ format: 'jwk' });
    entry = { certificate, key: coseKeyOfJwk(jwk) };
    publicKeyObjects.set(entry.key, certificate.publicKey);
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
      sign: ({ toBeSigned, key, algorithm }) => {
        const privateKey = keyObjectOf(key, 'private');
        const alg =
          typeof algorithm === 'number'
            ? algorithm
            : typeof key.algorithm === 'number'
              ? key.algorithm
              : algorithmForKey(privateKey);
        return signWith(alg, privateKey, toBeSigned);
      },
      verify: ({ key, sign1 }) => {
        const alg = algorithmOf(sign1);
        if (alg === undefined) return false;
        try {
          return verifyCoseSignature(alg, keyObjectOf(key, 'public'), sign1.toBeSigned, sign1.signature);
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
      const [leaf, ...rest] = x5chain.map((der) => parseCertificate(der));
      const anchors = trustedCertificates.map((der) => parseCertificate(der));
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
