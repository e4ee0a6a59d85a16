import { gzipSync } from 'node:zlib';
import { type Bbs2023Deps, createBaseProof } from '../formats/ldp-vc/bbs-2023/base-proof.ts';
import type { SecuredDocument } from '../formats/ldp-vc/bbs-2023/shared.ts';
import { signCompactJwsES256 } from '../keys/compact-jws.ts';
import type { ListSigner } from './list-signer.ts';

/**
 * An issuer's W3C Bitstring Status List v1.0 as a BitstringStatusListCredential: a VC-JWT signed
 * by the issuer's ES256 key for jwt_vc_json credentials, or with a bbs-2023 base proof by the
 * issuer's BLS12-381 did:key for ldp_vc ones, so that each is checked with the key that signed the
 * credential (what bitstring-status-list.ts, Coffer's own reader, requires).
 */

export type BitstringPurpose = 'revocation' | 'suspension';

export interface BitstringListInput {
  /** The list credential's id and address, the entries' `statusListCredential`. */
  uri: string;
  issuer: string;
  purpose: BitstringPurpose;
  /** The uncompressed bitstring, at least 16 KiB (status-list-bits.ts). */
  bytes: Uint8Array;
  validFrom: Date;
  validUntil?: Date;
  /** Milliseconds before a refresh should be attempted (the spec's optional `ttl`). */
  ttl?: number;
}

/** VC 2.0 dates without the milliseconds nobody reads. */
const dateOf = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The unsigned credential; `encodedList` is multibase base64url-no-pad ('u') of the GZIP'd bits. */
export function bitstringListCredential(list: BitstringListInput): Record<string, unknown> {
  return {
    '@context': ['https://www.w3.org/ns/credentials/v2'],
    id: list.uri,
    type: ['VerifiableCredential', 'BitstringStatusListCredential'],
    issuer: list.issuer,
    validFrom: dateOf(list.validFrom),
    ...(list.validUntil ? { validUntil: dateOf(list.validUntil) } : {}),
    credentialSubject: {
      id: `${list.uri}#list`,
      type: 'BitstringStatusList',
      statusPurpose: list.purpose,
      encodedList: `u${gzipSync(list.bytes, { level: 9 }).toString('base64url')}`,
      ...(list.ttl === undefined ? {} : { ttl: list.ttl }),
    },
  };
}

/**
 * VC-JOSE-COSE's `application/vc+jwt`: the credential itself is the claim set, `typ` vc+jwt and
 * `cty` vc as that specification recommends; Coffer's reader takes this and the VC 1.1 `vc` claim.
 */
export function signBitstringListJwt(credential: Record<string, unknown>, signer: ListSigner): string {
  const x5c = signer.x5c.length > 0 ? { x5c: signer.x5c } : {};
  return signCompactJwsES256({ typ: 'vc+jwt', cty: 'vc', ...x5c }, credential, signer.privateKey);
}

export interface BbsIssuerKey {
  secretKey: Uint8Array;
  publicKey: Uint8Array;
  /** did:key of the BLS12-381 G2 public key. */
  did: string;
}

/**
 * A bbs-2023 base proof over the whole list. Every member is mandatory: a list is never
 * selectively disclosed, so there is nothing to leave out, and the statements go into the BBS
 * header as one hash instead of one signed message each.
 */
export function signBitstringListLdp(
  credential: Record<string, unknown>,
  key: BbsIssuerKey,
  deps: Bbs2023Deps,
): Promise<SecuredDocument> {
  const multibase = key.did.slice('did:key:'.length);
  const pointers = Object.keys(credential)
    .filter((member) => member !== '@context' && member !== 'id')
    .map((member) => `/${member}`);
  return createBaseProof(
    credential,
    {
      type: 'DataIntegrityProof',
      cryptosuite: 'bbs-2023',
      verificationMethod: `${key.did}#${multibase}`,
      proofPurpose: 'assertionMethod',
    },
    { secretKey: key.secretKey, publicKey: key.publicKey },
    pointers,
    deps,
  );
}
