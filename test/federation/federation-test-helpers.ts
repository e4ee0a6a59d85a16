import { createPublicKey, verify } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { resolveTrustChains } from '@openid-federation/core';
import type { JWK } from 'jose';

/** What the federation tests share: fetch trusting test CAs, and the ES256 check @openid-federation/core asks for. */

/** fetch over HTTPS trusting the given CAs only (the TLS front's and the federation's). */
export const fetchTrusting =
  (cas: string[]): typeof fetch =>
  async (input) => {
    const target = new URL(input instanceof Request ? input.url : String(input));
    return new Promise<Response>((resolve, reject) => {
      const sent = httpsRequest(target, { method: 'GET', ca: cas }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(answer.headers))
            if (typeof value === 'string') headers.set(name, value);
          resolve(new Response(Buffer.concat(chunks), { status: answer.statusCode ?? 500, headers }));
        });
      });
      sent.on('error', reject);
      sent.end();
    });
  };

export const es256Verifies = async (options: { data: Uint8Array; signature: Uint8Array; jwk: unknown }) =>
  verify(
    'sha256',
    options.data,
    {
      key: createPublicKey({ key: options.jwk as JWK & { kty: string }, format: 'jwk' }),
      dsaEncoding: 'ieee-p1363',
    },
    options.signature,
  );

/** The trust chains of `entityId` to `anchorId` as @openid-federation/core, an independent resolver, finds them. */
export async function resolveWithCore(entityId: string, anchorId: string, trustedFetch: typeof fetch) {
  // The library fetches with the global fetch in places; for this call it trusts the test CAs.
  const globalFetch = globalThis.fetch;
  globalThis.fetch = trustedFetch;
  try {
    return await resolveTrustChains({
      entityId,
      trustAnchorEntityIds: [anchorId],
      verifyJwtCallback: es256Verifies,
      fetchCallback: trustedFetch,
      // biome-ignore lint/suspicious/noExplicitAny: the library's option types lag its behaviour
    } as any);
  } finally {
    globalThis.fetch = globalFetch;
  }
}
