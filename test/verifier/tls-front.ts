import { request as httpRequest } from 'node:http';
import { createServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type Certified, makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';

/**
 * TLS in front of a test server, as a deployment's proxy is: wallets (and the OpenID4VP library
 * the test wallet uses) take only https:// request and response URIs. It forwards every request
 * unchanged to the plain-HTTP server given later (the server's PUBLIC_URL must name the front
 * before the server starts).
 */
export interface TlsFront {
  url: string;
  ca: Certified;
  /** Where to forward: the test server's own http://127.0.0.1:port. */
  target: string;
  /** fetch over this front, trusting its CA only. */
  fetch: typeof fetch;
  close(): Promise<void>;
}

export async function startTlsFront(): Promise<TlsFront> {
  const ca = await makeCertificate({ subject: 'CN=Test TLS CA', ca: true });
  const leaf = await makeCertificate({ subject: 'CN=127.0.0.1', issuer: ca, ipAddresses: ['127.0.0.1'] });
  const front: Partial<TlsFront> = { ca, target: '' };
  const server = createServer(
    { key: await privateKeyPem(leaf.keys.privateKey), cert: leaf.pem },
    (incoming, outgoing) => {
      const target = new URL(incoming.url ?? '/', front.target);
      const forwarded = httpRequest(
        target,
        { method: incoming.method, headers: { ...incoming.headers, host: target.host } },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      forwarded.on('error', () => outgoing.writeHead(502).end());
      incoming.pipe(forwarded);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const tlsFetch = (async (input: string | URL | Request, init: RequestInit = {}) => {
    const target = new URL(input instanceof Request ? input.url : input);
    const body = init.body === undefined || init.body === null ? undefined : String(init.body);
    return new Promise<Response>((resolve, reject) => {
      const sent = httpsRequest(
        target,
        {
          method: init.method ?? 'GET',
          headers: Object.fromEntries(new Headers(init.headers).entries()),
          ca: ca.pem,
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () => {
            const headers = new Headers();
            for (const [name, value] of Object.entries(answer.headers)) {
              if (typeof value === 'string') headers.set(name, value);
            }
            const status = answer.statusCode ?? 502;
            resolve(
              new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), {
                status,
                headers,
              }),
            );
          });
        },
      );
      sent.on('error', reject);
      sent.end(body);
    });
  }) as typeof fetch;
  return Object.assign(front, {
    url,
    fetch: tlsFetch,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as TlsFront;
}
