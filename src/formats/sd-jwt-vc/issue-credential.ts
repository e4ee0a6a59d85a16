import { randomBytes } from 'node:crypto';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { es256Signature } from '../../keys/compact-jws.ts';
import {
  type ClaimPath,
  type CredentialToIssue,
  didUrlOf,
  type IssuerSigningMaterial,
  prepareSigningMaterial,
  publicJwkOf,
  refuseReserved,
  seconds,
} from '../credential-issuance.ts';
import { hasher } from './sd-jwt-parts.ts';

/**
 * Signs an SD-JWT VC (draft-ietf-oauth-sd-jwt-vc, `dc+sd-jwt`) with the OpenWallet Foundation's
 * @sd-jwt/sd-jwt-vc: every claim selectively disclosable, recursively, but the paths the issuer
 * keeps plain. No `jti`: an identifier every presentation must show would link them all (SD-JWT
 * VC, privacy considerations), and a batch's copies would share it; wallets identify the
 * credential by its hash.
 */

/** Claims the issuer sets, and the SD-JWT's own members. */
const RESERVED = [
  'iss',
  'iat',
  'nbf',
  'exp',
  'vct',
  'vct#integrity',
  'cnf',
  'status',
  '_sd',
  '_sd_alg',
  '...',
];

type Frame = { _sd?: Array<string | number> } & { [key: string]: Frame | Array<string | number> | undefined };

const matches = (segment: string | number | null, key: string | number, inArray: boolean) =>
  segment === null ? inArray : String(segment) === String(key);

/** Whether `path` + `key` is one of the paths kept plain. */
const isPlain = (plain: ClaimPath[], path: Array<string | number>, key: string | number, inArray: boolean) =>
  plain.some(
    (candidate) =>
      candidate.length === path.length + 1 &&
      path.every((segment, i) => matches(candidate[i]!, segment, typeof segment === 'number')) &&
      matches(candidate[path.length]!, key, inArray),
  );

/** The disclosure frame of a claims value: every member or element disclosable unless kept plain. */
function frameOf(value: unknown, path: Array<string | number>, plain: ClaimPath[]): Frame | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const inArray = Array.isArray(value);
  const keys: Array<string | number> = inArray ? value.map((_, i) => i) : Object.keys(value);
  const frame: Frame = { _sd: keys.filter((key) => !isPlain(plain, path, key, inArray)) };
  for (const key of keys) {
    const inner = frameOf((value as Record<string | number, unknown>)[key], [...path, key], plain);
    if (inner) frame[key] = inner;
  }
  return frame;
}

const instances = new WeakMap<object, SDJwtVcInstance>();

function instanceFor(material: IssuerSigningMaterial) {
  const prepared = prepareSigningMaterial(material);
  let instance = instances.get(prepared);
  if (!instance) {
    instance = new SDJwtVcInstance({
      hasher,
      hashAlg: 'sha-256',
      saltGenerator: () => randomBytes(16).toString('base64url'),
      signer: (data) => es256Signature(data, prepared.es256Key),
      signAlg: 'ES256',
    });
    instances.set(prepared, instance);
  }
  return { prepared, instance };
}

/** A compact SD-JWT VC, `<issuer-signed JWT>~<disclosure>~…~`, bound to the holder's key. */
export async function issueSdJwtVc(
  material: IssuerSigningMaterial,
  credential: CredentialToIssue,
  now: Date,
): Promise<string> {
  refuseReserved(credential.claims, RESERVED);
  const { prepared, instance } = instanceFor(material);
  const { holder, validUntil, status } = credential;
  const payload = {
    iss: prepared.issuerId,
    iat: seconds(now),
    nbf: seconds(credential.validFrom),
    ...(validUntil ? { exp: seconds(validUntil) } : {}),
    vct: credential.type,
    cnf: 'jwk' in holder ? { jwk: publicJwkOf(holder.jwk) } : { kid: didUrlOf(holder.did) },
    ...(status ? { status: { status_list: { idx: status.index, uri: status.uri } } } : {}),
    ...credential.claims,
  };
  const frame = frameOf(credential.claims, [], credential.alwaysDisclosed ?? []);
  return instance.issue(payload, frame as never, {
    header: { typ: 'dc+sd-jwt', x5c: prepared.es256.x5c },
  });
}
