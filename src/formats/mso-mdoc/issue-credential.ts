import { createHash, randomBytes, randomInt, sign } from 'node:crypto';
import { base64url, cborEncode, DataItem } from '@owf/mdoc';
import {
  type CredentialToIssue,
  cannotIssue,
  holderJwkOf,
  type IssuerSigningMaterial,
  prepareSigningMaterial,
} from '../credential-issuance.ts';
import { coseKeyOfJwk } from './mdoc-context.ts';

/**
 * Signs an ISO/IEC 18013-5 mdoc as OpenID4VCI delivers it: base64url (no padding) of the CBOR
 * IssuerSigned {nameSpaces, issuerAuth}. Encoded here with @owf/mdoc's CBOR (its tags for
 * tdate, full-date and embedded CBOR) rather than its Issuer: the Issuer cannot put a
 * `status` in the MSO (draft-ietf-oauth-status-list, mdoc), and the structures are few.
 */

const YEAR_MS = 365 * 24 * 3600_000;
/** COSE header labels and algorithm (RFC 9052, RFC 9360): alg 1, x5chain 33, ES256 -7. */
const ALG = 1;
const X5CHAIN = 33;
const ES256 = -7;

/** A CBOR tdate (tag 0) on a whole second, as ISO 18013-5 wants validityInfo. */
const wholeSecond = (date: Date) => new Date(Math.floor(date.getTime() / 1000) * 1000);

/** A random permutation of 0…n-1: digest IDs must not tell which element is which (18013-5 §9.1.2.5). */
function shuffledIds(n: number): number[] {
  const ids = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  return ids;
}

const sha256 = (bytes: Uint8Array) => new Uint8Array(createHash('sha256').update(bytes).digest());

/** base64url of the CBOR IssuerSigned, the MSO bound to the holder's key as its deviceKey. */
export async function issueMdoc(
  material: IssuerSigningMaterial,
  credential: CredentialToIssue,
  now: Date,
): Promise<string> {
  const prepared = prepareSigningMaterial(material);
  const nameSpaces = new Map<string, DataItem[]>();
  const valueDigests = new Map<string, Map<number, Uint8Array>>();
  for (const [namespace, elements] of Object.entries(credential.claims)) {
    if (elements === null || typeof elements !== 'object' || Array.isArray(elements)) {
      throw cannotIssue(`the claims of namespace ${namespace} are not an object of elements`);
    }
    const entries = Object.entries(elements);
    const ids = shuffledIds(entries.length);
    const items: DataItem[] = [];
    const digests = new Map<number, Uint8Array>();
    entries.forEach(([elementIdentifier, elementValue], i) => {
      const item = DataItem.fromData(
        new Map<string, unknown>([
          ['digestID', ids[i]],
          ['random', new Uint8Array(randomBytes(16))],
          ['elementIdentifier', elementIdentifier],
          ['elementValue', elementValue],
        ]),
      );
      items.push(item);
      // The digest covers IssuerSignedItemBytes, the tag-24 wrapped item.
      digests.set(ids[i]!, sha256(cborEncode(item)));
    });
    nameSpaces.set(namespace, items);
    valueDigests.set(namespace, digests);
  }
  const validFrom = wholeSecond(credential.validFrom);
  const { status } = credential;
  const mso = new Map<string, unknown>([
    ['version', '1.0'],
    ['digestAlgorithm', 'SHA-256'],
    ['valueDigests', valueDigests],
    [
      'deviceKeyInfo',
      new Map([['deviceKey', coseKeyOfJwk(holderJwkOf(credential.holder)).encodedStructure]]),
    ],
    ['docType', credential.type],
    [
      'validityInfo',
      new Map([
        ['signed', wholeSecond(now)],
        ['validFrom', validFrom],
        ['validUntil', wholeSecond(credential.validUntil ?? new Date(validFrom.getTime() + YEAR_MS))],
      ]),
    ],
  ]);
  // draft-ietf-oauth-status-list: the mdoc's Token Status List entry sits in the MSO.
  if (status) mso.set('status', { status_list: { idx: status.index, uri: status.uri } });
  const protectedHeader = cborEncode(new Map([[ALG, ES256]]));
  const payload = cborEncode(DataItem.fromData(mso));
  const toBeSigned = cborEncode(['Signature1', protectedHeader, new Uint8Array(), payload]);
  const signature = new Uint8Array(
    sign('sha256', toBeSigned, { key: prepared.es256Key, dsaEncoding: 'ieee-p1363' }),
  );
  const chain = prepared.x5chain.length === 1 ? prepared.x5chain[0] : prepared.x5chain;
  const issuerAuth = [protectedHeader, new Map([[X5CHAIN, chain]]), payload, signature];
  return base64url.encode(
    cborEncode(
      new Map<string, unknown>([
        ['nameSpaces', nameSpaces],
        ['issuerAuth', issuerAuth],
      ]),
    ),
  );
}
