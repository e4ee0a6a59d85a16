import { parsePointer } from '@digitalbazaar/di-sd-primitives';
import { invalidField } from '../../errors.ts';
import { rejected } from '../credential-format.ts';
import type { SecuredDocument } from './bbs-2023/shared.ts';
import { type IssuerKey, IssuerKeyError, resolveIssuerKey } from './issuer-key.ts';

export const VC_V2_CONTEXT = 'https://www.w3.org/ns/credentials/v2';

/** What storing needs to know of a credential that passed the policy checks. */
export interface CheckedCredential {
  credentialId: string;
  issuer: string;
  subject: string;
  issuerKey: IssuerKey;
  document: SecuredDocument;
}

// XML Schema dateTime as VC Data Model 2.0 §4.9 requires (time zone optional).
const DATE_TIME = /^-?\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

/** A validFrom or validUntil: undefined when absent, null when it is not an XML Schema dateTime. */
export function dateTimeOf(value: unknown): Date | null | undefined {
  if (value === undefined || value === '') return undefined;
  const date = typeof value === 'string' && DATE_TIME.test(value) ? new Date(value) : undefined;
  return date && !Number.isNaN(date.getTime()) ? date : null;
}

function dateOf(value: unknown, field: string): Date | undefined {
  const date = dateTimeOf(value);
  if (date === null) throw rejected(`${field} is not an XML Schema dateTime`);
  return date;
}

const idOf = (value: unknown): unknown =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as { id?: unknown }).id : value;

/**
 * The store policy (DESIGN.md, Credentials), checked before any cryptography: a VC Data
 * Model 2.0 credential, secured with one bbs-2023 assertion proof by a key its issuer controls,
 * not expired, about one subject.
 */
export function checkCredential(vc: Record<string, unknown>, now: Date): CheckedCredential {
  const contexts = vc['@context'] as unknown[];
  if (contexts[0] !== VC_V2_CONTEXT) {
    throw rejected(`it is not a VC Data Model 2.0 credential (its first @context must be ${VC_V2_CONTEXT})`);
  }
  if (!(vc['type'] as string[]).includes('VerifiableCredential')) {
    throw rejected('its type does not include VerifiableCredential');
  }
  const issuer = idOf(vc['issuer']);
  if (typeof issuer !== 'string' || !issuer.startsWith('did:')) throw rejected('its issuer is not a DID');
  const subject = idOf(vc['credentialSubject']);
  if (typeof subject !== 'string' || !subject.startsWith('did:')) {
    throw rejected('its credentialSubject has no DID as id');
  }
  const proof = vc['proof'] as Record<string, unknown>;
  if (proof['type'] !== 'DataIntegrityProof') {
    throw rejected(`its proof type ${JSON.stringify(proof['type'])} is not DataIntegrityProof`);
  }
  if (proof['cryptosuite'] !== 'bbs-2023') {
    throw rejected(
      `its cryptosuite ${JSON.stringify(proof['cryptosuite'])} is not supported; Coffer stores bbs-2023 credentials, which allow selective disclosure`,
    );
  }
  if (proof['proofPurpose'] !== 'assertionMethod') {
    throw rejected('its proof purpose is not assertionMethod');
  }
  let issuerKey: IssuerKey;
  try {
    issuerKey = resolveIssuerKey(proof['verificationMethod']);
  } catch (error) {
    if (error instanceof IssuerKeyError) throw rejected(error.message);
    throw error;
  }
  if (issuerKey.controller !== issuer) {
    throw rejected(`it is signed with a key of ${issuerKey.controller}, not of its issuer ${issuer}`);
  }
  dateOf(vc['validFrom'], 'validFrom');
  const validUntil = dateOf(vc['validUntil'], 'validUntil');
  if (validUntil && validUntil <= now) throw rejected(`it expired at ${vc['validUntil']}`);
  return {
    credentialId: vc['id'] as string,
    issuer,
    subject,
    issuerKey,
    document: vc as unknown as SecuredDocument,
  };
}

/**
 * Statements every disclosure reveals besides the issuer's mandatory pointers: a credential
 * proves nothing without its issuer (and stock verifiers require it) nor without its subject
 * (the holder, who is named in the presentation anyway), and a verifier needs its validity
 * period and status to decide whether it still holds.
 */
const ALWAYS_DISCLOSED = [
  '/issuer',
  '/credentialSubject/id',
  '/validFrom',
  '/validUntil',
  '/credentialStatus',
];

/**
 * What a presentation to an OpenID4VP verifier reveals besides the requested claims: no more than
 * a verification needs (§6.4.1: nothing selectively disclosable that was not asked for). A
 * verifier that wants the validity period or the status asks for it in its DCQL query.
 */
export const REQUIRED_FOR_VERIFICATION = ['/issuer', '/credentialSubject/id'];

export function disclosedPointers(
  credential: Record<string, unknown>,
  chosen: string[],
  alwaysDisclosed: string[] = ALWAYS_DISCLOSED,
): string[] {
  const always = alwaysDisclosed.filter((pointer) => {
    const value = parsePointer(pointer).reduce<unknown>(
      (node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
      credential,
    );
    return value !== undefined && value !== '';
  });
  return [...new Set([...always, ...chosen])];
}

/**
 * A JSON pointer (RFC 6901) that names a field present in the credential, resolved exactly as
 * the selective-disclosure library will resolve it. The proof and the contexts are not fields.
 */
export function checkPointer(credential: Record<string, unknown>, pointer: string, at: string): void {
  const bad = (message: string) => invalidField(at, message);
  if (!pointer.startsWith('/') || /~[^01]|~$/.test(pointer))
    throw bad('must be a JSON pointer such as /credentialSubject/first_name');
  let path: Array<string | number>;
  try {
    path = parsePointer(pointer);
  } catch {
    throw bad('must be a JSON pointer such as /credentialSubject/first_name');
  }
  if (path[0] === 'proof' || path[0] === '@context')
    throw bad('must name a field of the credential, not its proof or contexts');
  let value: unknown = credential;
  for (const segment of path) {
    value =
      value !== null && typeof value === 'object' && Object.hasOwn(value, segment)
        ? (value as Record<string | number, unknown>)[segment]
        : undefined;
    if (value === undefined) throw bad(`names no field of credential ${String(credential['id'])}`);
  }
}
