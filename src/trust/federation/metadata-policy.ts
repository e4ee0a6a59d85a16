import { ownMember, setMember } from '../../own-members.ts';
import { TrustError } from '../trust-error.ts';

/**
 * The metadata policy language of OpenID Federation 1.0 §6.1: superiors constrain the metadata
 * of the entities below them, each policy merged into those above it (§6.1.4.1) and the result
 * applied to the subject's metadata (§6.1.4.2). Plain functions over JSON; any conflict is an
 * `invalid_metadata` error, which invalidates the chain.
 */

export type ParameterPolicy = Record<string, unknown>;
/** entity type → parameter → operator → operator value. */
export type MetadataPolicy = Record<string, Record<string, ParameterPolicy>>;
export type Metadata = Record<string, Record<string, unknown>>;

/** The standard operators, in the order they apply (§6.1.3.1). */
const OPERATORS = ['value', 'add', 'default', 'one_of', 'subset_of', 'superset_of', 'essential'] as const;
type Operator = (typeof OPERATORS)[number];
const isOperator = (name: string): name is Operator => (OPERATORS as readonly string[]).includes(name);

const conflict = (path: string, why: string) => new TrustError('invalid_metadata', `${path}: ${why}`);

/** Equality of JSON values, objects compared member by member whatever their order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
const same = (a: unknown, b: unknown) => canonical(a) === canonical(b);
const contains = (list: unknown[], item: unknown) => list.some((entry) => same(entry, item));
const isSubset = (small: unknown[], big: unknown[]) => small.every((item) => contains(big, item));
const union = (a: unknown[], b: unknown[]) => [...a, ...b.filter((item) => !contains(a, item))];
const intersection = (a: unknown[], b: unknown[]) => a.filter((item) => contains(b, item));

/** What each operator's value may be (§6.1.3.1.1–7). */
function checkOperatorValue(operator: Operator, value: unknown, path: string): void {
  const fail = (what: string) => {
    throw conflict(`${path}.${operator}`, `must be ${what}`);
  };
  switch (operator) {
    case 'value':
      if (value !== null && typeof value === 'object' && !Array.isArray(value))
        fail('a string, number, boolean, array or null');
      return;
    case 'default':
      if (value === null || (typeof value === 'object' && !Array.isArray(value)))
        fail('a string, number, boolean or array');
      return;
    case 'essential':
      if (typeof value !== 'boolean') fail('a boolean');
      return;
    default:
      if (!Array.isArray(value)) fail('an array');
  }
}

/**
 * The combinations §6.1.3.1 allows, checked on a parameter's policy as written and again after
 * every merge (a merged `add` must still fit a merged `subset_of`, and so on).
 */
function checkCombination(policy: ParameterPolicy, path: string): void {
  const has = (operator: Operator) => Object.hasOwn(policy, operator);
  const value = policy['value'];
  const list = (operator: Operator) => policy[operator] as unknown[];
  const refuse = (why: string) => {
    throw conflict(path, why);
  };
  if (has('value')) {
    if (value === null) {
      for (const other of ['add', 'default', 'one_of', 'subset_of', 'superset_of'] as const)
        if (has(other)) refuse(`value null (remove) cannot go with ${other}`);
      if (policy['essential'] === true) refuse('value null (remove) cannot go with essential true');
    }
    if (has('add') && !(Array.isArray(value) && isSubset(list('add'), value)))
      refuse('add is not within value');
    if (has('one_of') && !contains(list('one_of'), value)) refuse('value is not one of one_of');
    if (has('subset_of') && !(Array.isArray(value) && isSubset(value, list('subset_of'))))
      refuse('value is not a subset of subset_of');
    if (has('superset_of') && !(Array.isArray(value) && isSubset(list('superset_of'), value)))
      refuse('value is not a superset of superset_of');
  }
  if (has('one_of') && (has('add') || has('subset_of') || has('superset_of')))
    refuse('one_of goes with value, default and essential only');
  if (has('add') && has('subset_of') && !isSubset(list('add'), list('subset_of')))
    refuse('add is not within subset_of');
  if (has('subset_of') && has('superset_of') && !isSubset(list('superset_of'), list('subset_of')))
    refuse('subset_of does not contain superset_of');
}

/** Checks one statement's `metadata_policy` and keeps the operators that take part. */
function readPolicy(raw: unknown, crit: Set<string>, where: string): MetadataPolicy {
  if (raw === undefined) return {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw conflict(where, 'is not an object');
  const policy: MetadataPolicy = {};
  for (const [type, parameters] of Object.entries(raw as Record<string, unknown>)) {
    if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters))
      throw conflict(`${where}.${type}`, 'is not an object');
    const typed: Record<string, ParameterPolicy> = {};
    setMember(policy, type, typed);
    for (const [name, operators] of Object.entries(parameters as Record<string, unknown>)) {
      const path = `${where}.${type}.${name}`;
      if (operators === null || typeof operators !== 'object' || Array.isArray(operators))
        throw conflict(path, 'is not an object of operators');
      const kept: ParameterPolicy = {};
      for (const [operator, value] of Object.entries(operators as Record<string, unknown>)) {
        if (isOperator(operator)) {
          checkOperatorValue(operator, value, path);
          setMember(kept, operator, value);
        } else if (crit.has(operator)) {
          // §6.1.3.2: an operator named critical that is not understood invalidates the chain.
          throw conflict(path, `the critical operator ${operator} is not supported`);
        }
      }
      checkCombination(kept, path);
      setMember(typed, name, kept);
    }
  }
  return policy;
}

