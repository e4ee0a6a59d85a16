import { TrustError } from '../trust-error.ts';
import {
  type EntityStatement,
  entityConfigurationUrl,
  readEntityStatement,
  verifyEntityStatement,
} from './entity-statement.ts';
import { MAX_HOPS } from './trust-chain.ts';

/**
 * Collecting trust chains bottom-up (OpenID Federation 1.0 §10.1): the subject's Entity
 * Configuration, then its authority hints' upward until a configured anchor, then each superior's
 * fetch endpoint for its statement about the entity below. Bounded in depth (MAX_HOPS), in hints
 * followed per entity and in fetches per collection (§18.1), and never around a loop.
 */

/** Fetches one statement (a compact JWT); throws TrustError 'fetch_failed' when it cannot. */
export type StatementFetcher = (url: string) => Promise<string>;

export interface CollectedChains {
  /** Candidate chains, each subject first and anchor last, shortest first; not yet validated. */
  chains: string[][];
  /** The Entity Configurations read on the way, by entity id. */
  configurations: Map<string, EntityStatement>;
  /** Why a branch was left (a fetch that failed, a bad statement): the answer when none is left. */
  failure?: TrustError;
}

const HINTS_FOLLOWED = 5;
const MAX_FETCHES = 40;

export async function collectTrustChains(
  subject: string,
  anchorIds: string[],
  fetchStatement: StatementFetcher,
  now: Date,
): Promise<CollectedChains> {
  const configurations = new Map<string, EntityStatement>();
  let failure: TrustError | undefined;
  const remember = (error: unknown) => {
    if (error instanceof TrustError) failure ??= error;
    else throw error;
  };
  let fetches = 0;
  const fetchCounted = (url: string) => {
    if (++fetches > MAX_FETCHES)
      throw new TrustError('invalid_trust_chain', 'resolving the trust chain took too many fetches');
    return fetchStatement(url);
  };

  async function configurationOf(id: string): Promise<EntityStatement> {
    const known = configurations.get(id);
    if (known) return known;
    const statement = readEntityStatement(await fetchCounted(entityConfigurationUrl(id)), now);
    if (!statement.configuration || statement.sub !== id)
      throw new TrustError('invalid_trust_chain', `${id} published a configuration of another entity`);
    await verifyEntityStatement(statement, statement.jwks, id);
    configurations.set(id, statement);
    return statement;
  }

  /** The paths of entity ids from `id` up to an anchor. */
  async function climb(id: string, below: string[]): Promise<string[][]> {
    if (anchorIds.includes(id)) return [[id]];
    if (below.length > MAX_HOPS) return [];
    const hints = ((await configurationOf(id)).claims['authority_hints'] as string[] | undefined) ?? [];
    const paths: string[][] = [];
    for (const hint of hints.filter((h) => !below.includes(h) && h !== id).slice(0, HINTS_FOLLOWED)) {
      try {
        for (const path of await climb(hint, [...below, id])) paths.push([id, ...path]);
      } catch (error) {
        // A branch that fails leaves the others; a fetch budget spent stops them all.
        if (fetches > MAX_FETCHES) throw error;
        remember(error);
      }
    }
    return paths;
  }

  const subjectConfiguration = await configurationOf(subject);
  const paths = (await climb(subject, [])).sort((a, b) => a.length - b.length);
  const chains: string[][] = [];
  for (const path of paths) {
    try {
      const statements = [subjectConfiguration.jwt];
      for (let index = 1; index < path.length; index++) {
        const superior = await configurationOf(path[index]!);
        const endpoint = (
          superior.claims['metadata'] as Record<string, Record<string, unknown>> | undefined
        )?.['federation_entity']?.['federation_fetch_endpoint'];
        if (typeof endpoint !== 'string' || !endpoint.startsWith('https://'))
          throw new TrustError('invalid_trust_chain', `${superior.sub} publishes no fetch endpoint`);
        const url = new URL(endpoint);
        url.searchParams.set('sub', path[index - 1]!);
        statements.push(await fetchCounted(url.href));
      }
      if (path.length > 1) statements.push((await configurationOf(path.at(-1)!)).jwt);
      chains.push(statements);
    } catch (error) {
      if (fetches > MAX_FETCHES) throw error;
      remember(error);
    }
  }
  return { chains, configurations, ...(failure ? { failure } : {}) };
}
