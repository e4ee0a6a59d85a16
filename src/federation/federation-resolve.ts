import { CofferError } from '../errors.ts';
import type { StatementFetcher } from '../trust/federation/chain-collection.ts';
import {
  createFederationResolver,
  type FederationResolver,
} from '../trust/federation/federation-resolver.ts';
import type { TrustAnchor, ValidatedChain } from '../trust/federation/trust-chain.ts';
import { TrustError } from '../trust/trust-error.ts';
import {
  cofferEntityConfiguration,
  cofferKeys,
  type FederationDeps,
  issuerEntity,
  issuerEntityConfiguration,
  subordinateStatement,
  tenantEntityOf,
  verifierEntity,
  verifierEntityConfiguration,
} from './federation-service.ts';
import { STATEMENT_TTL_SECONDS, signStatement } from './federation-statements.ts';

/**
 * Coffer's resolve endpoint (OpenID Federation 1.0 §8.3): the resolved metadata and trust chain of
 * one of Coffer's own entities (Coffer, a tenant issuer or verifier), up to Coffer itself or to an
 * anchor of FEDERATION_TRUST_ANCHORS, signed by Coffer. SSRF stance: the subject must be Coffer's,
 * and the anchor Coffer or a configured one, so the only URLs fetched are Coffer's own (answered
 * here, not over the network) and its configured superiors' — never one a caller names.
 */
export interface ResolveDeps extends FederationDeps {
  vpFormatsSupported: Record<string, unknown>;
  /** FEDERATION_TRUST_ANCHORS. */
  anchors: TrustAnchor[];
  /** Fetches a statement under the outbound rules (federation-resolver.ts). */
  fetchStatement: StatementFetcher;
}

export const RESOLVE_RESPONSE_TYPE = 'resolve-response+jwt';

const WELL_KNOWN = '/.well-known/openid-federation';

/** Coffer's own statements are made here; any other URL goes to `elsewhere`. */
function localFirst(deps: ResolveDeps, elsewhere: StatementFetcher): StatementFetcher {
  return async (url) => {
    if (!url.startsWith(`${deps.publicUrl}/`)) return elsewhere(url);
    const rest = url.slice(deps.publicUrl.length);
    try {
      if (rest === WELL_KNOWN) return await cofferEntityConfiguration(deps);
      if (rest.startsWith('/federation/fetch?')) {
        const sub = new URLSearchParams(rest.slice('/federation/fetch?'.length)).get('sub') ?? undefined;
        return await subordinateStatement(deps, sub);
      }
      const entity = rest.endsWith(WELL_KNOWN)
        ? tenantEntityOf(deps.publicUrl, `${deps.publicUrl}${rest.slice(0, -WELL_KNOWN.length)}`)
        : undefined;
      if (entity?.kind === 'issuers') return await issuerEntityConfiguration(deps, entity.clientId);
      if (entity?.kind === 'verifiers') return await verifierEntityConfiguration(deps, entity.clientId);
    } catch (error) {
      if (error instanceof CofferError) throw new TrustError('fetch_failed', `${url}: ${error.message}`);
      throw error;
    }
    throw new TrustError('fetch_failed', `${url} is no statement of this deployment`);
  };
}

const nowhere: StatementFetcher = async (url) => {
  throw new TrustError('fetch_failed', `${url} is not fetched for a chain to this deployment`);
};

/** The resolver of chains to configured anchors: one, so its cache serves every caller. */
export function configuredAnchorResolver(deps: ResolveDeps): FederationResolver | undefined {
  if (deps.anchors.length === 0) return undefined;
  return createFederationResolver({
    anchors: deps.anchors,
    fetchStatement: localFirst(deps, deps.fetchStatement),
    now: deps.now,
  });
}

async function checkSubject(deps: ResolveDeps, sub: string): Promise<void> {
  if (sub === deps.publicUrl) return;
  const entity = tenantEntityOf(deps.publicUrl, sub);
  try {
    if (entity?.kind === 'issuers') return void (await issuerEntity(deps, entity.clientId));
    if (entity?.kind === 'verifiers') return void (await verifierEntity(deps, entity.clientId));
  } catch (error) {
    if (!(error instanceof CofferError && error.code === 'not_found')) throw error;
  }
  throw new CofferError(
    'invalid_subject',
    `${sub.slice(0, 200)} is not an entity of this deployment: it resolves only its own.`,
  );
}

function answerOf(error: TrustError): CofferError {
  if (error.code === 'fetch_failed')
    return new CofferError('bad_gateway', `A superior could not be reached: ${error.message}`);
  if (error.code === 'invalid_trust_anchor') return new CofferError('invalid_trust_anchor', error.message);
  return new CofferError('invalid_trust_chain', error.message);
}

async function chainOf(
  deps: ResolveDeps,
  configured: FederationResolver | undefined,
  sub: string,
  anchor: string,
): Promise<ValidatedChain> {
  try {
    if (anchor === deps.publicUrl) {
      // Coffer as the anchor of its own entities: every statement is made here, nothing fetched.
      const { jwks } = await cofferKeys(deps);
      const own = createFederationResolver({
        anchors: [{ entityId: deps.publicUrl, jwks: { keys: jwks } }],
        fetchStatement: localFirst(deps, nowhere),
        now: deps.now,
      });
      return await own.resolve(sub);
    }
    if (!configured?.anchors.some((a) => a.entityId === anchor)) {
      throw new CofferError(
        'invalid_trust_anchor',
        `${anchor.slice(0, 200)} is neither this deployment nor one of its FEDERATION_TRUST_ANCHORS.`,
      );
    }
    return await configured.resolve(sub, [anchor]);
  } catch (error) {
    if (error instanceof TrustError) throw answerOf(error);
    throw error;
  }
}

/** GET /federation/resolve: a signed resolve-response+jwt (§8.3.2). */
export async function resolveEntity(
  deps: ResolveDeps,
  configured: FederationResolver | undefined,
  query: { sub?: string | undefined; trust_anchor?: string | undefined; entity_type?: string[] | undefined },
): Promise<string> {
  const { signer } = await cofferKeys(deps);
  const missing = (['sub', 'trust_anchor'] as const).find((name) => !query[name]);
  if (missing) {
    throw new CofferError('invalid_request', `${missing} is required`, {
      details: [{ path: `/query/${missing}`, message: 'is required' }],
    });
  }
  const sub = query.sub!;
  await checkSubject(deps, sub);
  const chain = await chainOf(deps, configured, sub, query.trust_anchor!);
  const types = query.entity_type ?? [];
  const metadata = Object.fromEntries(
    Object.entries(chain.metadata).filter(([type]) => types.length === 0 || types.includes(type)),
  );
  const iat = Math.floor(deps.now().getTime() / 1000);
  return signStatement(
    {
      iss: deps.publicUrl,
      sub,
      iat,
      // Never beyond the chain it vouches for (§8.3.2).
      exp: Math.min(chain.expiresAt, iat + STATEMENT_TTL_SECONDS),
      metadata,
      trust_chain: chain.statements,
    },
    signer,
    RESOLVE_RESPONSE_TYPE,
  );
}
