import { createHmac, createSecretKey } from 'node:crypto';
import type { LabelMap, LabelMapFactory } from '@digitalbazaar/di-sd-primitives';

/**
 * bbs-2023's blank node relabelling (§3.3.2 createShuffledIdLabelMapFunction): each canonical
 * label is HMACed with the proof's key, and the HMAC values, sorted, give the new labels b0,
 * b1, …. The order of statements then leaks nothing about the order of the original data.
 */
export function shuffledLabelMapFunction(hmacKey: Uint8Array): LabelMapFactory {
  // A KeyObject: given raw bytes, every createHmac imports the key anew (about 7 µs a label).
  const key = createSecretKey(hmacKey);
  return async ({ canonicalIdMap }) => {
    const hmacOf = new Map<string, string>();
    for (const [input, canonical] of canonicalIdMap) {
      const mac = createHmac('sha256', key).update(canonical, 'utf8').digest('base64url');
      hmacOf.set(input, `u${mac}`);
    }
    const sorted = [...hmacOf.values()].sort();
    const rank = new Map(sorted.map((mac, i) => [mac, i]));
    const labels: LabelMap = new Map();
    for (const [input, mac] of hmacOf) labels.set(input, `b${rank.get(mac)}`);
    return labels;
  };
}
