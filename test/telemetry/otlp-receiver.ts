import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

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
  /** Every request body received, as text (protobuf carries strings as they are): what left the process. */
  bodies: string[];
  /** The content type of each request: the encoding the process chose. */
  contentTypes: string[];
  /** Each request's headers, as a collector would read them. */
  headers: IncomingHttpHeaders[];
  /** Answers every request from now on with `status` and no spans taken (a collector refusing). */
  refuseWith(status: number): void;
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

type WireSpan = Omit<ReceivedSpan, 'attributes'> & { attributes?: Array<{ key: string; value: AnyValue }> };
type ExportRequest = { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: WireSpan[] }> }> };

// The fields of opentelemetry-proto's ExportTraceServiceRequest the tests read, by their numbers in
// trace.proto and common.proto; protobufjs skips the rest.
const ExportTraceServiceRequest = protobuf
  .parse(`syntax = "proto3";
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { repeated Span spans = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  repeated KeyValue attributes = 9;
}
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; }
}`)
  .root.lookupType('ExportTraceServiceRequest');

/** OTLP/protobuf as the JSON encoding spells it: ids in hex, 64-bit integers as strings. */
function decodeProtobuf(body: Buffer): ExportRequest {
  const message = ExportTraceServiceRequest.decode(body);
  const request = ExportTraceServiceRequest.toObject(message, {
    longs: String,
    bytes: Array,
  }) as ExportRequest;
  const hex = (bytes: unknown) =>
    Array.isArray(bytes) && bytes.length > 0 ? Buffer.from(bytes as number[]).toString('hex') : undefined;
  for (const resource of request.resourceSpans ?? [])
    for (const scope of resource.scopeSpans ?? [])
      for (const span of scope.spans ?? []) {
        span.traceId = hex(span.traceId) ?? '';
        span.spanId = hex(span.spanId) ?? '';
        const parent = hex(span.parentSpanId);
        if (parent) span.parentSpanId = parent;
        else delete span.parentSpanId;
      }
  return request;
}

/**
 * An OpenTelemetry collector's OTLP/HTTP traces endpoint (`POST /v1/traces`), in both encodings
 * its otlp receiver takes (`application/x-protobuf`, `application/json`), answering in the
 * request's own: enough to see what a process exports.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const contentTypes: string[] = [];
  const headers: IncomingHttpHeaders[] = [];
  let refusal: number | undefined;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      const contentType = String(request.headers['content-type']);
      bodies.push(raw.toString('utf8'));
      contentTypes.push(contentType);
      headers.push(request.headers);
      if (refusal !== undefined) {
        response.writeHead(refusal).end();
        return;
      }
      const protobufBody = contentType === 'application/x-protobuf';
      if (request.url !== '/v1/traces' || !(protobufBody || contentType.startsWith('application/json'))) {
        response.writeHead(415).end();
        return;
      }
      const parsed = protobufBody ? decodeProtobuf(raw) : (JSON.parse(raw.toString('utf8')) as ExportRequest);
      for (const resource of parsed.resourceSpans ?? [])
        for (const scope of resource.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({
              ...span,
              attributes: Object.fromEntries(
                (span.attributes ?? []).map((a) => [a.key, attributeValue(a.value)]),
              ),
            });
      // An empty ExportTraceServiceResponse, in either encoding.
      if (protobufBody) response.writeHead(200, { 'content-type': contentType }).end();
      else response.writeHead(200, { 'content-type': contentType }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    bodies,
    contentTypes,
    headers,
    refuseWith(status) {
      refusal = status;
    },
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
