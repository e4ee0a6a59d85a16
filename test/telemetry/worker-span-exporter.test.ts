import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { after, describe, test } from 'node:test';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { TracesProtocol } from '../../src/telemetry/tracing.ts';
import { WorkerSpanExporter } from '../../src/telemetry/worker-span-exporter.ts';
import { startOtlpReceiver } from './otlp-receiver.ts';

/**
 * The span exporter Coffer runs: OpenTelemetry's serializer in the main thread, OpenTelemetry's
 * OTLP/HTTP delegate in a thread of its own. What a collector receives, what the SDK is told of a
 * refusal, and that the main thread itself makes no HTTP request.
 */

/** Real spans, as the SDK hands them to an exporter. */
function finishedSpans(names: string[]): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer('test');
  for (const name of names) tracer.startSpan(name, { attributes: { 'db.query.summary': name } }).end();
  return memory.getFinishedSpans();
}

const exported = (exporter: WorkerSpanExporter, spans: ReadableSpan[]) =>
  new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));

/** The exporter reads the standard variables when it starts, as OpenTelemetry's own does. */
function exporterFor(url: string, protocol: TracesProtocol, headers = ''): WorkerSpanExporter {
  const saved = { ...process.env };
  Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_EXPORTER_OTLP_HEADERS: headers });
  try {
    return new WorkerSpanExporter(protocol);
  } finally {
    for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_HEADERS']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  }
}

describe('the span exporter', () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  for (const [protocol, contentType] of [
    ['http/protobuf', 'application/x-protobuf'],
    ['http/json', 'application/json'],
  ] as const) {
    test(`${protocol}: the collector receives the spans, with the OTEL_EXPORTER_OTLP_HEADERS headers`, async () => {
      const receiver = await startOtlpReceiver();
      cleanups.push(() => receiver.close());
      const exporter = exporterFor(receiver.url, protocol, 'x-collector-key=k1');
      cleanups.push(() => exporter.shutdown());
      const result = await exported(exporter, finishedSpans(['SELECT codes', 'UPDATE codes']));
      assert.equal(result.code, ExportResultCode.SUCCESS);
      assert.deepEqual(
        receiver.spans.map((span) => [span.name, span.attributes['db.query.summary']]),
        [
          ['SELECT codes', 'SELECT codes'],
          ['UPDATE codes', 'UPDATE codes'],
        ],
      );
      assert.equal(receiver.contentTypes[0], contentType);
      assert.equal(receiver.headers[0]?.['x-collector-key'], 'k1');
    });
  }

  test('the main thread makes no HTTP request: the export thread does', async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const exporter = exporterFor(receiver.url, 'http/protobuf');
    cleanups.push(() => exporter.shutdown());
    const requests: unknown[] = [];
    const onRequest = (message: unknown) => requests.push(message);
    subscribe('http.client.request.start', onRequest);
    try {
      assert.equal((await exported(exporter, finishedSpans(['SELECT keys']))).code, ExportResultCode.SUCCESS);
      await exporter.forceFlush();
    } finally {
      unsubscribe('http.client.request.start', onRequest);
    }
    assert.equal(receiver.spans.length, 1, 'the spans arrived');
    assert.equal(requests.length, 0, 'no HTTP client request started in this thread');
  });

  test('a collector that refuses the spans: the SDK is told the export failed, and why', async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    receiver.refuseWith(400);
    const exporter = exporterFor(receiver.url, 'http/protobuf');
    cleanups.push(() => exporter.shutdown());
    const result = await exported(exporter, finishedSpans(['SELECT keys']));
    assert.equal(result.code, ExportResultCode.FAILED);
    assert.match(String(result.error?.message), /400|Bad Request/);
  });

  test('after shutdown, an export fails at once and a second shutdown does nothing', async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const exporter = exporterFor(receiver.url, 'http/protobuf');
    await exporter.shutdown();
    await exporter.shutdown();
    const result = await exported(exporter, finishedSpans(['SELECT keys']));
    assert.equal(result.code, ExportResultCode.FAILED);
    assert.equal(receiver.spans.length, 0);
  });
});
