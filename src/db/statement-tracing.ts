import type { KyselyConfig, LogEvent } from 'kysely';
import { recordFinishedSpan, tracingActive, tracingEnabled } from '../telemetry/tracer.ts';

type SystemName = 'sqlite' | 'postgresql';

const KEYWORD =
  /^\s*(?:with\b[\s\S]*?\)\s*)?(select|insert|update|delete|pragma|begin|commit|rollback|set|create|alter|drop)\b/i;
const TABLE = /\b(?:from|into|update|join)\s+"?([a-z_][a-z0-9_]*)"?/i;

/**
 * A summary of a statement that holds no value: its operation and first table (`SELECT accounts`).
 * Statements are parameterised, but a summary is safe even for one that is not.
 */
export function statementSummary(sqlText: string): { operation: string; summary: string } {
  const operation = (KEYWORD.exec(sqlText)?.[1] ?? 'other').toUpperCase();
  const table = TABLE.exec(sqlText)?.[1];
  return { operation, summary: table ? `${operation} ${table}` : operation };
}

/** Kysely's log hook as a span per statement, when tracing is on; nothing at all otherwise. */
export function statementTracing(system: SystemName): Pick<KyselyConfig, 'log'> {
  if (!tracingEnabled()) return {};
  return {
    log(event: LogEvent) {
      // A statement is a child of what ran it; none in an unsampled request or a background sweep.
      if (!tracingActive()) return;
      const { operation, summary } = statementSummary(event.query.sql);
      recordFinishedSpan(
        summary,
        { 'db.system.name': system, 'db.operation.name': operation, 'db.query.summary': summary },
        event.queryDurationMillis,
        event.level === 'error' ? event.error : undefined,
      );
    },
  };
}
