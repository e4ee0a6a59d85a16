/**
 * A credential's claims as lines a person can read: "name: value", nested objects as dotted
 * labels, lists joined. Members that are the credential's machinery rather than claims about
 * the person (contexts, proofs, keys, status entries, times the page shows elsewhere) are left
 * out.
 */

export interface ClaimLine {
  label: string;
  value: string;
}

const MACHINERY = new Set([
  '@context',
  'type',
  'id',
  'issuer',
  'iss',
  'sub',
  'iat',
  'nbf',
  'exp',
  'jti',
  'vct',
  'vct#integrity',
  'cnf',
  'status',
  'credentialStatus',
  'credentialSchema',
  'validFrom',
  'validUntil',
  'issuanceDate',
  'expirationDate',
  'proof',
  '_sd_alg',
]);

const MAX_LINES = 200;
const MAX_VALUE = 300;

function text(value: unknown): string {
  if (value instanceof Uint8Array) return `(binary data, ${value.length} bytes)`;
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Map) return text(Object.fromEntries(value));
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

const clip = (value: string) => (value.length > MAX_VALUE ? `${value.slice(0, MAX_VALUE)}…` : value);

/**
 * A claim's name for the page: the issuer's, given its path into the credential's claims, else
 * the claim's own label.
 */
export type ClaimNamer = (path: (string | number)[]) => string | undefined;

interface Collecting {
  lines: ClaimLine[];
  nameOf: ClaimNamer;
}

function collect(
  value: unknown,
  at: { label: string; path: (string | number)[] },
  into: Collecting,
  depth: number,
): void {
  const { lines } = into;
  if (lines.length >= MAX_LINES) return;
  const line = (shown: string) => lines.push({ label: into.nameOf(at.path) ?? at.label, value: clip(shown) });
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== 'object' || v === null)) {
      line(value.map(text).join(', '));
      return;
    }
    value.forEach((item, i) => {
      collect(item, { label: `${at.label} ${i + 1}`, path: [...at.path, i] }, into, depth + 1);
    });
    return;
  }
  const entries =
    value instanceof Map
      ? [...value.entries()].map(([k, v]) => [String(k), v] as const)
      : typeof value === 'object' &&
          value !== null &&
          !(value instanceof Uint8Array) &&
          !(value instanceof Date)
        ? Object.entries(value)
        : undefined;
  if (!entries || depth > 4) {
    line(text(value));
    return;
  }
  for (const [key, inner] of entries) {
    if (depth === 0 && MACHINERY.has(key)) continue;
    if (key === 'id' && typeof inner === 'string' && inner.startsWith('did:')) continue;
    collect(
      inner,
      { label: at.label ? `${at.label}.${key}` : key, path: [...at.path, key] },
      into,
      depth + 1,
    );
  }
}

/**
 * The lines of a summary's claims; a W3C credential's subject fields come without their prefix
 * in their labels, while `nameOf` gets every claim's whole path (W3C: from credentialSubject).
 */
export function claimLines(
  claims: Record<string, unknown>,
  nameOf: ClaimNamer = () => undefined,
): ClaimLine[] {
  const into: Collecting = { lines: [], nameOf };
  const subject = claims['credentialSubject'];
  if (subject !== undefined) {
    const { credentialSubject: _subject, ...rest } = claims;
    collect(subject, { label: '', path: ['credentialSubject'] }, into, 1);
    collect(rest, { label: '', path: [] }, into, 0);
  } else {
    collect(claims, { label: '', path: [] }, into, 0);
  }
  return into.lines;
}
