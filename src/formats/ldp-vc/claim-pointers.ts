import type { ClaimPath } from '../credential-issuance.ts';

/** One reference token of a JSON pointer (RFC 6901 §3: `~` and `/` escaped). */
const token = (step: string | number) => String(step).replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * The JSON pointers of the values claim paths (OpenID4VCI Appendix C) select in a document: a
 * null step reaches every element of an array, an index one element. A path that selects
 * nothing (a claim this credential does not carry) gives no pointer: bbs-2023's selection
 * refuses a pointer that matches nothing.
 */
export function pointersOf(document: Record<string, unknown>, paths: readonly ClaimPath[]): string[] {
  const pointers = new Set<string>();
  const walk = (node: unknown, path: ClaimPath, at: string): void => {
    if (node === null || node === undefined) return;
    if (path.length === 0) {
      pointers.add(at);
      return;
    }
    const [step, ...rest] = path;
    if (step === null) {
      if (Array.isArray(node)) {
        node.forEach((item, i) => {
          walk(item, rest, `${at}/${i}`);
        });
      }
    } else if (typeof step === 'number') {
      if (Array.isArray(node) && step < node.length) walk(node[step], rest, `${at}/${step}`);
    } else if (typeof node === 'object' && !Array.isArray(node) && Object.hasOwn(node, step!)) {
      walk((node as Record<string, unknown>)[step!], rest, `${at}/${token(step!)}`);
    }
  };
  for (const path of paths) walk(document, path, '');
  return [...pointers];
}
