import type { Kysely } from 'kysely';
import { exportAuditEvents } from '../audit/audit-export.ts';
import { sealAuditEvents } from '../audit/audit-sealer.ts';
import { verifyAuditChain } from '../audit/audit-verify.ts';
import type { Dialect } from '../db/dialect.ts';
import type { Database } from '../db/schema.ts';
import { parse, UsageError } from './command-line.ts';

export interface AuditCommandDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The master keys (current first): the checkpoint is signed with a key derived from one. */
  masterKeys: () => Promise<Uint8Array[]>;
  write: (text: string) => void;
}

/**
 * `coffer audit verify`: seals what is committed, walks the chain and reports the first break
 * (exit status 1). `coffer audit export --since ISO`: the events since then as JSON lines.
 * Returns the exit status.
 */
export async function runAuditCommand(deps: AuditCommandDeps, argv: string[]): Promise<number> {
  const [, action, ...rest] = argv;
  if (action === 'verify') {
    const { values, positionals } = parse(rest, {});
    if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
    await sealAuditEvents(deps.db, deps.dialect);
    const report = await verifyAuditChain(deps.db, await deps.masterKeys());
    if (values.json) deps.write(JSON.stringify(report));
    else if (report.ok)
      deps.write(
        report.to < report.from
          ? 'The audit trail is empty: nothing to verify.'
          : `The audit chain is intact from position ${report.from} to ${report.to} (${report.sealed} events).`,
      );
    else deps.write(`The audit chain is broken at position ${report.position}: ${report.problem}.`);
    return report.ok ? 0 : 1;
  }
  if (action === 'export') {
    const { values, positionals } = parse(rest, { since: { type: 'string' } });
    if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
    const since = values.since as string | undefined;
    if (since === undefined) throw new UsageError('--since is required (an ISO 8601 time)');
    const time = new Date(since);
    if (!/^\d{4}-\d{2}-\d{2}/.test(since) || Number.isNaN(time.getTime()))
      throw new UsageError('--since must be an ISO 8601 time, e.g. 2026-01-31T00:00:00Z');
    await exportAuditEvents(deps.db, time, (record) => deps.write(JSON.stringify(record)));
    return 0;
  }
  throw new UsageError(
    action ? `unknown command "audit ${[action, ...rest].join(' ')}"` : 'audit needs verify or export',
  );
}
