import { AssertionError } from 'node:assert';
import type { Conditions } from '../harness.ts';

/**
 * The suite calls some conditions many times in one module (every credential request checks the
 * response again); the report names each condition and each choice once. Later calls still
 * assert, and fail the test the same way.
 */
export function reportedOnce(c: Conditions): Conditions {
  const seen = new Set<string>();
  const again = async (label: string, check: () => unknown) => {
    try {
      await check();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new AssertionError({ message: `${label}: ${reason}` });
    }
  };
  return {
    async check(name, check) {
      if (seen.has(`condition ${name}`)) return again(name, check);
      seen.add(`condition ${name}`);
      return c.check(name, check);
    },
    async choice(name, clause, why, check) {
      if (seen.has(`choice ${name}`)) return again(`${name} (Coffer's choice, ${clause})`, check);
      seen.add(`choice ${name}`);
      return c.choice(name, clause, why, check);
    },
    variant: (description) => {
      if (seen.has(`variant ${description}`)) return;
      seen.add(`variant ${description}`);
      c.variant(description);
    },
  };
}