/** Merges one operator of a subordinate's policy into the superior's (§6.1.3.1, "merge"). */
function mergeOperator(operator: Operator, upper: unknown, lower: unknown, path: string): unknown {
  switch (operator) {
    case 'value':
    case 'default':
      if (!same(upper, lower))
        throw conflict(path, `${operator} ${canonical(upper)} and ${canonical(lower)} conflict`);
      return upper;
    case 'add':
    case 'superset_of':
      return union(upper as unknown[], lower as unknown[]);
    case 'one_of': {
      const merged = intersection(upper as unknown[], lower as unknown[]);
      if (merged.length === 0) throw conflict(path, 'one_of values have nothing in common');
      return merged;
    }
    case 'subset_of':
      return intersection(upper as unknown[], lower as unknown[]);
    case 'essential':
      return upper === true || lower === true;
  }
}

/**
 * The policy of a chain (§6.1.4.1): the statements' `metadata_policy`, from the one the anchor
 * issued down to the subject's immediate superior's, merged top-down; `crit` is the union of
 * their `metadata_policy_crit`.
 */
export function resolvePolicy(policies: unknown[], crit: Set<string>): MetadataPolicy {
  const resolved: MetadataPolicy = {};
  policies.forEach((raw, index) => {
    const policy = readPolicy(raw, crit, `metadata_policy[${index}]`);
    for (const [type, parameters] of Object.entries(policy)) {
      if (!Object.hasOwn(resolved, type)) setMember(resolved, type, {});
      const into = resolved[type] as Record<string, ParameterPolicy>;
      for (const [name, operators] of Object.entries(parameters)) {
        const path = `${type}.${name}`;
        const current = ownMember(into, name) as ParameterPolicy | undefined;
        if (!current) {
          setMember(into, name, { ...operators });
          continue;
        }
        for (const [operator, value] of Object.entries(operators)) {
          current[operator] = Object.hasOwn(current, operator)
            ? mergeOperator(operator as Operator, current[operator], value, path)
            : value;
        }
        checkCombination(current, path);
      }
    }
  });
  return resolved;
}

/** `scope` is a space-separated string that the operators treat as an array of strings (§6.1.3). */
const asOperands = (name: string, value: unknown) =>
  name === 'scope' && typeof value === 'string' ? value.split(' ').filter(Boolean) : value;
const asParameter = (name: string, value: unknown, original: unknown) =>
  name === 'scope' && typeof original === 'string' && Array.isArray(value) ? value.join(' ') : value;

/** Applies a parameter's operators in their order (§6.1.4.2); answers the new value or undefined. */
function applyOperators(name: string, original: unknown, policy: ParameterPolicy, path: string): unknown {
  let value = asOperands(name, original);
  const present = () => value !== undefined;
  const needArray = (operator: string) => {
    if (!Array.isArray(value))
      throw conflict(path, `${operator} applies to an array, and the value is not one`);
    return value as unknown[];
  };
  for (const operator of OPERATORS) {
    if (!Object.hasOwn(policy, operator)) continue;
    const operand = policy[operator];
    switch (operator) {
      case 'value':
        value = operand === null ? undefined : operand;
        break;
      case 'add':
        value = union(present() ? needArray('add') : [], operand as unknown[]);
        break;
      case 'default':
        if (!present()) value = operand;
        break;
      case 'one_of':
        if (present() && !contains(operand as unknown[], value))
          throw conflict(path, `${canonical(value)} is not one of ${canonical(operand)}`);
        break;
      case 'subset_of':
        if (present()) value = intersection(needArray('subset_of'), operand as unknown[]);
        break;
      case 'superset_of':
        if (present() && !isSubset(operand as unknown[], needArray('superset_of')))
          throw conflict(path, `does not contain all of ${canonical(operand)}`);
        break;
      case 'essential':
        if (operand === true && !present()) throw conflict(path, 'is essential and absent');
        break;
    }
  }
  return value === undefined ? undefined : asParameter(name, value, original);
}

/** The subject's metadata with the resolved policy applied (§6.1.4.2 step 4). */
export function applyPolicy(metadata: Metadata, policy: MetadataPolicy): Metadata {
  const result: Metadata = structuredClone(metadata);
  for (const [type, parameters] of Object.entries(policy)) {
    const target = ownMember(result, type) as Record<string, unknown> | undefined;
    // A policy for an entity type the subject does not declare has nothing to apply to.
    if (!target) continue;
    for (const [name, operators] of Object.entries(parameters)) {
      const value = applyOperators(name, ownMember(target, name), operators, `${type}.${name}`);
      if (value === undefined) delete target[name];
      else setMember(target, name, value);
    }
  }
  return result;
}
