import type { OutboundClient } from '../../http/outbound.ts';
import { OutboundError } from '../../http/outbound.ts';
import { createLru } from '../../lru.ts';
import { TrustError } from '../trust-error.ts';
import { collectTrustChains, type StatementFetcher } from './chain-collection.ts';
import { ENTITY_STATEMENT_TYPE, isEntityIdentifier } from './entity-statement.ts';
import { type TrustAnchor, type ValidatedChain, validateTrustChain } from './trust-chain.ts';

/**
 * Resolves entities through the federations of FEDERATION_TRUST_ANCHORS: a chain from the
 * entity to a configured anchor, validated, its metadata resolved, and kept until the chain
 * expires (at most a day). Fetches go through Coffer's outbound rules.
 */
export interface FederationResolver {
  readonly anchors: TrustAnchor[];
  /** The entity's chain to one of `anchorIds` (default: any configured anchor), shortest first. */
  resolve(entityId: string, anchorIds?: string[]): Promise<ValidatedChain>;
  /** A chain given whole (a `trust_chain` parameter), validated without fetching. */
  validate(statements: string[]): Promise<ValidatedChain>;
}

const DAY = 86_400_000;
const STATEMENT_BYTES = 64 * 1024;

/** A statement fetched over HTTPS under the outbound rules; any failure is 'fetch_failed'. */
export function outboundStatementFetcher(outbound: OutboundClient): StatementFetcher {
  return async (url) => {
    let response: Awaited<ReturnType<OutboundClient>>;
    try {
      response = await outbound({
        method: 'GET',
        url,
        headers: { accept: `application/${ENTITY_STATEMENT_TYPE}` },
        maxBytes: STATEMENT_BYTES,
      });
    } catch (error) {
      if (error instanceof OutboundError)
        throw new TrustError('fetch_failed', `${url} could not be fetched: ${error.message}`);
      throw error;
    }
    if (response.status !== 200)
      throw new TrustError('fetch_failed', `${url} answered HTTP ${response.status}`);
    if (response.contentType !== `application/${ENTITY_STATEMENT_TYPE}`)
      throw new TrustError(
        'fetch_failed',
        `${url} is not an entity statement (${response.contentType || 'no type'})`,
      );
    return response.body.trim();
  };
}

export function createFederationResolver(deps: {
  anchors: TrustAnchor[];
  fetchStatement: StatementFetcher;
  now: () => Date;
}): FederationResolver {
  const cache = createLru<string, { chain: ValidatedChain; until: number }>(512);
  const keep = (key: string, chain: ValidatedChain) => {
    const until = Math.min(chain.expiresAt * 1000, deps.now().getTime() + DAY);
    cache.set(key, { chain, until });
    return chain;
  };

  const inFlight = new Map<string, Promise<ValidatedChain>>();

  async function resolveAnew(entityId: string, wanted: string[], now: Date): Promise<ValidatedChain> {
    const collected = await collectTrustChains(entityId, wanted, deps.fetchStatement, now);
    const { chains, configurations } = collected;
    let failure: TrustError | undefined = chains.length === 0 ? collected.failure : undefined;
    for (const statements of chains) {
      try {
        return await validateTrustChain(statements, deps.anchors, now, configurations);
      } catch (error) {
        if (!(error instanceof TrustError)) throw error;
        failure ??= error;
      }
    }
    throw (
      failure ??
      new TrustError('invalid_trust_anchor', `${entityId} has no trust chain to ${wanted.join(', ')}`)
    );
  }

  return {
    anchors: deps.anchors,
    async resolve(entityId, anchorIds) {
      if (!isEntityIdentifier(entityId))
        throw new TrustError(
          'invalid_trust_chain',
          `${String(entityId).slice(0, 200)} is not an entity identifier`,
        );
      const wanted = (anchorIds ?? deps.anchors.map((a) => a.entityId)).filter((id) =>
        deps.anchors.some((a) => a.entityId === id),
      );
      if (wanted.length === 0)
        throw new TrustError('invalid_trust_anchor', 'no configured trust anchor is asked for');
      const key = `${entityId} ${wanted.join(' ')}`;
      const now = deps.now();
      const cached = cache.get(key);
      if (cached && cached.until > now.getTime()) return cached.chain;
      // Requests for one entity at once (a wallet's credentials of one issuer) share one resolution.
      let running = inFlight.get(key);
      if (!running) {
        running = resolveAnew(entityId, wanted, now).then((chain) => keep(key, chain));
        inFlight.set(key, running);
        void running.finally(() => inFlight.delete(key)).catch(() => {});
      }
      return running;
    },
    async validate(statements) {
      return validateTrustChain(statements, deps.anchors, deps.now());
    },
  };
}
