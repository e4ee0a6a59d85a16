/**
 * If-None-Match against an entity tag (RFC 9110 §13.1.2): the weak comparison — `W/"x"` and
 * `"x"` match — over a comma-separated list, and `*` matches any current representation.
 */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  if (header.trim() === '*') return true;
  const wanted = opaque(etag);
  return header.split(',').some((tag) => opaque(tag) === wanted);
}
