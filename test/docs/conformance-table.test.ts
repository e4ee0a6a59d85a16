import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { PLANS } from '../conformance/plans.ts';

/**
 * docs/conformance.md is the run's table (`npm run conformance`): every module of the eight
 * plans must be in it with a test that passes (or passes as not applicable, with its clause), and
 * each test file it names must exist. A module no test registers, or a table left behind after a
 * module failed, fails here.
 */
const root = path.resolve(import.meta.dirname, '../..');
const table = readFileSync(path.join(root, 'docs', 'conformance.md'), 'utf8');

describe('docs/conformance.md: every module of every plan passes', () => {
  for (const plan of PLANS) {
    test(plan.name, () => {
      const start = table.indexOf(`## \`${plan.name}\``);
      assert.ok(start >= 0, `${plan.name} is missing from docs/conformance.md`);
      const end = table.indexOf('\n## ', start + 1);
      const section = table.slice(start, end < 0 ? undefined : end);
      assert.match(section, new RegExp(`${plan.modules.length} of ${plan.modules.length} modules pass`));
      for (const module of plan.modules) {
        const row = section.split('\n').find((line) => line.startsWith(`| \`${module}\` |`));
        assert.ok(row, `${plan.name}: ${module} has no row`);
        const [, file, result] = row.split(' | ');
        assert.match(result ?? '', /^passes/, `${plan.name}: ${module} ${result}`);
        const linked = /\]\(\.\.\/([^)]+)\)/.exec(file ?? '')?.[1];
        assert.ok(linked && existsSync(path.join(root, linked)), `${module}: its test file ${linked} exists`);
      }
    });
  }
});
