import { deflateSync } from 'node:zlib';
import * as cborg from 'cborg';
import { signCompactJwsES256 } from '../keys/compact-jws.ts';
import { COSE_HEADER, signSign1ES256 } from './cose-sign1.ts';
import type { ListSigner } from './list-signer.ts';
import type { TokenStatusBits } from './status-list-bits.ts';
import { CWT_CLAIM, TOKEN_LIST_CWT_MEDIA_TYPE } from './token-status-list.ts';

/**
 * An issuer's Token Status List as a Status List Token (draft-ietf-oauth-status-list, "Status
 * List Token"): a `statuslist+jwt` or an `application/statuslist+cwt`, both ES256 with the
 * issuer's certificate chain (the draft's "Key Resolution and Trust Management": the same key and
 * chain as the credentials it covers).
 */

export interface TokenStatusListInput {
  /** The list's address: its `sub`, equal to the credentials' `status.status_list.uri`. */
  uri: string;
  bits: TokenStatusBits;
  bytes: Uint8Array;
  iat: Date;
  exp?: Date;
  /** Seconds a holder or verifier may keep the list before fetching it again. */
  ttl: number;
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** The draft recommends the highest compression level; a list is signed far less often than read. */
const compressed = (bytes: Uint8Array) => new Uint8Array(deflateSync(bytes, { level: 9 }));

function checkTtl(ttl: number): void {
  if (!Number.isSafeInteger(ttl) || ttl <= 0)
    throw new RangeError('ttl must be a positive whole number of seconds');
}

export function signTokenStatusListJwt(list: TokenStatusListInput, signer: ListSigner): string {
  checkTtl(list.ttl);
  return signCompactJwsES256(
    { typ: 'statuslist+jwt', ...(signer.x5c.length > 0 ? { x5c: signer.x5c } : {}) },
    {
      sub: list.uri,
      iat: seconds(list.iat),
      ...(list.exp ? { exp: seconds(list.exp) } : {}),
      ttl: list.ttl,
      status_list: { bits: list.bits, lst: Buffer.from(compressed(list.bytes)).toString('base64url') },
    },
    signer.privateKey,
  );
}

/** The CWT form: COSE_Sign1_Tagged, untagged as a CWT, as the draft requires. */
export function signTokenStatusListCwt(list: TokenStatusListInput, signer: ListSigner): Uint8Array {
  checkTtl(list.ttl);
  const claims = new Map<number, unknown>([
    [CWT_CLAIM.sub, list.uri],
    [CWT_CLAIM.iat, seconds(list.iat)],
    ...(list.exp ? [[CWT_CLAIM.exp, seconds(list.exp)] as [number, number]] : []),
    [CWT_CLAIM.ttl, list.ttl],
    [CWT_CLAIM.statusList, { bits: list.bits, lst: compressed(list.bytes) }],
  ]);
  const chain = signer.x5c.map((certificate) => new Uint8Array(Buffer.from(certificate, 'base64')));
  return signSign1ES256(
    new Map<number, unknown>([
      [COSE_HEADER.alg, -7],
      [COSE_HEADER.typ, TOKEN_LIST_CWT_MEDIA_TYPE],
    ]),
    // RFC 9360: one certificate is a bstr, more an array of them.
    new Map(chain.length === 0 ? [] : [[COSE_HEADER.x5chain, chain.length === 1 ? chain[0] : chain]]),
    cborg.encode(claims),
    signer.privateKey,
  );
}
