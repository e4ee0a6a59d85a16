import type { JsonWebKey, KeyObject, X509Certificate } from 'node:crypto';
import { CofferError } from '../errors.ts';
import type { ValueShape } from './value-shape.ts';

/**
 * The one interface every credential format implements (DESIGN.md, Credential formats). The
 * store, the list, the DCQL matching, the consent and the presentations reach a format only
 * through it; adding a format is one folder under src/formats/ and one line in registry.ts.
 */

export type FormatId = 'ldp_vc' | 'jwt_vc_json' | 'dc+sd-jwt' | 'mso_mdoc';

/** Every format this wallet holds and presents (OpenID4VP 1.0 Appendix B identifiers). */
export const FORMAT_IDS: FormatId[] = ['ldp_vc', 'dc+sd-jwt', 'mso_mdoc', 'jwt_vc_json'];

/** A credential that is well formed but not acceptable; the sentence says what failed. */
export const rejected = (why: string) =>
  new CofferError('invalid_credential', `The credential was refused: ${why}.`);

/** Whom a credential names as its holder; the store resolves it to an account. */
export type HolderReference =
  /** A subject DID: the account's did:key, or the did:pkh of its wallet (ldp_vc, jwt_vc_json). */
  | { kind: 'did'; did: string }
  /** A public key (SD-JWT `cnf.jwk` or `cnf.kid` resolved, mdoc `deviceKey`), as a public JWK. */
  | { kind: 'key'; jwk: JsonWebKey };

/** The issuer's X.509 certificate, where the credential carries one (`x5c`, `x5chain`). */
export interface IssuerCertificate {
  subject: string;
  issuer: string;
  /** SHA-256 of the DER certificate, hex pairs joined by colons. */
  fingerprint: string;
  notAfter: string;
  /** True when the chain reaches a certificate of ISSUER_TRUST_ANCHORS. */
  trusted: boolean;
}

/** What the list, the consent and the wallet page say about a credential, any format. */
export interface CredentialSummary {
  format: FormatId;
  /** The identifier of the 409 rule: `jti`, the VC's `id`, else a hash (DESIGN.md). */
  id: string;
  /** The issuer's DID or URL, or its certificate subject where it has no other name. */
  issuer: string;
  /** `vct`, the doctype, or the VC's `type` array. */
  type: string | string[];
  validFrom: string | null;
  validUntil: string | null;
  /**
   * Every claim the wallet holds, decoded: DCQL claims paths resolve against this object
   * (SD-JWT: the processed payload; mdoc: {namespace: {element: value}}; W3C: the VC without proof).
   */
  claims: Record<string, unknown>;
  issuerCertificate: IssuerCertificate | null;
}

/** A credential offered for storage, parsed and policy-checked; its signatures not yet checked. */
export interface ParsedCredential {
  summary: CredentialSummary;
  holder: HolderReference;
  /** The value to keep (stored encrypted, as given). */
  stored: unknown;
  /** Checks every signature and digest; throws `rejected(…)` naming what failed. */
  verify(): Promise<CredentialCheck>;
}

/** What a format's check may give the holder to keep beside the credential. */
export interface CredentialCheck {
  /**
   * Work done while checking that every later presentation would repeat (bbs-2023: the prepared
   * statements); kept encrypted beside the credential and passed back to `present`.
   */
  prepared?: unknown;
}

export interface ParseContext {
  now: Date;
  /** ISSUER_TRUST_ANCHORS: an untrusted issuer certificate is accepted and marked untrusted. */
  issuerTrustAnchors: X509Certificate[];
}

/** The holder's hosted key (Ed25519), which signs key binding JWTs, VPs and DeviceSignatures. */
export interface HolderKey {
  did: string;
  privateJwk: JsonWebKey;
}

/** What binds a presentation to one request (OpenID4VP §14.1.2, B.2.6.1, B.3.6). */
export interface Audience {
  /** The request's client_id, with its prefix. */
  clientId: string;
  nonce: string;
  /** response_uri (direct_post, direct_post.jwt) or redirect_uri (fragment). */
  responseUri: string;
  /** RFC 7638 SHA-256 thumbprint of the verifier key the response is encrypted to, else null. */
  encryptionJwkThumbprint: Uint8Array | null;
}

