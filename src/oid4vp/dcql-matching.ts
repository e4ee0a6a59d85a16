import { DcqlQuery } from 'dcql';
import type { CredentialSummary, DcqlInput, FormatId } from '../formats/credential-format.ts';

/**
 * DCQL evaluation (§6) for every credential format. The dcql package decides which credentials
 * match a Credential Query (format, `meta`, claim values, claim sets, `trusted_authorities`
 * against the authority key identifiers the formats give); this module turns its answer into
 * what a presentation needs (the JSON pointers of the selected claims within the credential's
 * claims) and what the person chooses between (candidates per query, options per credential set).
 */

/** A stored credential as the matcher sees it. */
export interface HeldCredential {
  /** The credential's identifier (the list's `id`). */
  id: string;
  format: FormatId;
  summary: CredentialSummary;
  /** What the dcql package matches (formats/credential-format.ts). */
  dcql: DcqlInput;
  /**
   * Whether a presentation signed by the account's holder key proves holder binding: the subject
   * is that key's did:key, or the credential binds that key. A credential issued to the wallet's
   * did:pkh is not bound to it.
   */
  holderBinding: boolean;
}

export interface ClaimSelection {
  /** The DCQL claims path pointer as requested. */
  path: Array<string | number | null>;
  /** The concrete JSON pointers it resolves to in this credential (several where the path has nulls). */
  pointers: string[];
  values: unknown[];
  /** mdoc `intent_to_retain` (B.2.4): the verifier means to keep this element. */
  intentToRetain: boolean;
}

export interface Candidate {
  credentialIndex: number;
  credentialId: string;
  claims: ClaimSelection[];
}

export interface QueryMatch {
  queryId: string;
  multiple: boolean;
  holderBinding: boolean;
  candidates: Candidate[];
  /**
   * Why no credential is a candidate, where the sentence says more than "none matches": the
   * person holds one that would match but for the query's `trusted_authorities`.
   */
  reasonForNone?: string;
}

export interface CredentialSetMatch {
  required: boolean;
  options: string[][];
}

export interface DcqlEvaluation {
  queries: QueryMatch[];
  credentialSets: CredentialSetMatch[] | null;
}

const escapeToken = (token: string | number) => String(token).replaceAll('~', '~0').replaceAll('/', '~1');

/** Claims path pointer processing for JSON (§7.1), yielding JSON pointers and values. */
export function resolveClaimsPath(
  root: unknown,
  path: Array<string | number | null>,
): { pointers: string[]; values: unknown[] } {
  let selection: Array<{ pointer: string; value: unknown }> = [{ pointer: '', value: root }];
  for (const component of path) {
    const next: typeof selection = [];
    for (const { pointer, value } of selection) {
      if (component === null) {
        if (!Array.isArray(value)) return { pointers: [], values: [] };
        value.forEach((item, i) => {
          next.push({ pointer: `${pointer}/${i}`, value: item });
        });
      } else if (typeof component === 'number') {
        if (!Array.isArray(value)) return { pointers: [], values: [] };
        if (component < value.length)
          next.push({ pointer: `${pointer}/${component}`, value: value[component] });
      } else {
        if (value === null || typeof value !== 'object' || Array.isArray(value))
          return { pointers: [], values: [] };
        if (Object.hasOwn(value, component)) {
          next.push({
            pointer: `${pointer}/${escapeToken(component)}`,
            value: (value as Record<string, unknown>)[component],
          });
        }
      }
    }
    selection = next;
  }
  return { pointers: selection.map((s) => s.pointer), values: selection.map((s) => s.value) };
}

type CredentialQuery = DcqlQuery.Output['credentials'][number];
type TrustedAuthority = NonNullable<CredentialQuery['trusted_authorities']>[number];

/** What the dcql package says of one credential for one Credential Query. */
interface DcqlCredentialResult {
  input_credential_index: number;
  claims?: { success?: boolean; valid_claim_sets?: Array<{ claim_set_index: number }> };
  meta?: { success?: boolean };
  trusted_authorities?: { success?: boolean };
}

type ClaimsQuery = {
  id?: string;
  path: Array<string | number | null>;
  values?: Array<string | number | boolean>;
  intent_to_retain?: boolean;
};

/**
 * With `values`, a selected value that matches none is treated as absent (§6.4.1): asked whether
 * one of several nationalities is "FR", the wallet discloses that element, not the others.
 */
function keepMatching(
  selection: { pointers: string[]; values: unknown[] },
  wanted: ClaimsQuery['values'],
): { pointers: string[]; values: unknown[] } {
  if (!wanted) return selection;
  const keep = selection.values.map((value) => wanted.some((w) => w === value));
  return {
    pointers: selection.pointers.filter((_, i) => keep[i]),
    values: selection.values.filter((_, i) => keep[i]),
  };
}

/** The claims to disclose for one credential: all listed claims, or the first satisfiable claim set. */
function selectedClaims(query: CredentialQuery, result: DcqlCredentialResult): ClaimsQuery[] {
  const claims = (query.claims ?? []) as ClaimsQuery[];
  if (!query.claim_sets) return claims;
  const validSets = (result.claims?.valid_claim_sets ?? []).map((s) => s.claim_set_index);
  if (validSets.length === 0) return [];
  const chosen = query.claim_sets[Math.min(...validSets)]!;
  return claims.filter((claim) => claim.id !== undefined && chosen.includes(claim.id));
}

