import { type Context, context, TraceFlags, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { setTracingEnabled } from '../../src/telemetry/tracer.ts';

/**
 * Tracing on in this test process, every span kept in memory as it ends. Call it before anything
 * that decides at creation whether to trace (openDatabase, createOutboundClient).
 */
export function recordSpansInMemory() {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  setTracingEnabled(true);
  return {
    exporter,
    async stop() {
      setTracingEnabled(false);
      await provider.shutdown();
    },
  };
}

/** Runs `work` as a request whose caller sent `traceparent` 00-`traceId`-`spanId`-00: not sampled. */
export function underUnsampledParent<T>(traceId: string, spanId: string, work: () => T): T {
  const parent = trace.wrapSpanContext({ traceId, spanId, traceFlags: TraceFlags.NONE });
  const active: Context = trace.setSpan(context.active(), parent);
  return context.with(active, work);
}
