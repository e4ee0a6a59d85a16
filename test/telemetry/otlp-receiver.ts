import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as OTLP/HTTP JSON carries it (the fields the tests read). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Every request body received, as text: what left the process. */
  bodies: string[];
  /** Waits until a span satisfies `found` (or fails after `ms`). */
  waitFor(found: (span: ReceivedSpan) => boolean, ms?: number): Promise<ReceivedSpan>;
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
const attributeValue = (value: AnyValue) =>
  value.stringValue ??
  (value.intValue === undefined ? (value.boolValue ?? value.doubleValue) : Number(value.intValue));

/**
 * An OpenTelemetry collector's OTLP/HTTP traces endpoint (`POST /v1/traces`, JSON encoding), as
 * the collector's otlp receiver answers it: enough to see what a process exports.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      bodies.push(body);
      if (request.url !== '/v1/traces' || !String(request.headers['content-type']).includes('json')) {
        response.writeHead(415).end();
        return;
      }
      const parsed = JSON.parse(body) as {
        resourceSpans: Array<{
          scopeSpans: Array<{
            spans: Array<
              Omit<ReceivedSpan, 'attributes'> & { attributes?: Array<{ key: string; value: AnyValue }> }
            >;
          }>;
        }>;
      };
      for (const resource of parsed.resourceSpans)
        for (const scope of resource.scopeSpans)
          for (const span of scope.spans)
            spans.push({
              ...span,
              attributes: Object.fromEntries(
                (span.attributes ?? []).map((a) => [a.key, attributeValue(a.value)]),
              ),
            });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    bodies,
    async waitFor(found, ms = 10_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const span = spans.find(found);
        if (span) return span;
        if (Date.now() > deadline)
          throw new Error(`no such span among ${spans.map((s) => s.name).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