/**
 * Whether the verifier can verify a presentation of the credential (its `vp_formats_supported`
 * algorithms, §B); a credential it could not verify matches nothing.
 */
export type VerifierAccepts = (
  credential: HeldCredential,
  holderBinding: boolean,
  queryId: string,
) => boolean;

/**
 * The `trusted_authorities` types this wallet evaluates (§6.1.1): `aki`, against every
 * certificate of the credential's chain, `openid_federation`, against the entities of its
 * issuer's trust chain to an anchor of FEDERATION_TRUST_ANCHORS, and `etsi_tl`, against the lists
 * of TRUSTED_LISTS (and their member lists) whose granted issuer service its chain reaches (both
 * resolved by the caller). The wallet reads only its own anchors and lists, never a URL the
 * verifier names (the privacy considerations, "Establishing Trust in the Issuers").
 */
export const EVALUATED_AUTHORITY_TYPES: ReadonlyArray<TrustedAuthority['type']> = [
  'aki',
  'openid_federation',
  'etsi_tl',
];

const UNEVALUATED_NAMES: Record<string, string> = {
  etsi_tl: 'ETSI trusted lists',
};

/** What a credential's trust is matched against, besides its own chain's key identifiers. */
export interface CredentialTrust {
  /** The entities of the issuer's federation trust chain, subject first (none: not a member). */
  federationEntities(credentialIndex: number): string[];
  /** The trusted lists (configured, or members of one) with a granted service for its issuer. */
  trustedLists?(credentialIndex: number): string[];
  /** Whether the wallet could read a list of this URL (TRUSTED_LISTS or a member of one). */
  trustedListKnown?(url: string): boolean;
}

const NO_TRUST: CredentialTrust = { federationEntities: () => [] };

/** §6.1.1 compares an `aki` value's bytes: both sides as canonical base64url. */
const canonicalAki = (value: string) => Buffer.from(value, 'base64url').toString('base64url');

/** Whether one of the query's trusted authorities vouches for the credential (entries are alternatives). */
function trustedBy(
  authorities: TrustedAuthority[],
  credential: HeldCredential,
  credentialIndex: number,
  trust: CredentialTrust,
): boolean {
  return authorities.some((authority) => {
    if (authority.type === 'aki') {
      const held = credential.dcql.authority?.values ?? [];
      return authority.values.some((value) => held.includes(canonicalAki(value)));
    }
    if (authority.type === 'openid_federation') {
      const entities = trust.federationEntities(credentialIndex);
      return authority.values.some((value) => entities.includes(value));
    }
    if (authority.type === 'etsi_tl') {
      const lists = trust.trustedLists?.(credentialIndex) ?? [];
      return authority.values.some((value) => lists.includes(value));
    }
    return false;
  });
}

/** The query as the dcql package sees it: trust is judged here, per type, not by the package. */
function withoutTrustedAuthorities(query: DcqlQuery.Output): DcqlQuery.Output {
  if (!query.credentials.some((c) => c.trusted_authorities)) return query;
  return {
    ...query,
    credentials: query.credentials.map(({ trusted_authorities: _, ...credentialQuery }) => credentialQuery),
  } as DcqlQuery.Output;
}

/**
 * Whether the wallet cannot judge an authority: a type it does not evaluate, or trusted lists
 * none of which it reads (a list URL outside TRUSTED_LISTS cannot be checked).
 */
const uncheckable = (authority: TrustedAuthority, trust: CredentialTrust) =>
  !EVALUATED_AUTHORITY_TYPES.includes(authority.type) ||
  (authority.type === 'etsi_tl' && !authority.values.some((url) => trust.trustedListKnown?.(url)));

/** The sentence for a query whose only obstacle was its `trusted_authorities`. */
function untrustedReason(credentialQuery: CredentialQuery, trust: CredentialTrust): string {
  const authorities = credentialQuery.trusted_authorities ?? [];
  const types = [...new Set(authorities.map((a) => a.type))];
  const unevaluated = [
    ...new Set(
      authorities.filter((a) => uncheckable(a, trust)).map((a) => UNEVALUATED_NAMES[a.type] ?? a.type),
    ),
  ];
  if (authorities.every((a) => uncheckable(a, trust))) {
    return `request ${credentialQuery.id} accepts only issuers of the ${unevaluated.join(' or ')} it names, which this wallet cannot check`;
  }
  // Certificates alone are "certification authorities"; a federation's anchor is an authority too.
  const noun = types.every((type) => type === 'aki') ? 'certification authorities' : 'authorities';
  return `no credential you hold was issued under the ${noun} request ${credentialQuery.id} names${
    unevaluated.length ? ` (the ${unevaluated.join(' and ')} it also names this wallet cannot check)` : ''
  }`;
}

