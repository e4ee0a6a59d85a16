import type { KeyObject } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import * as cborg from 'cborg';
import { compactVerify, decodeProtectedHeader } from 'jose';
import { COSE_HEADER, decodeSign1, type Sign1, verifySign1 } from './cose-sign1.ts';
import type { StatusOutcome } from './status-list-shared.ts';
import {
  COMPACT_JWS,
  checkNotExpired,
  decompress,
  LIST_ALGORITHMS,
  StatusListError,
  timeOf,
} from './status-list-shared.ts';

/**
 * IETF Token Status List (draft-ietf-oauth-status-list): a `statuslist+jwt` or an
 * `application/statuslist+cwt` signed by the credential's issuer, whose subject is the address it
 * was fetched from.
 */

export const TOKEN_LIST_MEDIA_TYPE = 'application/statuslist+jwt';
export const TOKEN_LIST_CWT_MEDIA_TYPE = 'application/statuslist+cwt';
/** What the checker asks a list's server for: either form, as the issuer publishes it. */
export const TOKEN_LIST_ACCEPT = `${TOKEN_LIST_MEDIA_TYPE}, ${TOKEN_LIST_CWT_MEDIA_TYPE}`;

export interface TokenStatusList {
  list: 'token';
  bits: 1 | 2 | 4 | 8;
  /** The decompressed list: statuses packed from the least significant bit of each byte. */
  bytes: Uint8Array;
  /** When the list stops being valid (`exp`), in ms; null when it says nothing. */
  expiresAt: number | null;
  /** How long the issuer lets it be reused (`ttl`), in ms. */
  ttlMs: number | null;
}

const TYPES = ['statuslist+jwt', TOKEN_LIST_MEDIA_TYPE];
const BITS = [1, 2, 4, 8];
/** ES256, ES384, ES512, EdDSA and the fully specified Ed25519: LIST_ALGORITHMS, by COSE number. */
const LIST_COSE_ALGORITHMS = [-7, -35, -36, -8, -19];

function headerOf(jws: string) {
  try {
    return decodeProtectedHeader(jws);
  } catch {
    throw new StatusListError('the status list is not a JWT');
  }
}

export async function verifyTokenStatusList(
  body: string,
  uri: string,
  issuerKey: KeyObject,
  now: Date,
): Promise<TokenStatusList> {
  const jws = body.trim();
  if (!COMPACT_JWS.test(jws)) throw new StatusListError('the status list is not a JWT');
  const { typ, alg } = headerOf(jws);
  if (typeof typ !== 'string' || !TYPES.includes(typ)) {
    throw new StatusListError(`the status list's typ is ${String(typ)}, not statuslist+jwt`);
  }
  if (typeof alg !== 'string' || !LIST_ALGORITHMS.includes(alg)) {
    throw new StatusListError(`the status list is signed with ${String(alg)}, which Coffer does not accept`);
  }
  let payload: Record<string, unknown>;
  try {
    const verified = await compactVerify(jws, issuerKey, { algorithms: [alg] });
    payload = JSON.parse(new TextDecoder().decode(verified.payload));
  } catch {
    throw new StatusListError("the status list's signature does not verify with the issuer's key");
  }
  if (payload === null || typeof payload !== 'object')
    throw new StatusListError('the status list is not a JWT');
  const statusList = payload['status_list'] as { bits?: unknown; lst?: unknown } | undefined;
  const lst = statusList?.lst;
  return readClaims(
    {
      sub: payload['sub'],
      exp: payload['exp'],
      ttl: payload['ttl'],
      bits: statusList?.bits,
      lst: typeof lst === 'string' ? Buffer.from(lst, 'base64url') : undefined,
    },
    uri,
    now,
  );
}

/** CWT claim keys (RFC 8392) and the draft's requested ones for `status_list` and `ttl`. */
export const CWT_CLAIM = { sub: 2, exp: 4, iat: 6, statusList: 65533, ttl: 65534 } as const;

