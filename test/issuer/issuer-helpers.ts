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

const PRE_AUTHORIZED = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';

/** The pre-authorized code an offer's document carries (fetched by reference, as a wallet does). */
export async function preAuthorizedCodeOf(offer: { credential_offer_uri: string }): Promise<string> {
  const document = (await (await fetch(offer.credential_offer_uri)).json()) as {
    grants: Record<string, { 'pre-authorized_code': string }>;
  };
  return document.grants[PRE_AUTHORIZED]!['pre-authorized_code'];
}

/** A token request of the pre-authorized code grant, as a wallet sends it. */
export const redeemPreAuthorizedCode = (world: IssuerWorld, code: string, txCode?: string) =>
  world.server.request('POST', '/v2/openidc/token', {
    body: {
      grant_type: PRE_AUTHORIZED,
      'pre-authorized_code': code,
      ...(txCode === undefined ? {} : { tx_code: txCode }),
    },
  });

/** A credential request with a fresh c_nonce and a jwt proof of a fresh key; status and JSON body. */
export async function requestCredential(world: IssuerWorld, accessToken: string, configurationId: string) {
  const nonce = await fetch(`${world.issuerId}/nonce`, { method: 'POST' });
  const { c_nonce: cNonce } = (await nonce.json()) as { c_nonce: string };
  const key = await proofKey();
  const response = await fetch(`${world.issuerId}/credential`, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      credential_configuration_id: configurationId,
      proofs: { jwt: [await key.proof({ aud: world.issuerId, nonce: cNonce })] },
    }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  return { status: response.status, body: (await response.json()) as any };
}