export interface PresentationInput {
  stored: unknown;
  /** JSON pointers into `summary.claims` of the claims to disclose (from DCQL claims paths). */
  disclosed: string[];
  /** The holder key, when the query asks for cryptographic holder binding. */
  holder: HolderKey | null;
  audience: Audience;
  /** What the store's check kept for this credential (CredentialCheck.prepared), if anything. */
  prepared?: unknown;
  /** Claims the key binding JWT adds (transaction_data_hashes); only SD-JWT VC carries them. */
  keyBindingClaims?: Record<string, unknown>;
}

/**
 * What a DCQL `trusted_authorities` entry (OpenID4VP §6.1.1) is matched against: the
 * authority key identifiers (base64url, canonical: no padding) of every certificate of the
 * credential's X.509 chain. The only type Coffer can evaluate; absent when the credential has
 * no chain or no certificate of it names its authority's key.
 */
export interface CredentialAuthority {
  type: 'aki';
  values: string[];
}

/**
 * The dcql package's input for one credential (its `DcqlQuery.query` argument), without
 * `cryptographic_holder_binding`, which the matcher adds.
 */
export type DcqlInput = (
  | { credential_format: 'mso_mdoc'; doctype: string; namespaces: Record<string, Record<string, unknown>> }
  | { credential_format: 'dc+sd-jwt'; vct: string; claims: Record<string, unknown> }
  | { credential_format: 'ldp_vc' | 'jwt_vc_json'; type: string[]; claims: Record<string, unknown> }
) & { authority?: CredentialAuthority };

/** Where a credential's status is published, and the key its issuer signs with (a list must verify with it). */
export type StatusReference =
  | { list: 'token'; uri: string; index: number; issuerKey: IssuerPublicKey }
  | { list: 'bitstring'; uri: string; index: number; purpose: string; issuerKey: IssuerPublicKey };

export type IssuerPublicKey =
  /** JWS-signed lists (Token Status List JWTs, VC-JWT bitstring lists). */
  | { kind: 'jose'; key: KeyObject | JsonWebKey }
  /** ldp_vc issuers: a bbs-2023 base-proofed list credential issued by the same did:key. */
  | { kind: 'bbs'; publicKey: Uint8Array; issuer: string };

export interface CredentialFormat {
  readonly id: FormatId;
  /** True when everything is disclosed whatever is asked (jwt_vc_json); the consent says so. */
  readonly disclosesEverything: boolean;
  /** The syntax of this format's values; a value of another shape does not fit it (400). */
  readonly shape: ValueShape;
  /** Whether a value sent without `format` has this format's shape. */
  recognises(value: unknown): boolean;
  /** Parses a value sent to the store; throws 400 (shape) or `rejected` (policy). */
  parse(value: unknown, context: ParseContext): ParsedCredential;
  /** The summary of a stored value (no cryptography; issuer trust as `now` and the anchors say). */
  summarize(stored: unknown, context: ParseContext): CredentialSummary;
  /** A list element of GET /v1/openidc/credentials. */
  listEntry(stored: unknown, summary: CredentialSummary): unknown;
  /** What the dcql package matches (types after JSON-LD expansion for ldp_vc). */
  dcqlInput(stored: unknown, summary: CredentialSummary): Promise<DcqlInput>;
  /**
   * Whether a verifier with these `vp_formats_supported[format]` parameters can verify a
   * presentation of this credential (issuer and holder algorithms). `undefined` parameters mean
   * the verifier does not take this format at all.
   */
  verifierCanVerify(
    stored: unknown,
    parameters: Record<string, unknown> | undefined,
    holderBinding: boolean,
  ): boolean;
  /** The vp_token entry for this credential (Appendix B): a string or a JSON object. */
  present(input: PresentationInput): Promise<string | Record<string, unknown>>;
  /**
   * Where the stored credential's status is published; null when it has no status entry or one
   * Coffer cannot use (never throws: a stored credential is shown whatever its entry).
   */
  statusReference(stored: unknown, context: ParseContext): StatusReference | null;
}

/** The list element of a compact format (DESIGN.md, List): its summary and the stored value. */
export function compactListEntry(stored: unknown, summary: CredentialSummary) {
  const { format, id, issuer, type, validFrom, validUntil, claims } = summary;
  return { format, id, issuer, type, validFrom, validUntil, claims, credential: stored };
}
