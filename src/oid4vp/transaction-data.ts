import { createHash } from 'node:crypto';
import type { DcqlQuery } from 'dcql';
import { Compile } from 'typebox/compile';
import { Oid4vpError } from './oid4vp-errors.ts';
import { TransactionDataObject } from './oid4vp-schemas.ts';

/**
 * Transaction data (OpenID4VP §5.1, §8.4, B.3.3): what a payment or signing verifier asks the
 * person to confirm, bound into the presentation by its hash. Only SD-JWT VC carries it (in the
 * key binding JWT); a query of another format that transaction data names matches nothing.
 */
export interface TransactionDataItem {
  /** The string exactly as received: it is hashed as is, never re-encoded (B.3.3). */
  encoded: string;
  type: string;
  credentialIds: string[];
  /** transaction_data_hashes_alg as requested, or null (then sha-256, and no alg claim). */
  hashAlgorithms: string[] | null;
  /** Every other field, as sent, for the person to read. */
  fields: Record<string, unknown>;
}

export const TRANSACTION_DATA_FORMATS = ['dc+sd-jwt'];

/** IANA "Named Information Hash Algorithm" names this wallet hashes with, in order of preference. */
const HASH_ALGORITHMS: Record<string, string> = {
  'sha-256': 'sha256',
  'sha-384': 'sha384',
  'sha-512': 'sha512',
};
const MAX_ITEMS = 16;
const MAX_ITEM_LENGTH = 8192;

const checkObject = Compile(TransactionDataObject);
const invalid = (why: string) => new Oid4vpError('invalid_transaction_data', why);

function decodeItem(encoded: unknown, index: number, types: string[]): TransactionDataItem {
  const at = `transaction_data[${index}]`;
  if (typeof encoded !== 'string' || !/^[A-Za-z0-9_-]+$/.test(encoded)) {
    throw invalid(`${at} is not a base64url string`);
  }
  if (encoded.length > MAX_ITEM_LENGTH) throw invalid(`${at} is longer than ${MAX_ITEM_LENGTH} characters`);
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    throw invalid(`${at} is not base64url-encoded JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(`${at} is not a JSON object`);
  }
  if (!checkObject.Check(value)) {
    const [first] = checkObject.Errors(value);
    throw invalid(`${at}${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}`);
  }
  const { type, credential_ids, transaction_data_hashes_alg, ...fields } = value;
  if (!types.includes(type)) {
    throw invalid(`${at} has the type ${type.slice(0, 100)}, which this wallet does not support`);
  }
  if (transaction_data_hashes_alg && !transaction_data_hashes_alg.some((alg) => alg in HASH_ALGORITHMS)) {
    throw invalid(
      `${at} asks for hash algorithms this wallet does not support (it supports ${Object.keys(HASH_ALGORITHMS).join(', ')})`,
    );
  }
  return {
    encoded,
    type,
    credentialIds: credential_ids,
    hashAlgorithms: transaction_data_hashes_alg ?? null,
    fields,
  };
}

/** The one hash algorithm all items bound to one presentation allow, preferring sha-256. */
function commonAlgorithm(items: TransactionDataItem[]): string | undefined {
  return Object.keys(HASH_ALGORITHMS).find((alg) =>
    items.every((item) => (item.hashAlgorithms ?? ['sha-256']).includes(alg)),
  );
}

/**
 * Decodes and checks `transaction_data` against the accepted types and the request's DCQL query:
 * every `credential_ids` entry names a credential query that asks for holder binding, and the
 * items that may be bound to one presentation agree on a hash algorithm.
 */
export function parseTransactionData(
  value: unknown,
  query: DcqlQuery.Output,
  types: string[],
): TransactionDataItem[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw invalid('transaction_data must be a non-empty array of base64url strings');
  }
  if (value.length > MAX_ITEMS) throw invalid(`transaction_data holds more than ${MAX_ITEMS} items`);
  const items = value.map((encoded, i) => decodeItem(encoded, i, types));
  for (const [i, item] of items.entries()) {
    for (const id of item.credentialIds) {
      const credentialQuery = query.credentials.find((c) => c.id === id);
      if (!credentialQuery)
        throw invalid(
          `transaction_data[${i}] names ${id.slice(0, 100)}, which the DCQL query does not request`,
        );
      if (credentialQuery.require_cryptographic_holder_binding === false) {
        throw invalid(
          `transaction_data[${i}] names ${id}, a query without cryptographic holder binding (B.3.3)`,
        );
      }
    }
  }
  for (const credentialQuery of query.credentials) {
    const bound = items.filter((item) => item.credentialIds.includes(credentialQuery.id));
    if (bound.length > 1 && !commonAlgorithm(bound)) {
      throw invalid(`the transaction data for ${credentialQuery.id} allow no common hash algorithm`);
    }
  }
  return items;
}

/** The credential queries that transaction data names: only formats that carry it match them. */
export const queriesWithTransactionData = (items: TransactionDataItem[]) =>
  new Set(items.flatMap((item) => item.credentialIds));

/**
 * Which presented query binds each item: the first of its `credential_ids` that the answer
 * presents (§5.1: only one of them is used). Undefined when some item names no presented query.
 */
export function bindTransactionData(
  items: TransactionDataItem[],
  presentedQueryIds: string[],
): Map<string, TransactionDataItem[]> | undefined {
  const bound = new Map<string, TransactionDataItem[]>();
  for (const item of items) {
    const queryId = item.credentialIds.find((id) => presentedQueryIds.includes(id));
    if (queryId === undefined) return undefined;
    bound.set(queryId, [...(bound.get(queryId) ?? []), item]);
  }
  return bound;
}

/** The key binding JWT claims for the items bound to one presentation (B.3.3). */
export function transactionDataClaims(items: TransactionDataItem[]): Record<string, unknown> {
  const alg = commonAlgorithm(items)!;
  const asked = items.some((item) => item.hashAlgorithms !== null);
  return {
    transaction_data_hashes: items.map((item) =>
      createHash(HASH_ALGORITHMS[alg]!).update(item.encoded, 'utf8').digest('base64url'),
    ),
    ...(asked ? { transaction_data_hashes_alg: alg } : {}),
  };
}
