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

function valueAt(root: unknown, path: Path): unknown {
  return path.reduce<unknown>(
    (node, token) =>
      node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[token] : undefined,
    root,
  );
}

/**
 * The @sd-jwt presentation frame that discloses exactly the claims at these JSON pointers into the
 * processed claims, with their parents: `{address: {street_address: true}}`, array elements by
 * index. A pointer to an object or array asks for all of it, so every claim inside is framed.
 */
export function presentationFrameOf(
  claims: Record<string, unknown>,
  pointers: string[],
): Record<string, unknown> {
  const frame: Record<string, unknown> = {};
  for (const pointer of pointers) {
    const path = tokensOf(pointer);
    for (const leaf of leavesOf(valueAt(claims, path), path)) {
      let node = frame;
      leaf.forEach((token, i) => {
        if (i === leaf.length - 1) {
          if (node[token] === undefined) node[token] = true;
          return;
        }
        if (node[token] === undefined || node[token] === true) node[token] = {};
        node = node[token] as Record<string, unknown>;
      });
    }
  }
  return frame;
}
