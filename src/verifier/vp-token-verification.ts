import type { X509Certificate } from 'node:crypto';
import { DcqlPresentationResult, type DcqlQuery } from 'dcql';
import type {
  NamedCheck,
  PresentationExpectation,
  VerifiedPresentation,
} from '../formats/presentation-verification.ts';
import type { FormatRegistry } from '../formats/registry.ts';
import { parseCertificate } from '../keys/certificate-chain.ts';
import type { StatusChecker } from '../status/status-checker.ts';
import type { StoredRequest } from './request-object.ts';

/** How old a key binding JWT, VP JWT or device signature may be: five minutes (DESIGN.md). */
const MAX_AGE_SECONDS = 300;

export interface VerifiedCredentialResult {
  format: string;
  issuer: {
    id: string;
    trusted: boolean;
    /** certificate, did, etsi_tl or openid_federation: what made the issuer trusted (absent when it is not). */
    trusted_by?: string;
    /** The federation's trust anchor, or the URL of the trusted list that named the issuer's service. */
    trust_anchor?: string;
    certificate?: Record<string, unknown>;
  } | null;
  claims?: Record<string, unknown>;
  status: 'valid' | 'revoked' | 'suspended' | 'unknown' | 'unchecked';
  checks: NamedCheck[];
}

export interface VpTokenResult {
  verified: boolean;
  credentials: Record<string, VerifiedCredentialResult[]>;
  /** The first failing check, for the error sentence. */
  failure?: { query: string | null; check: string; detail: string };
}

export interface VpTokenContext {
  request: StoredRequest;
  /** The expectation shared by every presentation: audience, nonce, time, trust. */
  base: Omit<
    PresentationExpectation,
    | 'holderBinding'
    | 'transactionData'
    | 'transactionDataHashAlgorithms'
    | 'issuerTrustAnchors'
    | 'trustedIssuerDids'
    | 'federationTrust'
    | 'trustedListTrust'
    | 'maxAgeSeconds'
  >;
  issuerTrustAnchors: X509Certificate[];
  /** FEDERATION_TRUST_ANCHORS: issuers trusted through a federation (not with only trusted_issuers). */
  federationTrust?: PresentationExpectation['federationTrust'];
  /** TRUSTED_LISTS: issuers trusted through a trusted list (not with only trusted_issuers). */
  trustedListTrust?: PresentationExpectation['trustedListTrust'];
  formats: FormatRegistry;
  status: StatusChecker;
}

interface DecodedItem {
  encoded: string;
  credential_ids: string[];
  transaction_data_hashes_alg?: string[];
}
const decodeItem = (encoded: string) =>
  ({ encoded, ...JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) }) as DecodedItem;

function trustOf(
  request: StoredRequest,
  anchors: X509Certificate[],
  federationTrust: PresentationExpectation['federationTrust'],
  trustedListTrust: PresentationExpectation['trustedListTrust'],
) {
  const dids = request.trustedIssuers.filter((value) => value.startsWith('did:'));
  const certificates = request.trustedIssuers
    .filter((value) => !value.startsWith('did:'))
    .map((pem) => parseCertificate(pem));
  // A request that names its only issuers trusts neither the deployment's anchors, nor its lists, nor its federations.
  return {
    issuerTrustAnchors: [...(request.onlyTrustedIssuers ? [] : anchors), ...certificates],
    trustedIssuerDids: dids,
    ...(federationTrust && !request.onlyTrustedIssuers ? { federationTrust } : {}),
    ...(trustedListTrust && !request.onlyTrustedIssuers ? { trustedListTrust } : {}),
  };
}

/** The vp_token of OpenID4VP 1.0 §8.1: an object of query ids, each an array of presentations. */
function presentationsOf(vpToken: unknown): Record<string, unknown[]> | string {
  if (vpToken === null || typeof vpToken !== 'object' || Array.isArray(vpToken)) {
    return 'the vp_token is not a JSON object keyed by credential query id';
  }
  const entries = Object.entries(vpToken as Record<string, unknown>);
  for (const [id, value] of entries) {
    if (!Array.isArray(value) || value.length === 0)
      return `vp_token.${id.slice(0, 64)} is not a non-empty array`;
  }
  return Object.fromEntries(entries) as Record<string, unknown[]>;
}

async function statusOf(
  verified: VerifiedPresentation,
  context: VpTokenContext,
): Promise<{ status: VerifiedCredentialResult['status']; check?: NamedCheck }> {
  if (!context.request.checkStatus || !verified.statusReference || !verified.ok)
    return { status: 'unchecked' };
  const outcome = await context.status.check(verified.statusReference);
  if (outcome.state === 'valid') return { status: 'valid', check: { name: 'status', ok: true } };
  const detail =
    outcome.state === 'unknown'
      ? `the status list could not be read (${outcome.reason ?? 'no reason given'}), so the credential cannot be taken as valid`
      : `the issuer's status list marks the credential ${outcome.state}`;
  return { status: outcome.state, check: { name: 'status', ok: false, detail } };
}

