import { TrustError } from '../trust-error.ts';
import {
  type EntityStatement,
  type JwkSet,
  readEntityStatement,
  verifyEntityStatement,
} from './entity-statement.ts';
import { applyPolicy, type Metadata, resolvePolicy } from './metadata-policy.ts';

/**
 * A trust chain (OpenID Federation 1.0 §4, validated as §10.2 says): the subject's Entity
 * Configuration, the Subordinate Statement of each superior about the entity below it, and the
 * anchor's Entity Configuration. Each statement must verify with the keys the statement above it
 * lists for its issuer — the anchor's with the keys configured for it, never the ones it sends —
 * so no entity can speak for one its superior did not vouch for.
 */

export interface TrustAnchor {
  entityId: string;
  jwks: JwkSet;
}

export interface ValidatedChain {
  subject: string;
  anchor: string;
  /** Every entity on the chain, subject first, anchor last. */
  entities: string[];
  /** The subject's metadata, the superior's metadata and every policy applied (§6.1.4.2). */
  metadata: Metadata;
  /** When the chain stops being valid: the earliest `exp` of its statements (§10.4), seconds. */
  expiresAt: number;
  /** The statements as received, subject first: what a `trust_chain` parameter carries. */
  statements: string[];
}

/** At most this many Subordinate Statements between subject and anchor (issue #41: five hops). */
export const MAX_HOPS = 5;

const invalid = (why: string) => new TrustError('invalid_trust_chain', why);

/** A naming constraint (§6.2.2, RFC 5280 §4.2.1.10 for URIs): `.example.com` is below, `example.com` is that host. */
function hostMatches(host: string, constraint: string): boolean {
  const name = constraint.toLowerCase();
  return name.startsWith('.') ? host.endsWith(name) && host.length > name.length : host === name;
}

function checkNamingConstraints(constraint: unknown, hosts: string[], issuer: string): void {
  if (constraint === undefined) return;
  const { permitted, excluded } = constraint as { permitted?: unknown; excluded?: unknown };
  const names = (list: unknown) =>
    Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string') : [];
  for (const host of hosts) {
    if (names(excluded).some((name) => hostMatches(host, name)))
      throw invalid(`${issuer} excludes the host ${host} (naming_constraints)`);
    if (permitted !== undefined && !names(permitted).some((name) => hostMatches(host, name)))
      throw invalid(`${issuer} does not permit the host ${host} (naming_constraints)`);
  }
}

/**
 * Validates a chain of statements (compact JWTs, subject first, anchor's Entity Configuration
 * last) against the configured anchors. `configurations` are Entity Configurations of the
 * intermediates fetched on the way up, when there are some: a superior must be one of the
 * authority hints of the entity it speaks of.
 */
export async function validateTrustChain(
  jwts: string[],
  anchors: TrustAnchor[],
  now: Date,
  configurations: Map<string, EntityStatement> = new Map(),
): Promise<ValidatedChain> {
  if (jwts.length === 0) throw invalid('the trust chain is empty');
  if (jwts.length > MAX_HOPS + 2) throw invalid(`the trust chain is longer than ${MAX_HOPS} hops`);
  const chain = jwts.map((jwt) => readEntityStatement(jwt, now));
  const subject = chain[0]!;
  const top = chain.at(-1)!;
  if (!subject.configuration) throw invalid('a trust chain starts with the subject’s Entity Configuration');
  if (!top.configuration) throw invalid('a trust chain ends with the anchor’s Entity Configuration');
  const anchor = anchors.find((a) => a.entityId === top.iss);
  if (!anchor) throw new TrustError('invalid_trust_anchor', `${top.iss} is not a configured trust anchor`);
  for (const [index, statement] of chain.entries()) {
    const inner = index > 0 && index < chain.length - 1;
    if (inner && statement.configuration)
      throw invalid(`the statement at position ${index} is not a Subordinate Statement`);
    const above = chain[index + 1];
    if (above && statement.iss !== above.sub)
      throw invalid(`the statement about ${above.sub} does not follow ${statement.iss}`);
  }
  // Keys: each statement by the keys the next one up lists for its issuer; the top by the anchor's.
  await verifyEntityStatement(subject, subject.jwks, subject.sub);
  for (const [index, statement] of chain.entries()) {
    const above = chain[index + 1];
    if (above) await verifyEntityStatement(statement, above.jwks, above.iss);
    else await verifyEntityStatement(statement, anchor.jwks, `the configured anchor ${anchor.entityId}`);
  }
  // A superior speaks for an entity that names it (§10.2): the subject's hints always, others' when fetched.
  for (const statement of chain.slice(1, -1)) {
    const hints = (statement.sub === subject.sub ? subject : configurations.get(statement.sub))?.claims[
      'authority_hints'
    ];
    if (hints !== undefined && !(hints as string[]).includes(statement.iss))
      throw invalid(`${statement.sub} does not name ${statement.iss} among its authority_hints`);
  }

  const subordinates = chain.slice(1, -1);
  // The last Subordinate Statement is the anchor's, so its issuer closes the list.
  const entities = [subject.sub, ...subordinates.map((s) => s.iss)];
  const allowedTypes: string[][] = [];
  subordinates.forEach((statement, index) => {
    const constraints = (statement.claims['constraints'] ?? {}) as Record<string, unknown>;
    const maxPath = constraints['max_path_length'];
    // Statement k (1-based) is issued k levels above the subject: k − 1 intermediates between.
    if (typeof maxPath === 'number' && index > maxPath)
      throw invalid(`${statement.iss} allows ${maxPath} intermediates below it (max_path_length)`);
    const below = [subject.sub, ...subordinates.slice(0, index + 1).map((s) => s.sub)];
    checkNamingConstraints(
      constraints['naming_constraints'],
      [...new Set(below.map((id) => new URL(id).hostname))],
      statement.iss,
    );
    if (Array.isArray(constraints['allowed_entity_types']))
      allowedTypes.push(constraints['allowed_entity_types'] as string[]);
  });

  // Resolved metadata (§6.1.4.2): the subject's, the immediate superior's metadata over it, the
  // entity types allowed kept, then the policies merged from the anchor down.
  const metadata = structuredClone((subject.claims['metadata'] ?? {}) as Metadata);
  const superior = subordinates[0]?.claims['metadata'] as Metadata | undefined;
  for (const [type, values] of Object.entries(superior ?? {})) {
    if (metadata[type]) Object.assign(metadata[type], values);
  }
  for (const allowed of allowedTypes) {
    for (const type of Object.keys(metadata)) {
      if (type !== 'federation_entity' && !allowed.includes(type)) delete metadata[type];
    }
  }
  const crit = new Set(
    subordinates.flatMap((s) => (s.claims['metadata_policy_crit'] as string[] | undefined) ?? []),
  );
  const policy = resolvePolicy(
    [...subordinates].reverse().map((s) => s.claims['metadata_policy']),
    crit,
  );
  return {
    subject: subject.sub,
    anchor: anchor.entityId,
    entities,
    metadata: applyPolicy(metadata, policy),
    expiresAt: Math.min(...chain.map((s) => s.exp)),
    statements: jwts,
  };
}
