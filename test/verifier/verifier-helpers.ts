import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { type generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { createOutboundClient } from '../../src/http/outbound.ts';
import { coffer } from '../helpers/cli.ts';
import type { DatabaseKind } from '../helpers/databases.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { sha256 } from '../helpers/issuers/sd-jwt-issuer.ts';
import { startTestServer, type TestResponse, type TestServer } from '../helpers/server.ts';
import { type Certified, makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';
import { useFetch } from './test-wallet.ts';
import { startTlsFront, type TlsFront } from './tls-front.ts';

/** A Coffer server with one tenant made a verifier, and an issuer whose CA it trusts. */
export interface VerifierWorld {
  server: TestServer;
  token: string;
  clientId: number;
  issuer: IssuerIdentity;
  /** The verifier's own CA and leaf (made by the test, not Coffer's development certificate). */
  verifier: { ca: Certified; leaf: Certified };
  /** TLS in front of the server: PUBLIC_URL is its https:// address. */
  front: TlsFront;
  /** A PEM file holding the verifier's CA, for a wallet's VERIFIER_TRUST_ANCHORS. */
  verifierAnchors: string;
  createRequest(body: Record<string, unknown>): Promise<TestResponse>;
  readResult(id: string, query?: string): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface VerifierWorldOptions {
  /**
   * The server's own hosted wallet answers its verifier: its outbound requests trust the front's
   * TLS CA, and VERIFIER_TRUST_ANCHORS holds the verifier's CA (x509_san_dns needs it).
   */
  hostedWallet?: boolean;
}

export async function startVerifierWorld(
  kind: DatabaseKind,
  env: Record<string, string> = {},
  options: VerifierWorldOptions = {},
): Promise<VerifierWorld> {
  const dir = await mkdtemp(path.join(tmpdir(), 'coffer-verifier-'));
  const issuer = await makeIssuerIdentity();
  const anchors = path.join(dir, 'issuer-anchors.pem');
  await writeFile(anchors, issuer.ca.pem);
  const front = await startTlsFront();
  // The verifier's certificate exists before the server starts, so that a wallet can trust its CA.
  const ca = await makeCertificate({ subject: 'CN=Test Verifier CA, O=Test', ca: true });
  const leaf = await makeCertificate({
    subject: 'CN=Shop Verifier, O=Shop',
    issuer: ca,
    dnsNames: [new URL(front.url).hostname],
  });
  const verifierAnchors = path.join(dir, 'verifier-anchors.pem');
  await writeFile(verifierAnchors, ca.pem);
  const server = await startTestServer(
    kind,
    {
      ALLOW_PRIVATE_TARGETS: 'true',
      ISSUER_TRUST_ANCHORS: anchors,
      PUBLIC_URL: front.url,
      ...(options.hostedWallet ? { VERIFIER_TRUST_ANCHORS: verifierAnchors } : {}),
      ...env,
    },
    options.hostedWallet
      ? { outbound: createOutboundClient({ allowPrivateTargets: true, ca: [front.ca.pem] }) }
      : {},
  );
  front.target = server.url;
  useFetch(front.fetch);
  const { clientId, token } = await server.createMaster('Shop');
  const key = path.join(dir, 'verifier-key.pem');
  const chain = path.join(dir, 'verifier-chain.pem');
  await writeFile(key, await privateKeyPem(leaf.keys.privateKey));
  await writeFile(chain, `${leaf.pem}\n${ca.pem}\n`);
  const enabled = await coffer(
    server,
    'verifier',
    'enable',
    '--client',
    String(clientId),
    '--key',
    key,
    '--chain',
    chain,
    '--json',
  );
  if (enabled.code !== 0) throw new Error(`verifier enable failed: ${enabled.stderr}`);
  return {
    server,
    token,
    clientId,
    issuer,
    verifier: { ca, leaf },
    createRequest: (body) =>
      server.request('POST', '/v1/verifier/requests', { headers: { 'x-api-token': token }, body }),
    readResult: (id, query = '') =>
      server.request('GET', `/v1/verifier/requests/${id}${query}`, { headers: { 'x-api-token': token } }),
    front,
    verifierAnchors,
    async close() {
      await server.close();
      await front.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A DCQL query for one SD-JWT VC of the test issuer's type, asking for the given claims. */
export const sdJwtQuery = (vct: string, claims: string[][], id = 'pid') => ({
  credentials: [
    { id, format: 'dc+sd-jwt', meta: { vct_values: [vct] }, claims: claims.map((path) => ({ path })) },
  ],
});

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
const holderInstance = new SDJwtVcInstance({ hasher: async (data) => sha256(data), hashAlg: 'sha-256' });

/** The wallet's presentation: @sd-jwt's present with a frame, then a KB-JWT signed with jose. */
export async function presentSdJwt(
  credential: string,
  frame: Record<string, unknown>,
  holder: KeyPair,
  binding: { aud: string; nonce: string } & JWTPayload,
): Promise<string> {
  const disclosed = await holderInstance.present(credential, frame as never);
  const sdHash = Buffer.from(sha256(disclosed)).toString('base64url');
  const kb = await new SignJWT({ iat: Math.floor(Date.now() / 1000), sd_hash: sdHash, ...binding })
    .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
    .sign(holder.privateKey);
  return disclosed + kb;
}
