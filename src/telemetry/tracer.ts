import { type Attributes, context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * Coffer's spans. Without a registered tracer provider (OTEL_* unset) the API's tracer is a no-op
 * and these calls cost a few hundred nanoseconds; src/telemetry/tracing.ts registers one.
 *
 * Attributes name routes, operations, hosts and ids — never a path with its values, a query string,
 * a header, an e-mail address, a claim or a token (docs/operations.md, "Traces").
 */
export const tracer = trace.getTracer('coffer');

let recording = false;

/** Whether a tracer provider records spans (set by startTracing): costly hooks install only then. */
export const tracingEnabled = () => recording;

/** Whether the active span records: a child made now would be sampled. */
export const tracingActive = () => trace.getSpan(context.active())?.isRecording() === true;

export function setTracingEnabled(enabled: boolean): void {
  recording = enabled;
}

/** Runs `work` inside a span that ends with it, marked as an error when it throws. */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: () => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (!recording) return work();
  // Under an unsampled request nothing would be kept: skip making spans that are dropped.
  const active = trace.getSpan(context.active());
  if (active !== undefined && !active.isRecording()) return work();
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await work();
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Records a finished operation (e.g. a database statement reported after it ran) as a span. */
export function recordFinishedSpan(
  name: string,
  attributes: Attributes,
  durationMs: number,
  error?: unknown,
): void {
  const end = Date.now();
  const span = tracer.startSpan(
    name,
    { kind: SpanKind.CLIENT, attributes, startTime: end - durationMs },
    context.active(),
  );
  if (error) markFailed(span, error);
  span.end(end);
}

/** The error's class only: a message may quote input (an address, a claim). */
export function markFailed(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('error.type', error instanceof Error ? error.name : 'unknown');
}

export { SpanKind };