/** One presentation of one query: the format's checks, then its status. */
async function verifyOne(
  queryId: string,
  query: DcqlQuery.Output['credentials'][number],
  presented: unknown,
  items: DecodedItem[],
  trust: ReturnType<typeof trustOf>,
  context: VpTokenContext,
): Promise<{ result: VerifiedCredentialResult; verified: VerifiedPresentation }> {
  const forQuery = items.filter((item) => item.credential_ids.includes(queryId));
  const algorithms = forQuery.flatMap((item) => item.transaction_data_hashes_alg ?? []);
  const expectation: PresentationExpectation = {
    ...context.base,
    ...trust,
    holderBinding: query.require_cryptographic_holder_binding !== false,
    transactionData: forQuery.map((item) => item.encoded),
    transactionDataHashAlgorithms: algorithms.length ? algorithms : undefined,
    maxAgeSeconds: MAX_AGE_SECONDS,
  };
  const verified: VerifiedPresentation = context.formats.has(query.format)
    ? await context.formats.get(query.format).verifyPresentation(presented, expectation)
    : {
        ok: false,
        checks: [{ name: 'format', ok: false, detail: `Coffer does not verify the format ${query.format}` }],
        issuer: null,
        summary: null,
        dcqlInput: null,
        statusReference: null,
      };
  const status = await statusOf(verified, context);
  const checks = status.check ? [...verified.checks, status.check] : verified.checks;
  const certificate = verified.issuer?.certificate;
  const ok = verified.ok && (status.check?.ok ?? true);
  return {
    verified: { ...verified, ok, checks },
    result: {
      format: query.format,
      issuer: verified.issuer
        ? {
            id: verified.issuer.id,
            trusted: verified.issuer.trusted,
            ...(verified.issuer.trusted && verified.issuer.trustedBy
              ? { trusted_by: verified.issuer.trustedBy }
              : {}),
            ...(verified.issuer.trusted && verified.issuer.trustAnchor
              ? { trust_anchor: verified.issuer.trustAnchor }
              : {}),
            ...(certificate ? { certificate: { ...certificate } } : {}),
          }
        : null,
      // Claims of a presentation that failed are never handed on: unverified must not read as verified.
      ...(ok && verified.summary ? { claims: verified.summary.claims } : {}),
      status: status.status,
      checks,
    },
  };
}

/** Whether what was presented satisfies the query: claims, values, claim_sets, credential_sets, multiple. */
function satisfies(
  query: DcqlQuery.Output,
  byQuery: Record<string, VerifiedPresentation[]>,
): { ok: true } | { ok: false; detail: string } {
  for (const credentialQuery of query.credentials) {
    const count = byQuery[credentialQuery.id]?.length ?? 0;
    if (count > 1 && credentialQuery.multiple !== true) {
      return {
        ok: false,
        detail: `${credentialQuery.id} was answered with ${count} presentations but asks for one`,
      };
    }
  }
  const presentation = Object.fromEntries(
    Object.entries(byQuery).map(([id, list]) => [
      id,
      list.map((verified) => ({
        ...verified.dcqlInput,
        cryptographic_holder_binding:
          verified.checks.some((c) => c.name === 'holder_binding' && c.ok) ||
          verified.checks.some((c) => c.name === 'device_signature' && c.ok),
      })),
    ]),
  );
  try {
    const result = DcqlPresentationResult.fromDcqlPresentation(presentation as never, { dcqlQuery: query });
    if (result.can_be_satisfied) return { ok: true };
    const missing = query.credentials
      .filter((c) => !(result.credential_matches as Record<string, { success?: boolean }>)[c.id]?.success)
      .map((c) => c.id);
    return {
      ok: false,
      detail: missing.length
        ? `the presented credentials do not satisfy ${missing.join(', ')} (claims, values or types differ)`
        : 'the presented credentials do not satisfy the credential sets of the query',
    };
  } catch (error) {
    return {
      ok: false,
      detail: `the presentation cannot be matched to the query: ${(error as Error).message.slice(0, 200)}`,
    };
  }
}

/**
 * Verifies a whole vp_token against its request: every presentation with its format's checks and
 * its status, then whether together they satisfy the DCQL query. Nothing here throws for what a
 * wallet sent: a bad token is a result with the failing check named.
 */
export async function verifyVpToken(vpToken: unknown, context: VpTokenContext): Promise<VpTokenResult> {
  const { dcqlQuery } = context.request;
  const presentations = presentationsOf(vpToken);
  if (typeof presentations === 'string') {
    return {
      verified: false,
      credentials: {},
      failure: { query: null, check: 'format', detail: presentations },
    };
  }
  const items = context.request.transactionData.map(decodeItem);
  // The request's own trusted issuers, read once for every presentation of the answer.
  const trust = trustOf(
    context.request,
    context.issuerTrustAnchors,
    context.federationTrust,
    context.trustedListTrust,
  );
  // Keyed by query id, which DCQL lets be any [A-Za-z0-9_-]+ (`constructor`, `__proto__`,
  // `toString`): without a prototype, such an id finds nothing inherited and is set as its own key.
  const credentials: Record<string, VerifiedCredentialResult[]> = Object.create(null);
  const byQuery: Record<string, VerifiedPresentation[]> = Object.create(null);
  let failure: VpTokenResult['failure'];
  for (const [queryId, list] of Object.entries(presentations)) {
    const query = dcqlQuery.credentials.find((credential) => credential.id === queryId);
    if (!query) {
      failure ??= {
        query: queryId.slice(0, 64),
        check: 'dcql',
        detail: `${queryId.slice(0, 64)} is no credential query of this request`,
      };
      continue;
    }
    for (const presented of list) {
      const { result, verified } = await verifyOne(queryId, query, presented, items, trust, context);
      credentials[queryId] = [...(credentials[queryId] ?? []), result];
      byQuery[queryId] = [...(byQuery[queryId] ?? []), verified];
      const failed = verified.checks.find((check) => !check.ok);
      if (failed)
        failure ??= { query: queryId, check: failed.name, detail: failed.detail ?? `${failed.name} failed` };
    }
  }
  if (!failure) {
    const satisfied = satisfies(dcqlQuery, byQuery);
    if (!satisfied.ok) failure = { query: null, check: 'dcql', detail: satisfied.detail };
  }
  return failure ? { verified: false, credentials, failure } : { verified: true, credentials };
}
