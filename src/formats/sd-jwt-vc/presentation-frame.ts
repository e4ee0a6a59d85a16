import { ownMember, setMember } from '../../own-members.ts';

/** RFC 6901 reference tokens of a JSON pointer. */
const tokensOf = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));

type Path = string[];

/** The paths of every leaf under a value (the value itself when it is no object or array). */
function leavesOf(value: unknown, path: Path): Path[] {
  if (value === null || typeof value !== 'object') return [path];
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return [path];
  return entries.flatMap(([key, child]) => leavesOf(child, [...path, key]));
}

type Node = Record<string, unknown>;

const valueAt = (root: unknown, path: Path): unknown => path.reduce<unknown>(ownMember, root);

/**
 * The @sd-jwt presentation frame that discloses exactly the claims at these JSON pointers into the
 * processed claims, with their parents: `{address: {street_address: true}}`, array elements by
 * index. A pointer to an object or array asks for all of it, so every claim inside is framed.
 */
export function presentationFrameOf(
  claims: Record<string, unknown>,
  pointers: string[],
): Record<string, unknown> {
  const frame: Node = {};
  for (const pointer of pointers) {
    const path = tokensOf(pointer);
    for (const leaf of leavesOf(valueAt(claims, path), path)) {
      let node: Node = frame;
      leaf.forEach((token, i) => {
        const member = ownMember(node, token);
        if (i === leaf.length - 1) {
          if (member === undefined) setMember(node, token, true);
          return;
        }
        if (member === undefined || member === true) setMember(node, token, {});
        node = ownMember(node, token) as Node;
      });
    }
  }
  return frame;
}
