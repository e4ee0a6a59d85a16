import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { coffer } from '../helpers/cli.ts';
import type { DatabaseKind } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** A Coffer server with one tenant made an issuer (development certificate). */
export interface IssuerWorld {
  server: TestServer;
  clientId: number;
  token: string;
  issuerId: string;
  api(method: string, p: string, body?: unknown): ReturnType<TestServer['request']>;
  close(): Promise<void>;
}

export async function startIssuerWorld(
  kind: DatabaseKind,
  env: Record<string, string> = {},
): Promise<IssuerWorld> {
  const dir = await mkdtemp(path.join(tmpdir(), 'coffer-issuer-'));
  const server = await startTestServer(kind, { ALLOW_PRIVATE_TARGETS: 'true', ...env });
  const { clientId, token } = await server.createMaster('University');
  const enabled = await coffer(server, 'issuer', 'enable', '--client', String(clientId), '--json');
  if (enabled.code !== 0) throw new Error(`issuer enable failed: ${enabled.stderr}`);
  const { credential_issuer: issuerId } = JSON.parse(enabled.stdout) as { credential_issuer: string };
  return {
    server,
    clientId,
    token,
    issuerId,
    api: (method, p, body) =>
      server.request(method, p, {
        headers: { 'x-api-token': token },
        ...(body === undefined ? {} : { body }),
      }),
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A wallet's proof key and a `openid4vci-proof+jwt` made with jose. */
export async function proofKey() {
  const keys = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(keys.publicKey);
  return {
    jwk,
    proof: (claims: { aud: string; nonce?: string; iat?: number }, typ = 'openid4vci-proof+jwt') =>
      new SignJWT({ ...claims, iat: claims.iat ?? Math.floor(Date.now() / 1000) })
        .setProtectedHeader({ alg: 'ES256', typ, jwk })
        .sign(keys.privateKey),
  };
}
