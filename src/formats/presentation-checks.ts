import { CofferError } from '../errors.ts';
import { DidResolutionError } from './did-resolution.ts';
import type { CheckName, NamedCheck } from './presentation-verification.ts';

/**
 * Running a presentation's checks in order, each recorded by name: a check passes unless it
 * throws, and the first failure ends the run (later checks rely on what earlier ones proved).
 * Nothing escapes: a verifier's input is a stranger's, and every failure is a check.
 */

/** A failed check's sentence, for the tenant's developers. */
export class CheckFailure extends Error {
  override readonly name = 'CheckFailure';
}

export function fail(sentence: string): never {
  throw new CheckFailure(sentence);
}

const REFUSED = 'The credential was refused: ';

/**
 * The sentence of an error: ours, the store's `rejected(…)` without its prefix (the store's rules
 * are reused as they are), a DID resolution's; anything else is a defect and says nothing more.
 */
export function detailOf(error: unknown, name: CheckName): string {
  if (
    error instanceof CofferError &&
    error.code === 'invalid_credential' &&
    error.message.startsWith(REFUSED)
  ) {
    const why = error.message.slice(REFUSED.length);
    return why.charAt(0).toUpperCase() + why.slice(1);
  }
  if (error instanceof CheckFailure) return error.message;
  if (error instanceof DidResolutionError) return `DID resolution: ${error.message}.`;
  return `The ${name} check could not be completed.`;
}

/** Runs one check; its value, or undefined when it failed (recorded). */
export async function runCheck<T>(
  checks: NamedCheck[],
  name: CheckName,
  check: () => T | Promise<T>,
): Promise<T | undefined> {
  try {
    const value = await check();
    checks.push({ name, ok: true });
    return value;
  } catch (error) {
    checks.push({ name, ok: false, detail: detailOf(error, name) });
    return undefined;
  }
}

export type Step = [CheckName, () => unknown];

/** Runs the steps in order until one fails; whether all passed. */
export async function runChecks(checks: NamedCheck[], steps: Step[]): Promise<boolean> {
  for (const [name, check] of steps) {
    await runCheck(checks, name, check);
    if (!checks.at(-1)!.ok) return false;
  }
  return true;
}
