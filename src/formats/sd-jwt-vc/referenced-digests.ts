import type { Disclosure } from '@sd-jwt/utils';
import { rejected } from '../credential-format.ts';

type HasherSync = (data: string, alg: string) => Uint8Array;

/** Every digest the payload and the disclosed values reference: `_sd` entries and `{"...": digest}` array elements. */
function collectDigests(value: unknown, into: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) {
      if (
        item !== null &&
        typeof item === 'object' &&
        !Array.isArray(item) &&
        Object.keys(item).length === 1 &&
        typeof (item as Record<string, unknown>)['...'] === 'string'
      ) {
        into.push((item as Record<string, string>)['...']!);
      } else collectDigests(item, into);
    }
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value)) {
    if (key === '_sd' && Array.isArray(child))
      into.push(...child.filter((d): d is string => typeof d === 'string'));
    else collectDigests(child, into);
  }
}

/**
 * Each given disclosure must be referenced by exactly one digest (RFC 9901 §7.1 step 3): the
 * @sd-jwt 0.19 verifier silently drops a disclosure that matches no digest, so an altered or
 * smuggled disclosure would otherwise be stored and later presented as the issuer's.
 */
export function checkDigestsReferenced(
  payload: Record<string, unknown>,
  disclosures: Disclosure[],
  hasher: HasherSync,
): void {
  const referenced: string[] = [];
  collectDigests(payload, referenced);
  for (const disclosure of disclosures) collectDigests(disclosure.value, referenced);
  const seen = new Set<string>();
  for (const disclosure of disclosures) {
    const digest = disclosure.digestSync({ hasher, alg: 'sha-256' });
    const name = disclosure.key ?? 'an array element';
    if (!referenced.includes(digest)) {
      throw rejected(`its disclosure of ${name} matches no digest the issuer signed (altered or added)`);
    }
    if (seen.has(digest)) throw rejected(`its disclosure of ${name} is given twice`);
    seen.add(digest);
  }
  if (new Set(referenced).size !== referenced.length)
    throw rejected('its issuer-signed digests repeat one another');
}
