import { invalidField } from '../errors.ts';
import type { CredentialConfiguration } from './configurations.ts';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The value at a claims path (OpenID4VCI Appendix C), or undefined; `null` steps read every element. */
function valueAt(claims: unknown, path: (string | number | null)[]): unknown {
  let current: unknown = claims;
  for (const step of path) {
    if (step === null) return Array.isArray(current) ? current : undefined;
    if (typeof step === 'number') current = Array.isArray(current) ? current[step] : undefined;
    else current = isObject(current) ? current[step] : undefined;
    if (current === undefined) return undefined;
  }
  return current;
}

/**
 * Claims an offer carries for a configuration: mandatory ones present, and nothing the
 * configuration does not describe (wallets show only what metadata names). A configuration
 * without claim descriptions takes any object.
 */
export function checkClaimsFor(configuration: CredentialConfiguration, given: Json, at: string): void {
  if (configuration.format === 'mso_mdoc') {
    for (const [namespace, elements] of Object.entries(given)) {
      if (!isObject(elements)) throw invalidField(`${at}/${namespace}`, 'must be an object of data elements');
    }
  }
  configuration.claims.forEach((claim) => {
    if (claim.mandatory && valueAt(given, claim.path) === undefined) {
      throw invalidField(`${at}/${claim.path.join('/')}`, 'is mandatory in this configuration');
    }
  });
  if (configuration.claims.length === 0) return;
  const described = (path: string[]) =>
    configuration.claims.some((claim) =>
      path.every((step, i) => claim.path[i] === undefined || claim.path[i] === step),
    );
  const topLevel =
    configuration.format === 'mso_mdoc'
      ? Object.entries(given).flatMap(([ns, elements]) => Object.keys(elements as Json).map((el) => [ns, el]))
      : Object.keys(given).map((name) => [name]);
  for (const path of topLevel) {
    if (!described(path))
      throw invalidField(`${at}/${path.join('/')}`, 'is not a claim of this configuration');
  }
}

/** The claims of a `from_profile` configuration, read from the person's profile. */
export function claimsFromProfile(configuration: CredentialConfiguration, profile: Json): Json {
  const claims: Json = {};
  for (const [claim, field] of Object.entries(configuration.from_profile ?? {})) {
    const value = profile[field];
    if (value !== undefined && value !== null && value !== '') claims[claim] = value;
  }
  return claims;
}
