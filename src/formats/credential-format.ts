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

/*
 * The verifier side (OpenID4VP 1.0 §8.6, §14.1, Appendix B): what one presentation of a vp_token
 * is checked against, and every check's outcome by a stable name. src/verifier/ adds the checks
 * that span presentations (DCQL satisfaction, status).
 */

/** What a presentation must be bound to and judged by. */
export interface PresentationExpectation {
  /**
   * The request's client_id with its prefix (`origin:<origin>` for the Digital Credentials API),
   * its nonce, response_uri and the thumbprint of the response encryption key (mdoc transcript).
   */
  audience: Audience;
  /** The Digital Credentials API's caller origin: mdoc's `OpenID4VPDCAPIHandover`. */
  origin?: string | undefined;
  now: Date;
  /** CA certificates an issuer's chain may reach (ISSUER_TRUST_ANCHORS and the request's). */
  issuerTrustAnchors: X509Certificate[];
  /** Issuer DIDs the request trusts besides certificates (`trusted_issuers`). */
  trustedIssuerDids: string[];
  /**
   * FEDERATION_TRUST_ANCHORS (trust/federation/issuer-trust.ts): the anchor through which an
   * https issuer signing with this key is trusted, or null. Absent: no federation counts.
   */
  federationTrust?: ((issuerId: string, key: JsonWebKey) => Promise<string | null>) | undefined;
  /**
   * TRUSTED_LISTS (trust/trusted-lists/): the URL of the list whose granted issuer service the
   * issuer's x5c chain (leaf, then the certificates after it) reaches, or null. Absent: no list counts.
   */
  trustedListTrust?:
    | ((leaf: X509Certificate, intermediates: X509Certificate[], now: Date) => Promise<string | null>)
    | undefined;
  /** `require_cryptographic_holder_binding` of the DCQL credential query (default true). */
  holderBinding: boolean;
  /**
   * The request's `transaction_data` items naming this query, as received (base64url strings);
   * an SD-JWT's key binding JWT must carry their hashes.
   */
  transactionData: string[];
  /** Hash algorithms the request allowed for them (`transaction_data_hashes_alg`), default sha-256. */
  transactionDataHashAlgorithms?: string[] | undefined;
  /** How old a key binding JWT or VP may be (`iat`), seconds; OpenID4VP leaves it to the verifier. */
  maxAgeSeconds: number;
}

/** Stable check names, as results and the docs list them. */
export type CheckName =
  | 'format'
  | 'issuer_signature'
  | 'issuer_named'
  | 'issuer_trusted'
  | 'digests'
  | 'validity'
  | 'holder_binding'
  | 'audience'
  | 'nonce'
  | 'freshness'
  | 'sd_hash'
  | 'device_signature'
  | 'subject_binding'
  | 'transaction_data_hashes'
  | 'status'
  | 'dcql';

export interface NamedCheck {
  name: CheckName;
  ok: boolean;
  /** For a failed check: one sentence for the tenant's developers. */
  detail?: string;
}

export interface VerifiedPresentation {
  /** True when every check passed. */
  ok: boolean;
  checks: NamedCheck[];
  /** The issuer as far as it could be read; `trusted` only when its key chains to a trusted anchor or DID. */
  issuer: {
    id: string;
    trusted: boolean;
    certificate: IssuerCertificate | null;
    /** What made it trusted: a certificate anchor, a DID the request names, or a federation. */
    trustedBy?: 'certificate' | 'did' | 'openid_federation' | 'etsi_tl';
    /** The federation's trust anchor, or the trusted list's URL, when trusted through one. */
    trustAnchor?: string;
  } | null;
  /** The presented credential with only what was disclosed (claims decoded); null when unreadable. */
  summary: CredentialSummary | null;
  /** What DCQL matching sees of the disclosed claims; null when unreadable. */
  dcqlInput: DcqlInput | null;
  /** Where the credential's status is published, to be checked by the verifier. */
  statusReference: StatusReference | null;
}

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
  /** The issuer's X.509 chain (DER, leaf first) a stored credential carries, else null (DCQL `etsi_tl`). */
  issuerChain?(stored: unknown): Uint8Array[] | null;
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
  /** The verifier side: one presentation of a vp_token, every check named (never throws). */
  verifyPresentation(presented: unknown, expected: PresentationExpectation): Promise<VerifiedPresentation>;
}

/** The list element of a compact format (DESIGN.md, List): its summary and the stored value. */
export function compactListEntry(stored: unknown, summary: CredentialSummary) {
  const { format, id, issuer, type, validFrom, validUntil, claims } = summary;
  return { format, id, issuer, type, validFrom, validUntil, claims, credential: stored };
}
