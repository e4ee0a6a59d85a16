/**
 * The shapes a credential value comes in, told apart by syntax alone (no decoding, no
 * cryptography). Each format declares its shape (CredentialFormat.shape); a value whose shape is
 * not its named format's does not fit that format (DESIGN.md, Store: 400), while a value of the
 * right shape that fails to decode or verify is a refused credential (422).
 *
 * The four shapes are disjoint: an object; base64url parts joined by dots; the same followed by
 * `~`; base64url alone, with neither dots nor `~`.
 */

export type ValueShape = 'json-object' | 'compact-jws' | 'compact-sd-jwt' | 'base64url';

const PART = '[A-Za-z0-9_-]+';
const JWS = `${PART}\\.${PART}\\.${PART}`;
const COMPACT_JWS = new RegExp(`^${JWS}$`);
/** Issuer-signed JWT, `~`, disclosures each ending in `~`, then a key binding JWT or nothing. */
const COMPACT_SD_JWT = new RegExp(`^${JWS}~(${PART}~)*(${JWS})?$`);
const BASE64URL = new RegExp(`^${PART}$`);

/** What each shape is, for the sentence of a 400. */
export const SHAPE_DESCRIPTIONS: Record<ValueShape, string> = {
  'json-object': 'a JSON object',
  'compact-jws': 'a compact JWS (three base64url parts separated by dots)',
  'compact-sd-jwt': 'a compact SD-JWT (a compact JWS, then ~-separated disclosures ending in ~)',
  base64url: 'base64url without padding (no dots, no ~)',
};

/** The shape of a value, or null when it has none of them. */
export function shapeOf(value: unknown): ValueShape | null {
  if (typeof value === 'string') {
    if (COMPACT_JWS.test(value)) return 'compact-jws';
    if (COMPACT_SD_JWT.test(value)) return 'compact-sd-jwt';
    // A length of 4n+1 is no base64url encoding of any bytes.
    if (BASE64URL.test(value) && value.length % 4 !== 1) return 'base64url';
    return null;
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? 'json-object' : null;
}