export function evaluateDcql(
  query: DcqlQuery.Output,
  held: HeldCredential[],
  verifierAccepts: VerifierAccepts = () => true,
  trust: CredentialTrust = NO_TRUST,
): DcqlEvaluation {
  const result = DcqlQuery.query(
    withoutTrustedAuthorities(query),
    held.map((c) => ({ ...c.dcql, cryptographic_holder_binding: c.holderBinding }) as never),
  );
  const matches = result.credential_matches as Record<
    string,
    { valid_credentials?: DcqlCredentialResult[]; failed_credentials?: DcqlCredentialResult[] }
  >;
  const queries = query.credentials.map((credentialQuery): QueryMatch => {
    const holderBinding = credentialQuery.require_cryptographic_holder_binding !== false;
    const usable = (match: DcqlCredentialResult) => {
      const credential = held[match.input_credential_index]!;
      return (
        credential.format === credentialQuery.format &&
        verifierAccepts(credential, holderBinding, credentialQuery.id)
      );
    };
    const matching = (matches[credentialQuery.id]?.valid_credentials ?? []).filter(usable);
    const authorities = credentialQuery.trusted_authorities;
    const valid = authorities
      ? matching.filter((match) =>
          trustedBy(authorities, held[match.input_credential_index]!, match.input_credential_index, trust),
        )
      : matching;
    const onlyUntrusted = valid.length === 0 && matching.length > 0;
    return {
      queryId: credentialQuery.id,
      multiple: credentialQuery.multiple === true,
      holderBinding,
      ...(onlyUntrusted ? { reasonForNone: untrustedReason(credentialQuery, trust) } : {}),
      candidates: valid.map((match) => {
        const credential = held[match.input_credential_index]!;
        return {
          credentialIndex: match.input_credential_index,
          credentialId: credential.id,
          claims: selectedClaims(credentialQuery, match).map((claim) => ({
            path: claim.path,
            ...keepMatching(resolveClaimsPath(credential.summary.claims, claim.path), claim.values),
            intentToRetain: claim.intent_to_retain === true,
          })),
        };
      }),
    };
  });
  const credentialSets =
    query.credential_sets?.map((set) => ({ required: set.required !== false, options: set.options })) ?? null;
  return { queries, credentialSets };
}

/** A choice of credentials, per DCQL query id. */
export type Selections = Record<string, string | string[]>;

export type Choice =
  | { ok: true; chosen: Array<{ queryId: string; holderBinding: boolean; candidates: Candidate[] }> }
  | { ok: false; reason: string };

/**
 * What the wallet returns (§6.4.2): every query without credential sets; otherwise, for each
 * required set its first satisfiable option (or the one the person's selections name), and an
 * optional set only when the person named one of its options. Where several credentials match,
 * the person's selection decides, else the newest one.
 */
export function chooseCredentials(evaluation: DcqlEvaluation, selections: Selections = {}): Choice {
  const byId = new Map(evaluation.queries.map((q) => [q.queryId, q]));
  const satisfiable = (ids: string[]) => ids.every((id) => (byId.get(id)?.candidates.length ?? 0) > 0);
  const named = (ids: string[]) => ids.every((id) => id in selections);

  let queryIds: string[];
  if (!evaluation.credentialSets) {
    const missing = evaluation.queries.find((q) => q.candidates.length === 0);
    if (missing) {
      return {
        ok: false,
        reason: missing.reasonForNone ?? `no credential matches the request ${missing.queryId}`,
      };
    }
    queryIds = evaluation.queries.map((q) => q.queryId);
  } else {
    queryIds = [];
    for (const set of evaluation.credentialSets) {
      const usable = set.options.filter(satisfiable);
      const option = usable.find(named) ?? (set.required ? usable[0] : undefined);
      if (set.required && !option) {
        const untrusted = [...new Set(set.options.flat())].flatMap((id) => byId.get(id)?.reasonForNone ?? []);
        return {
          ok: false,
          reason: `no credentials satisfy a required set (${set.options.map((o) => o.join('+')).join(' or ')})${
            untrusted.length ? `: ${untrusted.join('; ')}` : ''
          }`,
        };
      }
      if (option) queryIds.push(...option);
    }
    queryIds = [...new Set(queryIds)];
  }

  const chosen = [];
  for (const queryId of queryIds) {
    const match = byId.get(queryId)!;
    const wanted = selections[queryId];
    let candidates: Candidate[];
    if (wanted === undefined) {
      candidates = [match.candidates[0]!];
    } else {
      const ids = Array.isArray(wanted) ? wanted : [wanted];
      if (ids.length === 0 || (!match.multiple && ids.length > 1)) {
        return {
          ok: false,
          reason: `request ${queryId} takes ${match.multiple ? 'one or more credentials' : 'one credential'}`,
        };
      }
      candidates = [];
      for (const id of new Set(ids)) {
        const candidate = match.candidates.find((c) => c.credentialId === id);
        if (!candidate) return { ok: false, reason: `credential ${id} does not match request ${queryId}` };
        candidates.push(candidate);
      }
    }
    chosen.push({ queryId, holderBinding: match.holderBinding, candidates });
  }
  return { ok: true, chosen };
}
