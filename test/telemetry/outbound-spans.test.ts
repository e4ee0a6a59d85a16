import assert from 'node:assert/strict';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createOutboundClient } from '../../src/http/outbound.ts';
import { inSpan } from '../../src/telemetry/tracer.ts';
import { recordSpansInMemory, underUnsampledParent } from '../helpers/in-memory-spans.ts';
import { makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';

/**
 * Outbound requests (a verifier's request_uri, a federation's statements) are client spans that
 * name the host only, and carry the W3C trace context to the peer.
 */
const tracing = recordSpansInMemory();
const { exporter } = tracing;
after(() => tracing.stop());

let port: number;
let server: ReturnType<typeof createServer> | undefined;
let outbound: ReturnType<typeof createOutboundClient>;
const received: Array<string | undefined> = [];

before(async () => {
  const ca = await makeCertificate({ subject: 'CN=Outbound Test CA', ca: true });
  const leaf = await makeCertificate({ subject: 'CN=127.0.0.1', issuer: ca, ipAddresses: ['127.0.0.1'] });
  server = createServer(
    { key: await privateKeyPem(leaf.keys.privateKey), cert: leaf.pem },
    (request, response) => {
      received.push(request.headers.traceparent as string | undefined);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    },
  );
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  outbound = createOutboundClient({ allowPrivateTargets: true, ca: ca.pem });
});

after(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

test('an outbound request is a client span under the active one, naming its host only', async () => {
  received.length = 0;
  exporter.reset();
  const answer = await inSpan('a request being served', {}, () =>
    outbound({ method: 'GET', url: `https://127.0.0.1:${port}/requests/person-42?token=s3cret` }),
  );
  assert.equal(answer.status, 200);

  const spans = exporter.getFinishedSpans();
  const client = spans.find((span) => span.name === 'GET')!;
  const parent = spans.find((span) => span.name === 'a request being served')!;
  assert.equal(client.parentSpanContext?.spanId, parent.spanContext().spanId);
  assert.equal(client.attributes['server.address'], '127.0.0.1');
  assert.equal(client.attributes['http.response.status_code'], 200);
  assert.ok(!JSON.stringify(client.attributes).includes('person-42'), 'the path stays out of the span');
  assert.ok(!JSON.stringify(client.attributes).includes('s3cret'), 'the query stays out of the span');
  assert.match(
    received[0] ?? '',
    new RegExp(`^00-${client.spanContext().traceId}-${client.spanContext().spanId}-01$`),
  );
});

test('under an unsampled request no span is made, and the peer is told it is not sampled', async () => {
  received.length = 0;
  exporter.reset();
  const answer = await underUnsampledParent('0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331', () =>
    inSpan('a crypto job', {}, () => outbound({ method: 'GET', url: `https://127.0.0.1:${port}/x` })),
  );
  assert.equal(answer.status, 200);
  assert.deepEqual(exporter.getFinishedSpans(), [], 'nothing is recorded below an unsampled request');
  assert.equal(received[0], '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00');
});
