import type { Attributes } from '@opentelemetry/api';
import type {
  AbortableOperationOptions,
  CompiledQuery,
  DatabaseConnection,
  Driver,
  Dialect as KyselyDialect,
} from 'kysely';
import { createLru } from '../lru.ts';
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

/**
 * Times a connection's statements as spans, children of what ran them. A statement under an
 * unsampled request or a background sweep goes straight to the driver: no clock read, no promise
 * of its own. (Kysely's `log` option timed and awaited a logger around every statement, sampled or
 * not: docs/benchmarks.md, "Fifth run".)
 */
function traceStatements(connection: DatabaseConnection, spanOf: (sqlText: string) => StatementSpan): void {
  const execute = connection.executeQuery.bind(connection);
  connection.executeQuery = <R>(query: CompiledQuery, options?: AbortableOperationOptions) => {
    if (!tracingActive()) return execute<R>(query, options);
    const started = performance.now();
    const record = (error?: unknown) => {
      const { summary, attributes } = spanOf(query.sql);
      recordFinishedSpan(summary, attributes, performance.now() - started, error);
    };
    return execute<R>(query, options).then(
      (result) => {
        record();
        return result;
      },
      (error: unknown) => {
        record(error);
        throw error;
      },
    );
  };
}

interface StatementSpan {
  summary: string;
  attributes: Attributes;
}

/**
 * A statement's span name and attributes by its text. Coffer's statements are a few hundred
 * texts (values are parameters), so each is summarised once rather than at every run.
 */
function statementSpans(system: SystemName): (sqlText: string) => StatementSpan {
  const known = createLru<string, StatementSpan>(1024);
  return (sqlText) => {
    let span = known.get(sqlText);
    if (span === undefined) {
      const { operation, summary } = statementSummary(sqlText);
      const attributes = {
        'db.system.name': system,
        'db.operation.name': operation,
        'db.query.summary': summary,
      };
      span = { summary, attributes };
      known.set(sqlText, span);
    }
    return span;
  };
}

/** The driver as it is, its connections' statements traced (each connection wrapped once). */
function tracedDriver(driver: Driver, system: SystemName): Driver {
  const traced = new WeakSet<DatabaseConnection>();
  const spanOf = statementSpans(system);
  const wrapper: Driver = {
    init: (options) => driver.init(options),
    acquireConnection: async (options) => {
      const connection = await driver.acquireConnection(options);
      if (!traced.has(connection)) {
        traceStatements(connection, spanOf);
        traced.add(connection);
      }
      return connection;
    },
    beginTransaction: (connection, settings) => driver.beginTransaction(connection, settings),
    commitTransaction: (connection) => driver.commitTransaction(connection),
    rollbackTransaction: (connection) => driver.rollbackTransaction(connection),
    releaseConnection: (connection, options) => driver.releaseConnection(connection, options),
    destroy: (options) => driver.destroy(options),
  };
  if (driver.savepoint) wrapper.savepoint = driver.savepoint.bind(driver);
  if (driver.rollbackToSavepoint) wrapper.rollbackToSavepoint = driver.rollbackToSavepoint.bind(driver);
  if (driver.releaseSavepoint) wrapper.releaseSavepoint = driver.releaseSavepoint.bind(driver);
  return wrapper;
}

/** The dialect with a span per statement when tracing is on; the dialect itself otherwise. */
export function withStatementTracing(dialect: KyselyDialect, system: SystemName): KyselyDialect {
  if (!tracingEnabled()) return dialect;
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => tracedDriver(dialect.createDriver(), system),
  };
}