/**
 * The CWT form: a COSE_Sign1_Tagged whose protected header types it `application/statuslist+cwt`,
 * checked with the credential issuer's key, as the JWT form is.
 */
export function verifyTokenStatusListCwt(
  body: Uint8Array,
  uri: string,
  issuerKey: KeyObject,
  now: Date,
): TokenStatusList {
  let sign1: Sign1;
  try {
    sign1 = decodeSign1(body);
  } catch (error) {
    throw new StatusListError(`the status list is not a CWT: ${(error as Error).message}`);
  }
  const typ = sign1.protectedHeader.get(COSE_HEADER.typ);
  if (typ !== TOKEN_LIST_CWT_MEDIA_TYPE) {
    throw new StatusListError(`the status list's type is ${String(typ)}, not ${TOKEN_LIST_CWT_MEDIA_TYPE}`);
  }
  const alg = sign1.protectedHeader.get(COSE_HEADER.alg);
  if (typeof alg !== 'number' || !LIST_COSE_ALGORITHMS.includes(alg)) {
    throw new StatusListError(`the status list is signed with ${String(alg)}, which Coffer does not accept`);
  }
  if (!verifySign1(sign1, issuerKey)) {
    throw new StatusListError("the status list's signature does not verify with the issuer's key");
  }
  let claims: unknown;
  try {
    claims = cborg.decode(sign1.payload, { useMaps: true, rejectDuplicateMapKeys: true });
  } catch {
    throw new StatusListError("the status list's claims are not CBOR");
  }
  if (!(claims instanceof Map)) throw new StatusListError("the status list's claims are not a CBOR map");
  const statusList = claims.get(CWT_CLAIM.statusList);
  const lst = statusList instanceof Map ? statusList.get('lst') : undefined;
  return readClaims(
    {
      sub: claims.get(CWT_CLAIM.sub),
      exp: claims.get(CWT_CLAIM.exp),
      ttl: claims.get(CWT_CLAIM.ttl),
      bits: statusList instanceof Map ? statusList.get('bits') : undefined,
      lst: lst instanceof Uint8Array ? Buffer.from(lst) : undefined,
    },
    uri,
    now,
  );
}

/** What both forms carry, checked the same way. */
function readClaims(
  claims: { sub: unknown; exp: unknown; ttl: unknown; bits: unknown; lst: Buffer | undefined },
  uri: string,
  now: Date,
): TokenStatusList {
  // Another list of the same issuer, served in place of this one, must not pass for it.
  if (claims.sub !== uri) throw new StatusListError(`the status list is for ${String(claims.sub)}`);
  const expiresAt = timeOf(claims.exp, 'exp');
  checkNotExpired(expiresAt, now);
  const { bits, ttl } = claims;
  if (typeof bits !== 'number' || !BITS.includes(bits)) {
    throw new StatusListError('the status list gives no bits per status (1, 2, 4 or 8)');
  }
  if (claims.lst === undefined) throw new StatusListError('the status list has no lst');
  return {
    list: 'token',
    bits: bits as TokenStatusList['bits'],
    bytes: decompress(claims.lst, inflateSync, 'lst'),
    expiresAt,
    ttlMs: typeof ttl === 'number' && ttl >= 0 ? ttl * 1000 : null,
  };
}

/** The status at `index`: 0 valid, 1 invalid (revoked), 2 suspended; 3 and beyond are not Coffer's to read. */
export function tokenStatusAt(list: TokenStatusList, index: number): StatusOutcome {
  const firstBit = index * list.bits;
  const byte = list.bytes[Math.floor(firstBit / 8)];
  if (byte === undefined) {
    return { state: 'unknown', reason: `the status list has no entry ${index}` };
  }
  const value = (byte >> (firstBit % 8)) & ((1 << list.bits) - 1);
  if (value === 0) return { state: 'valid' };
  if (value === 1) return { state: 'revoked' };
  if (value === 2) return { state: 'suspended' };
  return { state: 'unknown', reason: `the status list gives status ${value}, which Coffer does not know` };
}
