import { type Context, context, propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { WorkerSpanExporter } from '../src/telemetry/worker-span-exporter.ts';

/** Spans in each simulated request: a server span and nine statements, as a token exchange has. */
const SPANS_PER_REQUEST = 10;

/**
 * What the OpenTelemetry JavaScript SDK and Coffer's exporter cost per span, apart from the rest of
 * Coffer: CPU time in this process (the export thread's included) to make a span, batch it,
 * serialise it and send it over OTLP/HTTP in `encoding` to `receiver` (the telemetry bench's sink,
 * whose reading of the bytes runs in this process too and is counted), with the
 * same attributes Coffer's server and statement spans carry. The provider is not registered
 * globally, so nothing else in this process is traced.
 */
export async function measureSpanCost(
  receiver: string,
  encoding: 'http/protobuf' | 'http/json',
  requests = 20_000,
): Promise<number> {
  const provider = new NodeTracerProvider({
    spanProcessors: [new BatchSpanProcessor(new WorkerSpanExporter(encoding, `${receiver}/v1/traces`))],
  });
  const tracer = provider.getTracer('coffer');
  const request = async () => {
    const root = tracer.startSpan('POST /v2/openidc/token', {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/v2/openidc/token',
        'coffer.request_id': 'r',
      },
    });
    const parent = trace.setSpan(context.active(), root);
    for (let i = 1; i < SPANS_PER_REQUEST; i++) {
      const end = Date.now();
      tracer
        .startSpan(
          'SELECT codes',
          {
            kind: SpanKind.CLIENT,
            startTime: end,
            attributes: {
              'db.system.name': 'sqlite',
              'db.operation.name': 'SELECT',
              'db.query.summary': 'SELECT codes',
            },
          },
          parent,
        )
        .end(end);
    }
    root.setAttribute('http.response.status_code', 200);
    root.end();
    // A turn of the loop per request, as a server has: the batch processor's timer and the
    // exporter's socket run in between.
    await new Promise((resolve) => setImmediate(resolve));
  };
  try {
    for (let i = 0; i < requests / 4; i++) await request();
    await provider.forceFlush();
    const before = process.cpuUsage();
    for (let i = 0; i < requests; i++) await request();
    await provider.forceFlush();
    const used = process.cpuUsage(before);
    const idle = process.cpuUsage();
    for (let i = 0; i < requests; i++) await new Promise((resolve) => setImmediate(resolve));
    const loop = process.cpuUsage(idle);
    const micros = used.user + used.system - (loop.user + loop.system);
    return micros / (requests * SPANS_PER_REQUEST);
  } finally {
    await provider.shutdown();
  }
}

/**
 * What tracing adds to a request the sampler drops, as src/http/request-tracing.ts and the spans
 * under it do: extract the caller's context, start the server span (the sampler's decision), enter
 * its context twice (onRequest, preHandler), ask nine times whether to make a child (one per
 * statement). CPU µs per request beyond the same request untraced. The provider is registered for
 * the measurement (its context manager is what `context.with` costs) and unregistered after.
 */
export async function measureUnsampledRequestCost(requests = 100_000): Promise<number> {
  const provider = new NodeTracerProvider({
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) }),
  });
  provider.register();
  const tracer = trace.getTracer('coffer');
  const headers = { host: '127.0.0.1', 'content-type': 'application/x-www-form-urlencoded' };
  const enter = (active: Context) => new Promise<void>((resolve) => context.with(active, resolve));
  const traced = async () => {
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    const span = tracer.startSpan(
      'POST /v2/openidc/token',
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': 'POST',
          'http.route': '/v2/openidc/token',
          'coffer.request_id': 'r',
        },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    await enter(active);
    await enter(active);
    for (let i = 1; i < SPANS_PER_REQUEST; i++) trace.getSpan(context.active())?.isRecording();
    span.isRecording();
  };
  const untraced = async () => {
    await enter(ROOT_CONTEXT);
    await enter(ROOT_CONTEXT);
  };
  const cpu = async (request: () => Promise<void>) => {
    for (let i = 0; i < requests / 4; i++) await request();
    const before = process.cpuUsage();
    for (let i = 0; i < requests; i++) await request();
    const used = process.cpuUsage(before);
    return used.user + used.system;
  };
  try {
    const base = await cpu(untraced);
    return ((await cpu(traced)) - base) / requests;
  } finally {
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  }
}
