import { createHash } from 'node:crypto';

/**
 * What checking a base proof computes that every later disclosure of the same credential would
 * compute again: the skolemized document, its canonical statements under the proof's HMAC labels,
 * the mandatory ones among them, and the BBS signature's B. The holder keeps it beside the
 * credential, encrypted like it (it holds every claim), and a disclosure then only selects,
 * relabels and proves (disclosure.ts). Plain data: it crosses to worker threads and into blocks.
 */
export interface PreparedStatements {
  version: 1;
  /** SHA-256 (base64url) of the base proofValue this was computed for. */
  proofValueDigest: string;
  /** The credential without proof, skolemized and compacted: pointers select from it. */
  skolemized: Record<string, unknown>;
  /** Blank node labels of the skolemized document's N-Quads → the base proof's HMAC labels. */
  labelMap: Array<[string, string]>;
  /** The canonical statements under the HMAC labels, in the base proof's order. */
  nquads: string[];
  /** Indexes of the statements the issuer's mandatory pointers select. */
  mandatoryIndexes: number[];
  /** B of the BBS signature (bbs/sign.ts, coreVerifyWithBase), compressed, base64url. */
  signatureBase: string;
}

export const proofValueDigest = (proofValue: unknown): string =>
  createHash('sha256').update(String(proofValue)).digest('base64url');

/**
 * The prepared statements if they were made for this very proof value and have the shape this
 * version writes; anything else (another credential's, an older layout) is ignored, and the
 * disclosure is computed from the credential alone.
 */
export function preparedFor(proofValue: unknown, prepared: unknown): PreparedStatements | undefined {
  if (typeof prepared !== 'object' || prepared === null) return undefined;
  const candidate = prepared as Partial<PreparedStatements>;
  if (candidate.version !== 1 || candidate.proofValueDigest !== proofValueDigest(proofValue))
    return undefined;
  const wellFormed =
    typeof candidate.skolemized === 'object' &&
    Array.isArray(candidate.labelMap) &&
    Array.isArray(candidate.nquads) &&
    Array.isArray(candidate.mandatoryIndexes) &&
    typeof candidate.signatureBase === 'string';
  return wellFormed ? (candidate as PreparedStatements) : undefined;
}
