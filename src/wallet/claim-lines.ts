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

function collect(value: unknown, label: string, lines: ClaimLine[], depth: number): void {
  if (lines.length >= MAX_LINES) return;
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== 'object' || v === null)) {
      lines.push({ label, value: clip(value.map(text).join(', ')) });
      return;
    }
    value.forEach((item, i) => {
      collect(item, `${label} ${i + 1}`, lines, depth + 1);
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
    lines.push({ label, value: clip(text(value)) });
    return;
  }
  for (const [key, inner] of entries) {
    if (depth === 0 && MACHINERY.has(key)) continue;
    if (key === 'id' && typeof inner === 'string' && inner.startsWith('did:')) continue;
    collect(inner, label ? `${label}.${key}` : key, lines, depth + 1);
  }
}

/** The lines of a summary's claims; a W3C credential's subject fields come without their prefix. */
export function claimLines(claims: Record<string, unknown>): ClaimLine[] {
  const lines: ClaimLine[] = [];
  const subject = claims['credentialSubject'];
  if (subject !== undefined) {
    const { credentialSubject: _subject, ...rest } = claims;
    collect(subject, '', lines, 1);
    collect(rest, '', lines, 0);
  } else {
    collect(claims, '', lines, 0);
  }
  return lines;
}
