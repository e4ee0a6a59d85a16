import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { SpanStatusCode } from '@opentelemetry/api';
import { sql } from 'kysely';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import { inSpan } from '../../src/telemetry/tracer.ts';
import { recordSpansInMemory, underUnsampledParent } from '../helpers/in-memory-spans.ts';

/**
 * A statement is a span under what ran it, named by operation and table, and nothing at all
 * under an unsampled request: there the driver is called as if tracing were off.
 */
const tracing = recordSpansInMemory();
const { exporter } = tracing;

let dataDir: string;
let handle: DatabaseHandle;
before(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'coffer-statement-spans-'));
  handle = openDatabase({ databaseUrl: undefined, dataDir });
  await sql`create table notes (id integer primary key, body text)`.execute(handle.db);
});
after(async () => {
  await handle.close();
  await tracing.stop();
  await rm(dataDir, { recursive: true, force: true });
});

test('a statement run in a sampled span is its child, with no value in its name or attributes', async () => {
  exporter.reset();
  await inSpan('POST /notes', {}, () =>
    handle.db
      .insertInto('notes' as never)
      .values({ body: 'a private note' } as never)
      .execute(),
  );
  const spans = exporter.getFinishedSpans();
  const parent = spans.find((span) => span.name === 'POST /notes')!;
  const statement = spans.find((span) => span.name === 'INSERT notes')!;
  assert.ok(statement, `spans: ${spans.map((span) => span.name).join(', ')}`);
  assert.equal(statement.parentSpanContext?.spanId, parent.spanContext().spanId);
  assert.deepEqual(statement.attributes, {
    'db.system.name': 'sqlite',
    'db.operation.name': 'INSERT',
    'db.query.summary': 'INSERT notes',
  });
  const exported = JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events]));
  assert.ok(!exported.includes('a private note'));
});

test('a failing statement is a span marked as an error, and the error still reaches the caller', async () => {
  exporter.reset();
  await assert.rejects(
    inSpan('GET /nothing', {}, () => sql`select * from missing_table`.execute(handle.db)),
    /no such table/,
  );
  const statement = exporter.getFinishedSpans().find((span) => span.name === 'SELECT missing_table')!;
  assert.equal(statement.status.code, SpanStatusCode.ERROR);
  assert.equal(statement.attributes['error.type'], 'Error');
});

test('under an unsampled request, or outside any request, a statement makes no span', async () => {
  exporter.reset();
  const rows = await underUnsampledParent('a1b2c3d4e5f60718293a4b5c6d7e8f90', '0123456789abcdef', () =>
    handle.db
      .selectFrom('notes' as never)
      .selectAll()
      .execute(),
  );
  assert.equal(rows.length, 1);
  await sql`select count(*) from notes`.execute(handle.db);
  assert.deepEqual(exporter.getFinishedSpans(), []);
});
