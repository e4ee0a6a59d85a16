import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { type generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { createOutboundClient } from '../../src/http/outbound.ts';
import { coffer } from '../helpers/cli.ts';
import type { DatabaseKind } from '../helpers/databases.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { sha256 } from '../helpers/issuers/sd-jwt-issuer.ts';
import { startTestServer, type TestResponse, type TestServer } from '../helpers/server.ts';
import { type Certified, makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';
import { resolveRequest, useFetch } from './test-wallet.ts';
import { startTlsFront, type TlsFront } from './tls-front.ts';

/** A tenant of the world's server: its client id and API token. */
export interface Tenant {
  clientId: number;
  token: string;
}

/** A Coffer server with one tenant made a verifier, and an issuer whose CA it trusts. */
export interface VerifierWorld extends Tenant {
  server: TestServer;
  issuer: IssuerIdentity;
  /** The verifier's own CA and leaf (made by the test, not Coffer's development certificate). */
  verifier: { ca: Certified; leaf: Certified };
  /** TLS in front of the server: PUBLIC_URL is its https:// address. */
  front: TlsFront;
  /** A PEM file holding the verifier's CA, for a wallet's VERIFIER_TRUST_ANCHORS. */
  verifierAnchors: string;
  /** POST /v1/verifier/requests as the world's tenant, or as `token`'s. */
  createRequest(body: Record<string, unknown>, token?: string): Promise<TestResponse>;
  readResult(id: string, query?: string): Promise<TestResponse>;
  /**
   * Another tenant: made a verifier with a certificate of its own whose dNSNames are `dnsNames`
   * (none: it can be only x509_hash), or left an ordinary client with `verifier: false`.
   */
  addTenant(
    name: string,
    verifier: { dnsNames: string[] } | false,
  ): Promise<Tenant & { verifier?: { ca: Certified; leaf: Certified } }>;
  close(): Promise<void>;
}

export interface VerifierWorldOptions {
  /** PEM CA certificates the server's outbound client trusts: a status list server's, a callback receiver's. */
  trust?: string[];
  /**
   * The server's own hosted wallet answers its verifier: its outbound requests trust the front's
   * TLS CA, and VERIFIER_TRUST_ANCHORS holds the verifier's CA (x509_san_dns needs it).
   */
  hostedWallet?: boolean;
}

/** A verifier's CA and leaf, made here; the leaf's dNSNames as given. */
async function verifierCertificates(name: string, dnsNames: string[]) {
  const ca = await makeCertificate({ subject: `CN=Test Verifier CA ${name}, O=Test`, ca: true });
  const leaf = await makeCertificate({
    subject: `CN=Verifier ${name}, O=Test`,
    issuer: ca,
    ...(dnsNames.length ? { dnsNames } : {}),
  });
  return { ca, leaf };
}

/** `coffer verifier enable` for a client, with the given certificates (or a CA and leaf made here). */
async function enableVerifier(
  server: TestServer,
  dir: string,
  clientId: number,
  dnsNames: string[],
  made?: { ca: Certified; leaf: Certified },
) {
  const { ca, leaf } = made ?? (await verifierCertificates(String(clientId), dnsNames));
  const key = path.join(dir, `verifier-${clientId}-key.pem`);
  const chain = path.join(dir, `verifier-${clientId}-chain.pem`);
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
  return { ca, leaf };
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
  const host = new URL(front.url).hostname;
  // The verifier's certificate exists before the server starts, so that a wallet can trust its CA.
  const certificates = await verifierCertificates('Shop', [host]);
  const verifierAnchors = path.join(dir, 'verifier-anchors.pem');
  await writeFile(verifierAnchors, certificates.ca.pem);
  const trust = [...(options.trust ?? []), ...(options.hostedWallet ? [front.ca.pem] : [])];
  const server = await startTestServer(
    kind,
    {
      ALLOW_PRIVATE_TARGETS: 'true',
      ISSUER_TRUST_ANCHORS: anchors,
      PUBLIC_URL: front.url,
      ...(options.hostedWallet ? { VERIFIER_TRUST_ANCHORS: verifierAnchors } : {}),
      ...env,
    },
    trust.length ? { outbound: createOutboundClient({ allowPrivateTargets: true, ca: trust }) } : {},
  );
  front.target = server.url;
  useFetch(front.fetch);
  const { clientId, token } = await server.createMaster('Shop');
  const verifier = await enableVerifier(server, dir, clientId, [host], certificates);
  return {
    server,
    token,
    clientId,
    issuer,
    verifier,
    createRequest: (body, as = token) =>
      server.request('POST', '/v1/verifier/requests', { headers: { 'x-api-token': as }, body }),
    readResult: (id, query = '') =>
      server.request('GET', `/v1/verifier/requests/${id}${query}`, { headers: { 'x-api-token': token } }),
    async addTenant(name, verifierOptions) {
      const tenant = await server.createMaster(name);
      if (!verifierOptions) return tenant;
      return {
        ...tenant,
        verifier: await enableVerifier(server, dir, tenant.clientId, verifierOptions.dnsNames),
      };
    },
    front,
    verifierAnchors,
    async close() {
      await server.close();
      await front.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A request of the world's tenant, fetched and checked by the test wallet: what the tenant got
 * (`created`) and what the wallet read (`request`).
 */
export async function openRequest(world: VerifierWorld, body: Record<string, unknown>) {
  const created = await world.createRequest(body);
  if (created.status !== 201) throw new Error(`request creation answered ${created.status}: ${created.text}`);
  return {
    created: created.body.data,
    request: await resolveRequest(created.body.data.authorization_request),
  };
}

/** The tenant's result once the wallet has answered (the result's `data`). */
export async function resultOf(world: VerifierWorld, id: string) {
  const read = await world.readResult(id);
  assert.equal(read.status, 200, read.text);
  return read.body.data;
}

/**
 * A result rejected by the check `check` of query `query`, named in the error: the entry's failing
 * check is that one, and it hands on no claim. Returns the entry.
 */
// biome-ignore lint/suspicious/noExplicitAny: results are JSON
export function assertRejectedAt(result: any, query: string, check: string) {
  assert.equal(result.status, 'rejected', JSON.stringify(result));
  assert.equal(result.error.error, 'verification_failed');
  assert.match(result.error.error_description, new RegExp(`^${query}: ${check} — `));
  const [entry] = result.credentials[query];
  assert.equal(entry.checks.find((c: { ok: boolean }) => !c.ok).name, check);
  assert.equal(entry.claims, undefined);
  return entry;
}

/** A DCQL query for one SD-JWT VC of the test issuer's type, asking for the given claims. */
export const sdJwtQuery = (vct: string, claims: string[][], id = 'pid') => ({
  credentials: [
    { id, format: 'dc+sd-jwt', meta: { vct_values: [vct] }, claims: claims.map((path) => ({ path })) },
  ],
});

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
const holderInstance = new SDJwtVcInstance({ hasher: async (data) => sha256(data), hashAlg: 'sha-256' });

/** Waits until `done` holds, polling, for at most `timeoutMs`; the verifier's worker runs every second. */
export async function eventually(done: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** A KB-JWT over `sdJwt` (issuer-signed JWT~disclosures~), signed with jose; `binding` adds or overrides claims. */
export async function keyBindingJwt(
  sdJwt: string,
  holder: KeyPair,
  binding: { aud: string; nonce: string } & JWTPayload,
): Promise<string> {
  const sdHash = Buffer.from(sha256(sdJwt)).toString('base64url');
  return new SignJWT({ iat: Math.floor(Date.now() / 1000), sd_hash: sdHash, ...binding })
    .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
    .sign(holder.privateKey);
}

/** The SD-JWT a wallet presents: @sd-jwt's present with a frame (issuer-signed JWT~disclosures~). */
export const discloseSdJwt = (credential: string, frame: Record<string, unknown>): Promise<string> =>
  holderInstance.present(credential, frame as never);

/** The wallet's presentation: @sd-jwt's present with a frame, then a KB-JWT signed with jose. */
export async function presentSdJwt(
  credential: string,
  frame: Record<string, unknown>,
  holder: KeyPair,
  binding: { aud: string; nonce: string } & JWTPayload,
): Promise<string> {
  const disclosed = await discloseSdJwt(credential, frame);
  return disclosed + (await keyBindingJwt(disclosed, holder, binding));
}
