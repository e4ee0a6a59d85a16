import { AssertionError } from 'node:assert';
import { after, before, describe, type TestContext, test } from 'node:test';
import { planNamed } from './plans.ts';

/**
 * Coffer's own tests of the OpenID Foundation conformance suite's plans (issue #40): one test
 * per module of a plan, named after the module, which plays the suite's part against Coffer
 * and checks each condition the module's Java code checks, by the condition's class name.
 *
 * Each checked condition is a diagnostic of its test (`condition <Name>`), and so is each place
 * where Coffer reads a clause differently from the suite (`choice <Name> | <clause> | <why>`) and
 * each module that does not apply to Coffer (`not-applicable | <clause> | <why>`); `npm run
 * conformance` turns them into docs/conformance.md (scripts/conformance.ts).
 */

export interface Conditions {
  /**
   * One condition of the suite, by its class name: `check` asserts what the condition checks
   * (throwing when it does not hold). The test stops at the first failing condition, as the
   * suite's stop-on-failure conditions do; there are no warnings here: Coffer meets them all or
   * records a choice.
   */
  check(name: string, check: () => unknown): Promise<void>;
  /**
   * A condition Coffer meets in its own way, with the spec clause that allows it: `check`
   * asserts what Coffer does instead (it still fails the test when Coffer does otherwise).
   */
  choice(name: string, clause: string, why: string, check: () => unknown): Promise<void>;
  /** A variant this run covers (a credential format, a response mode), for the report. */
  variant(description: string): void;
}

/** How a module runs: with the plan's world (servers, keys) that `setup` made. */
export type ModuleRun<World> = (c: Conditions, world: World, t: TestContext) => Promise<void>;

/** A module that does not apply to Coffer, with the clause that says so; `run` asserts why. */
export interface NotApplicable<World> {
  notApplicable: { clause: string; why: string };
  run: ModuleRun<World>;
}

export type ModuleImplementation<World> = ModuleRun<World> | NotApplicable<World>;

function conditionsOf(t: TestContext): Conditions {
  return {
    async check(name, check) {
      try {
        await check();
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new AssertionError({ message: `${name}: ${reason}` });
      }
      t.diagnostic(`condition ${name}`);
    },
    async choice(name, clause, why, check) {
      try {
        await check();
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new AssertionError({ message: `${name} (Coffer's choice, ${clause}): ${reason}` });
      }
      t.diagnostic(`choice ${name} | ${clause} | ${why}`);
    },
    variant(description) {
      t.diagnostic(`variant ${description}`);
    },
  };
}

/**
 * Registers modules of a plan: a suite named after the plan with one test per module given, in
 * the order of plans.ts. A plan's modules may be registered from several files (each with the
 * world it needs); docs/conformance.md, which `npm run conformance` writes from a run, marks a
 * module no file registered as not run, and test/docs/conformance-table.test.ts refuses that.
 */
export function conformancePlan<World>(
  planName: string,
  options: {
    /** The plan's test file (`import.meta.filename`), which the report links. */
    file: string;
    setup: () => Promise<World>;
    teardown: (world: World) => Promise<void>;
    modules: Record<string, ModuleImplementation<World>>;
  },
): void {
  const plan = planNamed(planName);
  const extra = Object.keys(options.modules).filter((name) => !plan.modules.includes(name));
  if (extra.length) throw new Error(`${planName} has no module ${extra.join(', ')}`);
  const given = plan.modules.filter((name) => options.modules[name] !== undefined);
  describe(planName, () => {
    let world: World | undefined;
    before(async () => {
      world = await options.setup();
    });
    after(async () => {
      if (world !== undefined) await options.teardown(world);
    });
    for (const name of given) {
      test(name, async (t) => {
        t.diagnostic(`file ${options.file}`);
        const implementation = options.modules[name]!;
        if (typeof implementation === 'function') return implementation(conditionsOf(t), world!, t);
        t.diagnostic(
          `not-applicable | ${implementation.notApplicable.clause} | ${implementation.notApplicable.why}`,
        );
        return implementation.run(conditionsOf(t), world!, t);
      });
    }
  });
}
