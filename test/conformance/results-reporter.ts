/**
 * A node:test reporter (scripts/conformance.ts passes it with --test-reporter): the outcome of
 * every conformance module as one JSON document — its plan, its test file, passed or failed, and
 * the conditions, choices and variants its test reported as diagnostics (harness.ts).
 */

export interface ModuleResult {
  plan: string;
  module: string;
  file: string;
  outcome: 'passed' | 'failed';
  error?: string;
  conditions: string[];
  choices: { condition: string; clause: string; why: string }[];
  notApplicable?: { clause: string; why: string };
  variants: string[];
}

interface TestEvent {
  type: string;
  data: {
    name?: string;
    nesting: number;
    file?: string;
    message?: string;
    details?: { error?: { message?: string; cause?: { message?: string } } };
  };
}

export default async function* resultsReporter(source: AsyncIterable<TestEvent>) {
  const results: ModuleResult[] = [];
  let plan = '';
  let last: ModuleResult | undefined;
  for await (const event of source) {
    const { data } = event;
    if (event.type === 'test:start' && data.nesting === 0) plan = data.name ?? '';
    if ((event.type === 'test:pass' || event.type === 'test:fail') && data.nesting === 1) {
      const error = data.details?.error;
      last = {
        plan,
        module: data.name ?? '',
        file: data.file ?? '',
        outcome: event.type === 'test:pass' ? 'passed' : 'failed',
        ...(event.type === 'test:fail'
          ? { error: (error?.cause?.message ?? error?.message ?? 'failed').slice(0, 500) }
          : {}),
        conditions: [],
        choices: [],
        variants: [],
      };
      results.push(last);
    }
    if (event.type === 'test:diagnostic' && data.nesting === 1 && last) {
      const message = data.message ?? '';
      if (message.startsWith('file ')) last.file = message.slice('file '.length);
      else if (message.startsWith('condition ')) last.conditions.push(message.slice('condition '.length));
      else if (message.startsWith('variant ')) last.variants.push(message.slice('variant '.length));
      else if (message.startsWith('choice ')) {
        const [condition = '', clause = '', why = ''] = message.slice('choice '.length).split(' | ');
        last.choices.push({ condition, clause, why });
      } else if (message.startsWith('not-applicable | ')) {
        const [, clause = '', why = ''] = message.split(' | ');
        last.notApplicable = { clause, why };
      }
    }
  }
  yield `${JSON.stringify(results, null, 2)}\n`;
}
