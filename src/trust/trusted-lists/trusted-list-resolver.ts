import type { X509Certificate } from 'node:crypto';
import type { OutboundClient } from '../../http/outbound.ts';
import { OutboundError } from '../../http/outbound.ts';
import { anchorOf } from '../../keys/certificate-chain.ts';
import { TrustError } from '../trust-error.ts';
import { readEtsiTrustedList } from './etsi-119612.ts';
import { readListOfTrustedEntities } from './lote-119602.ts';
import {
  type GrantedService,
  type ReadList,
  roleOf,
  type ServiceRole,
  type TrustedListKind,
  type TrustedListSource,
} from './trusted-list.ts';

/**
 * Reads the lists of TRUSTED_LISTS and the member lists their pointers name (a LoTL's
 * OtherTSLPointers, each member's signature checked against the certificates its verified pointer
 * names), keeps each verified list until its NextUpdate (at most a day), and answers which granted
 * issuer service, if any, vouches for a certificate chain.
 */
export type ListFetcher = (url: string) => Promise<string>;

export interface IssuerServices {
  services: GrantedService[];
  /** The configured list and every member list that could be read under it. */
  lists: string[];
}

export interface TrustedListResolver {
  readonly sources: TrustedListSource[];
  /** The configured list `url` (and its members): throws TrustError when the list itself cannot be used. */
  issuerServices(url: string): Promise<IssuerServices>;
  /** The granted services of one role in every configured list that can be had now. */
  servicesFor(role: ServiceRole): Promise<GrantedService[]>;
}

const DAY = 86_400_000;
/** A trusted list is large (the EU's member lists run to megabytes); a bound nonetheless. */
const LIST_BYTES = 16 * 1024 * 1024;
/** A LoTL points to lists, which may point to others; no further, and no more lists than this. */
const MAX_DEPTH = 2;
const MAX_LISTS = 64;
/**
 * A list that could not be used is not asked for again before this: a list server that is down
 * would otherwise be fetched (and wait out its timeout) on every verification and consent.
 */
export const RETRY_FAILED_LIST_MS = 60_000;

/** A list fetched over HTTPS under the outbound rules; any failure is 'fetch_failed'. */
export function outboundListFetcher(outbound: OutboundClient): ListFetcher {
  return async (url) => {
    let response: Awaited<ReturnType<OutboundClient>>;
    try {
      response = await outbound({ method: 'GET', url, maxBytes: LIST_BYTES });
    } catch (error) {
      if (error instanceof OutboundError)
        throw new TrustError('fetch_failed', `${url} could not be fetched: ${error.message}`);
      throw error;
    }
    if (response.status !== 200)
      throw new TrustError('fetch_failed', `${url} answered HTTP ${response.status}`);
    return response.body;
  };
}

const readers: Record<TrustedListKind, typeof readEtsiTrustedList> = {
  'etsi-119612': readEtsiTrustedList,
  'lote-119602': readListOfTrustedEntities,
};

/** The granted issuer service whose digital identity the chain (leaf first) reaches, within validity. */
export function serviceVouchingFor(
  services: GrantedService[],
  leaf: X509Certificate,
  intermediates: X509Certificate[],
  now: Date,
): GrantedService | undefined {
  const anchors = services.flatMap((s) => s.certificates);
  const anchor = anchorOf(leaf, intermediates, anchors, now);
  return anchor && services.find((s) => s.certificates.includes(anchor));
}

