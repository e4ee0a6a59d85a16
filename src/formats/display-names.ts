/**
 * Names a person can read for an issuer and a credential type (issue #29): a did:key of up to
 * 140 characters or a `vct` URL says nothing to a person, so pages show the name the issuer gives
 * itself or its certificate's organisation, and the type's display name or a readable form of
 * its last segment. Pure: the callers pass what they hold (no fetching of type metadata).
 */

/** Names longer than this are cut: they come from issuers, and a page must stay readable. */
const MAX_NAME = 100;

/** A name from an issuer, trimmed and without control characters; undefined when empty. */
function cleanName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value
    .replace(/[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (text === '') return undefined;
  return text.length > MAX_NAME ? `${text.slice(0, MAX_NAME - 1)}…` : text;
}

/**
 * An identifier short enough for a line: a DID keeps its method and both ends of the rest
 * (`did:key:z6MkhaXg…ta2doK`; the first characters of a did:key are its key type's prefix, so
 * eight are kept), a URL its host and short path, anything else both ends.
 */
export function shortIdentifier(id: string): string {
  const did = /^did:([a-z0-9]+):(.+)$/.exec(id);
  if (did) {
    const [, method, rest] = did;
    return rest!.length > 32 ? `did:${method}:${rest!.slice(0, 8)}…${rest!.slice(-6)}` : id;
  }
  if (/^https?:\/\//i.test(id)) {
    try {
      const url = new URL(id);
      const path = url.pathname.replace(/\/+$/, '');
      return `${url.host}${path}`.length > 40 ? `${url.host}/…` : `${url.host}${path}`;
    } catch {
      // Not a URL after all: cut as any other text.
    }
  }
  return id.length > 40 ? `${id.slice(0, 24)}…${id.slice(-8)}` : id;
}

/** One attribute of an X.509 subject as the formats print it (`C=GB, O=Example\, Ltd, CN=…`). */
export function subjectAttribute(subject: string, attribute: string): string | undefined {
  const pattern = /(?:^|,\s*)([A-Za-z][\w.-]*)=((?:\\.|[^\\,])*)/g;
  for (const match of subject.matchAll(pattern)) {
    if (match[1]!.toUpperCase() === attribute.toUpperCase()) {
      return cleanName(match[2]!.replace(/\\(.)/g, '$1'));
    }
  }
  return undefined;
}

export interface IssuerNameInput {
  /** The issuer's identifier: a DID, an https URL, or (mdoc) its certificate's subject. */
  id: string;
  /**
   * The name the issuer gives itself, where the wallet holds one: its OpenID4VCI metadata
   * `display` (kept with a received credential), a W3C credential's `issuer.name`.
   */
  displayName?: string | null | undefined;
  /** The subject of the issuer's certificate (`x5c`, `x5chain`), where it has one. */
  certificateSubject?: string | null | undefined;
}

export interface IssuerName {
  /** What a person reads: the display name, else the certificate's O or CN, else `short`. */
  label: string;
  /** The identifier shortened, for beside the label; null where the label already is it. */
  short: string | null;
  /** The identifier in full, for whoever wants to check it. */
  full: string;
}

export function issuerName(input: IssuerNameInput): IssuerName {
  const subject = input.certificateSubject ?? undefined;
  const named =
    cleanName(input.displayName) ??
    (subject ? (subjectAttribute(subject, 'O') ?? subjectAttribute(subject, 'CN')) : undefined);
  // An mdoc's identifier is its certificate subject: shortening a distinguished name helps nobody.
  const short = input.id === subject ? null : shortIdentifier(input.id);
  const label = named ?? (short || 'an issuer without a name');
  return { label, short: short === label ? null : short, full: input.id };
}

/** Well-known types whose last segment is no name (ISO mdoc doctypes, the EU PID). */
const KNOWN_TYPES: Record<string, string> = {
  'org.iso.18013.5.1.mDL': 'Mobile driving licence',
  'org.iso.7367.1.mVRC': 'Vehicle registration certificate',
  'org.iso.23220.photoid.1': 'Photo ID',
  'eu.europa.ec.eudi.pid.1': 'Person identification data (PID)',
  'urn:eudi:pid:1': 'Person identification data (PID)',
  'urn:eu.europa.ec.eudi:pid:1': 'Person identification data (PID)',
};

const W3C_BASE_TYPES = new Set([
  'VerifiableCredential',
  'https://www.w3.org/2018/credentials#VerifiableCredential',
]);

const VERSION = /^v?\d+$/i;

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The segment of a type that names it: a URL's fragment or last path segment, a URN's or doctype's last part. */
function lastSegment(type: string): string {
  let parts: string[];
  if (/^https?:\/\//i.test(type)) {
    try {
      const url = new URL(type);
      if (url.hash.length > 1) return decoded(url.hash.slice(1));
      parts = url.pathname.split('/').filter(Boolean).map(decoded);
      if (parts.length === 0) return url.host;
    } catch {
      parts = type.split(/[/#:.]/);
    }
  } else {
    parts = type.split(/[/#:.]/);
  }
  parts = parts.filter((part) => part !== '');
  // `…/identity/v1`, `eu.europa.ec.eudi.pid.1`: the version names nothing.
  while (parts.length > 1 && VERSION.test(parts.at(-1)!)) parts.pop();
  return parts.at(-1) ?? type;
}

/**
 * A type's segment as words: `identity_credential` and `IdentityCredential` read "Identity
 * credential"; acronyms (`PID`) and words like `mDL` or `eHealth` keep their case.
 */
export function readableSegment(segment: string): string {
  const words = segment
    .replace(/([a-z0-9]{2,})([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_\-+]+/)
    .filter(Boolean);
  return words
    .map((word, i) => {
      const acronym = word.length > 1 && word === word.toUpperCase() && /[A-Z]/.test(word);
      const mixed = /[a-z]/.test(word) && /[A-Z]/.test(word.slice(1));
      if (acronym || mixed) return word;
      const lower = word.toLowerCase();
      return i === 0 ? lower.charAt(0).toUpperCase() + lower.slice(1) : lower;
    })
    .join(' ');
}

export interface CredentialTypeInput {
  /** `vct`, the mdoc doctype, or the W3C `type` array. */
  type: string | string[];
  /**
   * The type's display name where the wallet holds one: the issuer's OpenID4VCI credential
   * configuration `display`, SD-JWT VC type metadata `display`, a W3C credential's `name`.
   */
  displayName?: string | null | undefined;
}

/** A credential type's name for a person: its display name, a known type's name, else its last segment made readable. */
export function credentialTypeName(input: CredentialTypeInput): string {
  const named = cleanName(input.displayName);
  if (named) return named;
  const types = Array.isArray(input.type) ? input.type : [input.type];
  const type = types.filter((t) => typeof t === 'string' && !W3C_BASE_TYPES.has(t)).at(-1);
  if (type === undefined) return 'Credential';
  const known = KNOWN_TYPES[type];
  if (known) return known;
  return cleanName(readableSegment(lastSegment(type))) ?? cleanName(type) ?? 'Credential';
}

/** A JSON-LD text: a string, a language value object, or a list of them (English first). */
function languageText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const entries = (Array.isArray(value) ? value : [value]).filter(
    (entry): entry is { '@value': string; '@language'?: unknown } =>
      typeof entry === 'object' && entry !== null && typeof entry['@value'] === 'string',
  );
  const english = entries.find(
    (entry) => typeof entry['@language'] === 'string' && entry['@language'].toLowerCase().startsWith('en'),
  );
  return (english ?? entries[0])?.['@value'];
}

/**
 * The names a W3C credential (`ldp_vc`, `jwt_vc_json`) gives its issuer (`issuer.name`) and
 * itself (`name`, VC Data Model 2.0 §4.6), read from its summary's claims. Another format's
 * top-level `name` is a claim about the person: none is read.
 */
export function namesInCredential(
  format: string,
  claims: Record<string, unknown>,
): { issuer?: string; credential?: string } {
  if (format !== 'ldp_vc' && format !== 'jwt_vc_json') return {};
  const issuer = claims['issuer'];
  const issuerText =
    typeof issuer === 'object' && issuer !== null && !Array.isArray(issuer)
      ? cleanName(languageText((issuer as Record<string, unknown>)['name']))
      : undefined;
  const credentialText = cleanName(languageText(claims['name']));
  return {
    ...(issuerText ? { issuer: issuerText } : {}),
    ...(credentialText ? { credential: credentialText } : {}),
  };
}

/**
 * A claim's name for people as an issuer's metadata gives it (OpenID4VCI `credential_metadata`
 * `claims`, one display entry chosen): `path` is a claims path pointer into the credential
 * (Appendix C), W3C ones starting at `credentialSubject`.
 */
export interface ClaimName {
  path: (string | number | null)[];
  name: string;
}

/** A described step stands for the held one: the same name or index, or null for any element. */
const stepMatches = (described: string | number | null, held: string | number) =>
  described === held || (described === null && typeof held === 'number');

/**
 * What a person reads for the claim at `path` (its steps into the credential as the wallet
 * holds it: W3C credentials from their root, so from `credentialSubject`; array elements by
 * index): the issuer's name for that claim, or for the nearest claim around it followed by the
 * rest of the steps; undefined when the issuer names neither. Paths are applied from the root,
 * as Appendix C has them, whichever issuer sent them: a W3C path from a claim name addresses
 * no subject claim.
 */
export function claimDisplayName(
  names: readonly ClaimName[],
  path: readonly (string | number)[],
): string | undefined {
  let best: { name: string; length: number } | undefined;
  for (const { path: described, name } of names) {
    // A description of every element of a list names the list the page shows as one line.
    let length = described.length;
    while (length > 1 && described[length - 1] === null) length--;
    if (length > path.length || (best && best.length >= length)) continue;
    if (!described.slice(0, length).every((step, i) => stepMatches(step, path[i]!))) continue;
    const cleaned = cleanName(name);
    if (cleaned) best = { name: cleaned, length };
  }
  if (!best) return undefined;
  const rest = path
    .slice(best.length)
    .map((step) => (typeof step === 'number' ? ` ${step + 1}` : `.${step}`))
    .join('');
  return `${best.name}${rest}`;
}
