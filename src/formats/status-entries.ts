import type { IssuerPublicKey, StatusReference } from './credential-format.ts';

/**
 * Reading a credential's status entry (no network, no cryptography): the formats call these on
 * stored credentials, so anything malformed gives null rather than an error.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Status lists are fetched under the outbound rules, which take https only. */
function httpsUri(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2048) return null;
  try {
    return new URL(value).protocol === 'https:' ? value : null;
  } catch {
    return null;
  }
}

const isIndex = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** draft-ietf-oauth-status-list: `status.status_list` {idx, uri} (JWT claim or MSO map, as JSON). */
export function tokenStatusReference(status: unknown, issuerKey: IssuerPublicKey): StatusReference | null {
  const entry = isObject(status) ? status['status_list'] : undefined;
  if (!isObject(entry) || !isIndex(entry['idx'])) return null;
  const uri = httpsUri(entry['uri']);
  return uri ? { list: 'token', uri, index: entry['idx'], issuerKey } : null;
}

/** The purposes Coffer acts on, in the order it prefers them when a credential has several. */
const PURPOSES = ['revocation', 'suspension'];

const typesOf = (value: unknown) => (Array.isArray(value) ? value : [value]);

function bitstringEntry(entry: unknown, issuerKey: IssuerPublicKey): StatusReference | null {
  if (!isObject(entry) || !typesOf(entry['type']).includes('BitstringStatusListEntry')) return null;
  const { statusListIndex, statusPurpose, statusSize } = entry;
  if (typeof statusListIndex !== 'string' || !/^\d{1,15}$/.test(statusListIndex)) return null;
  if (typeof statusPurpose !== 'string' || !PURPOSES.includes(statusPurpose)) return null;
  // Revocation and suspension are one bit each; a wider entry is not one Coffer can read.
  if (statusSize !== undefined && Number(statusSize) !== 1) return null;
  const uri = httpsUri(entry['statusListCredential']);
  if (!uri) return null;
  return { list: 'bitstring', uri, index: Number(statusListIndex), purpose: statusPurpose, issuerKey };
}

/** W3C Bitstring Status List: `credentialStatus`, one entry or several (revocation first). */
export function bitstringStatusReference(
  credentialStatus: unknown,
  issuerKey: IssuerPublicKey,
): StatusReference | null {
  const references = (Array.isArray(credentialStatus) ? credentialStatus : [credentialStatus])
    .map((entry) => bitstringEntry(entry, issuerKey))
    .filter((reference) => reference !== null);
  for (const purpose of PURPOSES) {
    const chosen = references.find(
      (reference) => reference.list === 'bitstring' && reference.purpose === purpose,
    );
    if (chosen) return chosen;
  }
  return null;
}