export function createTrustedListResolver(deps: {
  sources: TrustedListSource[];
  fetchList: ListFetcher;
  now: () => Date;
  /** A list that was fetched but is not used (signature, expiry, schema): logged, counted. */
  onRejected?: (url: string, error: TrustError) => void;
}): TrustedListResolver {
  const cache = new Map<string, { list: ReadList; until: number }>();
  const inFlight = new Map<string, Promise<ReadList>>();
  const failed = new Map<string, { error: TrustError; until: number }>();

  async function readAnew(url: string, kind: TrustedListKind, signers: X509Certificate[]): Promise<ReadList> {
    let list: ReadList;
    try {
      const body = await deps.fetchList(url);
      list = await readers[kind](body, url, signers);
      const now = deps.now();
      if (list.nextUpdate.getTime() <= now.getTime())
        throw new TrustError(
          'list_expired',
          `${url} expired at ${list.nextUpdate.toISOString()} (NextUpdate)`,
        );
      cache.set(key(url, signers), { list, until: Math.min(list.nextUpdate.getTime(), now.getTime() + DAY) });
      return list;
    } catch (error) {
      if (error instanceof TrustError) {
        failed.set(key(url, signers), { error, until: deps.now().getTime() + RETRY_FAILED_LIST_MS });
        if (error.code !== 'fetch_failed') deps.onRejected?.(url, error);
      }
      throw error;
    }
  }

  // The same URL under other signers (a pointer naming other certificates) is another list.
  const key = (url: string, signers: X509Certificate[]) =>
    `${url} ${signers.map((s) => s.fingerprint256).join(',')}`;

  function read(url: string, kind: TrustedListKind, signers: X509Certificate[]): Promise<ReadList> {
    const k = key(url, signers);
    const cached = cache.get(k);
    if (cached && cached.until > deps.now().getTime()) return Promise.resolve(cached.list);
    const failure = failed.get(k);
    if (failure && failure.until > deps.now().getTime()) return Promise.reject(failure.error);
    // Verifications and wallets asking at once share one fetch and one signature check.
    let running = inFlight.get(k);
    if (!running) {
      running = readAnew(url, kind, signers);
      inFlight.set(k, running);
      void running.finally(() => inFlight.delete(k)).catch(() => {});
    }
    return running;
  }

  async function collect(source: TrustedListSource): Promise<IssuerServices> {
    const services: GrantedService[] = [];
    const lists: string[] = [];
    const seen = new Set<string>();
    const visit = async (url: string, signers: X509Certificate[], depth: number, top: boolean) => {
      if (seen.has(url) || seen.size >= MAX_LISTS) return;
      seen.add(url);
      let list: ReadList;
      try {
        list = await read(url, source.kind, signers);
      } catch (error) {
        // The configured list failing is the answer; a member failing leaves the others usable.
        if (top || !(error instanceof TrustError)) throw error;
        return;
      }
      lists.push(url);
      for (const service of list.services) {
        const role = roleOf(service);
        if (!role) continue;
        services.push({
          role,
          listUrl: url,
          type: service.type,
          name: service.name,
          certificates: service.certificates,
        });
      }
      if (depth < MAX_DEPTH)
        await Promise.all(list.pointers.map((p) => visit(p.url, p.signers, depth + 1, false)));
    };
    await visit(source.url, source.signers, 0, true);
    return { services, lists };
  }

  return {
    sources: deps.sources,
    async issuerServices(url) {
      const source = deps.sources.find((s) => s.url === url);
      if (!source) throw new TrustError('invalid_trust_anchor', `${url} is not a configured trusted list`);
      const { services, lists } = await collect(source);
      return { services: services.filter((s) => s.role === 'issuer'), lists };
    },
    async servicesFor(role) {
      const all = await Promise.all(
        deps.sources.map((source) =>
          collect(source).then(
            ({ services }) => services.filter((s) => s.role === role),
            (error: unknown) => {
              // A list that cannot be had now vouches for nobody; the others still count.
              if (error instanceof TrustError) return [];
              throw error;
            },
          ),
        ),
      );
      return all.flat();
    },
  };
}

/**
 * The CA certificates that granted services of `role` (wallet providers, relying-party access)
 * vouch with, from every configured list that can be had now: anchors beside the PEM files'.
 */
export function listedAnchors(resolver: TrustedListResolver, role: Exclude<ServiceRole, 'issuer'>) {
  return async (): Promise<X509Certificate[]> =>
    (await resolver.servicesFor(role)).flatMap((service) => service.certificates);
}

/**
 * Whether a credential issuer's chain is vouched for by a granted issuer service of any configured
 * list: the URL of the list that named the service, or null (none, or no list usable now).
 */
export function trustedListIssuerTrust(resolver: TrustedListResolver) {
  return async (
    leaf: X509Certificate,
    intermediates: X509Certificate[],
    now: Date,
  ): Promise<string | null> => {
    for (const source of resolver.sources) {
      try {
        const { services } = await resolver.issuerServices(source.url);
        const service = serviceVouchingFor(services, leaf, intermediates, now);
        if (service) return service.listUrl;
      } catch (error) {
        if (!(error instanceof TrustError)) throw error;
      }
    }
    return null;
  };
}
