import type { KeyObject } from 'node:crypto';
import { inflateSync } from 'node:zlib';
import { compactVerify, decodeProtectedHeader } from 'jose';
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
 * IETF Token Status List (draft-ietf-oauth-status-list), the JWT form: a `statuslist+jwt` signed
 * by the credential's issuer, whose `sub` is the address it was fetched from.
 */

export const TOKEN_LIST_MEDIA_TYPE = 'application/statuslist+jwt';

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
  // Another list of the same issuer, served in place of this one, must not pass for it.
  if (payload['sub'] !== uri) throw new StatusListError(`the status list is for ${String(payload['sub'])}`);
  const expiresAt = timeOf(payload['exp'], 'exp');
  checkNotExpired(expiresAt, now);
  const ttl = payload['ttl'];
  const statusList = payload['status_list'] as { bits?: unknown; lst?: unknown } | undefined;
  const bits = statusList?.bits;
  if (typeof bits !== 'number' || !BITS.includes(bits)) {
    throw new StatusListError('the status list gives no bits per status (1, 2, 4 or 8)');
  }
  if (typeof statusList?.lst !== 'string') throw new StatusListError('the status list has no lst');
  return {
    list: 'token',
    bits: bits as TokenStatusList['bits'],
    bytes: decompress(Buffer.from(statusList.lst, 'base64url'), inflateSync, 'lst'),
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
