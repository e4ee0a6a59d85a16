import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, type JWTPayload, jwtVerify } from 'jose';
import { type Certified, makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';

/** A tenant's callback_url: a real HTTPS server under a CA of its own, which the test trusts. */
export interface CallbackReceiver {
  url: string;
  ca: Certified;
  /** Every POST to /events, in order, whether it was answered 204 or 503. */
  received: { contentType: string | undefined; body: string; at: number }[];
  /** How many of the next POSTs to answer 503 (a receiver that is down for a while). */
  failNext: number;
  close(): Promise<void>;
}

export async function startCallbackReceiver(): Promise<CallbackReceiver> {
  const ca = await makeCertificate({ subject: 'CN=Callback Receiver CA', ca: true });
  const leaf = await makeCertificate({ subject: 'CN=Receiver', issuer: ca, ipAddresses: ['127.0.0.1'] });
  const receiver = { received: [], failNext: 0 } as unknown as CallbackReceiver;
  const server = createServer(
    { key: await privateKeyPem(leaf.keys.privateKey), cert: leaf.pem },
    (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.method !== 'POST' || request.url !== '/events') return response.writeHead(404).end();
        receiver.received.push({
          contentType: request.headers['content-type'],
          body: Buffer.concat(chunks).toString(),
          at: Date.now(),
        });
        if (receiver.failNext > 0) {
          receiver.failNext--;
          return response.writeHead(503).end();
        }
        response.writeHead(204).end();
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  receiver.ca = ca;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/**
 * What a careful receiver does with an event (RFC 8725 §3.11): jose checks the signature against
 * the server's JWKS, the `typ`, the issuer, the audience and the time (`iat`, `exp`).
 */
export async function verifyCallbackEvent(
  jwt: string,
  jwks: { keys: object[] },
  expected: { issuer: string; audience: string; currentDate?: Date },
): Promise<JWTPayload> {
  const { payload } = await jwtVerify(jwt, createLocalJWKSet(jwks as never), {
    typ: 'coffer-event+jwt',
    issuer: expected.issuer,
    audience: expected.audience,
    requiredClaims: ['iat', 'exp', 'jti'],
    ...(expected.currentDate ? { currentDate: expected.currentDate } : {}),
  });
  return payload;
}
