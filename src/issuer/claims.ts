import { invalidField } from '../errors.ts';
import { type CredentialConfiguration, isW3cFormat, SUBJECT } from './configurations.ts';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The value at a claims path (OpenID4VCI Appendix C), or undefined; `null` steps read every element. */
function valueAt(claims: unknown, path: (string | number | null)[]): unknown {
  let current: unknown = claims;
  for (const step of path) {
    if (step === null) return Array.isArray(current) ? current : undefined;
    if (typeof step === 'number') current = Array.isArray(current) ? current[step] : undefined;
    else current = isObject(current) && Object.hasOwn(current, step) ? current[step] : undefined;
    if (current === undefined) return undefined;
  }
  return current;
}

/**
 * The claims an offer gives, one path per claim as the credential addresses it: mdoc
 * [namespace, element], W3C [credentialSubject, name], else [name]. Anything else in a W3C
 * offer's claims is refused here, with the shape it should have.
 */
function givenPaths(configuration: CredentialConfiguration, given: Json, at: string): string[][] {
  if (configuration.format === 'mso_mdoc') {
    return Object.entries(given).flatMap(([namespace, elements]) => {
      if (!isObject(elements)) throw invalidField(`${at}/${namespace}`, 'must be an object of data elements');
      return Object.keys(elements).map((element) => [namespace, element]);
    });
  }
  if (!isW3cFormat(configuration.format)) return Object.keys(given).map((name) => [name]);
  for (const name of Object.keys(given)) {
    if (name !== SUBJECT) {
      throw invalidField(
        `${at}/${name}`,
        `is not where a ${configuration.format} claim goes: give the claims as the credential addresses them, {"${SUBJECT}": {"${name}": …}}`,
      );
    }
  }
  const subject = given[SUBJECT] ?? {};
  if (!isObject(subject)) throw invalidField(`${at}/${SUBJECT}`, "must be an object of the subject's claims");
  return Object.keys(subject).map((name) => [SUBJECT, name]);
}

/**
 * Claims an offer carries for a configuration: mandatory ones present, and nothing the
 * configuration does not describe (wallets show only what metadata names). A configuration
 * without claim descriptions takes any object (of the format's shape).
 */
export function checkClaimsFor(configuration: CredentialConfiguration, given: Json, at: string): void {
  const paths = givenPaths(configuration, given, at);
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
  for (const path of paths) {
    if (!described(path))
      throw invalidField(`${at}/${path.join('/')}`, 'is not a claim of this configuration');
  }
}

/**
 * The sealed claims of one configuration of an offer, as the credential addresses them. Offers
 * made before migration 0017 (`legacy`) gave a W3C credential's subject members directly; those
 * that gave them under credentialSubject already (their tenant wrote the spec's paths) are
 * taken as they are.
 */
export function offeredClaims(configuration: CredentialConfiguration, claims: Json, legacy: boolean): Json {
  if (!legacy || !isW3cFormat(configuration.format)) return claims;
  const names = Object.keys(claims);
  if (names.length === 1 && names[0] === SUBJECT && isObject(claims[SUBJECT])) return claims;
  return { [SUBJECT]: claims };
}

/**
 * The claims of a `from_profile` configuration, read from the person's profile; a W3C
 * credential's go under credentialSubject, where its claim paths point.
 */
export function claimsFromProfile(configuration: CredentialConfiguration, profile: Json): Json {
  const claims: Json = {};
  for (const [claim, field] of Object.entries(configuration.from_profile ?? {})) {
    const value = profile[field];
    if (value !== undefined && value !== null && value !== '') claims[claim] = value;
  }
  return isW3cFormat(configuration.format) ? { [SUBJECT]: claims } : claims;
}
