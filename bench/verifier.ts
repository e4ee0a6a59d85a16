/**
 * Coffer's verifier (issue 30), per format: the tenant creates a request, the wallet fetches the
 * request object (POST, §5.10), posts its encrypted answer (direct_post.jwt), and the tenant
 * reads the result — round trips per second, latency, and the server's CPU per verification, at
 * each concurrency, against a server process on 127.0.0.1. Every round trip presents one of many
 * distinct credentials (a person's, not one credential again and again), freshly bound to the
 * request's nonce; the wallet's own work runs in this process and is not counted as the server's.
 *
 * `npm run bench -- --only=verifier[,oid4vp] [--db=sqlite --duration=10 --connections=1,10]`
 */
import { generateKeyPairSync, type JsonWebKey, X509Certificate } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import {
  CompactEncrypt,
  calculateJwkThumbprint,
  compactVerify,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  SignJWT,
} from 'jose';
import { fastBbs } from '../src/bbs/index.ts';
import { inProcessOperations } from '../src/formats/ldp-vc/bbs-2023/operations.ts';
import type { SecuredDocument } from '../src/formats/ldp-vc/bbs-2023/shared.ts';
import { discloseForVerifier, signPresentation } from '../src/formats/ldp-vc/presentation.ts';
import { didKeyFromEd25519PublicKey } from '../src/keys/holder-key.ts';
import {
  BENCH_CONTEXT,
  BENCH_CONTEXT_URL,
  benchJsonLd,
  createBenchIssuer,
} from '../test/helpers/credential-factory.ts';
import { makeIssuerIdentity } from '../test/helpers/issuers/issuer-ca.ts';
import { createJwtVcIssuer } from '../test/helpers/issuers/jwt-vc-issuer.ts';
import { issueMdoc, MDL_DOCTYPE, MDL_NAMESPACE } from '../test/helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc, PID_VCT, sha256 } from '../test/helpers/issuers/sd-jwt-issuer.ts';
import { deviceKey, presentMdoc, transcriptOf } from '../test/helpers/mdoc-device-response.ts';
import { type BenchDatabase, type BenchServer, startBenchServer } from './server.ts';
import { measureRoundTrips, type RoundTripFigures } from './timing.ts';

/** Distinct credentials per format; round trips take them in turn. */
const CREDENTIALS = 64;
const TEN_CLAIMS = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`claim_${i}`, `value ${i}`]));

type Row = RoundTripFigures & { format: string };

// biome-ignore lint/suspicious/noExplicitAny: request objects are arbitrary JSON
type Json = any;

/** What a wallet reads of a request to bind its presentation to it. */
interface WalletView {
  clientId: string;
  nonce: string;
  responseUri: string;
  /** The thumbprint of the response encryption key (mdoc transcripts name it). */
  thumbprint: Uint8Array;
}

/** What the wallet needs to answer one request: the query to ask and how to present. */
export interface Kind {
  format: string;
  query: Record<string, unknown>;
  trustedIssuers?: string[];
  present(index: number, request: WalletView): Promise<unknown>;
}

function ed25519Holder() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return {
    did: didKeyFromEd25519PublicKey(raw),
    privateJwk: privateKey.export({ format: 'jwk' }) as JsonWebKey,
  };
}

export async function sdJwtKind(): Promise<Kind> {
  const identity = await makeIssuerIdentity('Bench Issuer');
  const instance = new SDJwtVcInstance({ hasher: async (data) => sha256(data), hashAlg: 'sha-256' });
  const holders = await Promise.all(
    Array.from({ length: CREDENTIALS }, async () => {
      const keys = await generateKeyPair('ES256', { extractable: true });
      const credential = await issueSdJwtVc(identity, {
        holderJwk: (await exportJWK(keys.publicKey)) as JsonWebKey,
        claims: TEN_CLAIMS,
        disclosureFrame: { _sd: Object.keys(TEN_CLAIMS) },
      });
      return { keys, credential };
    }),
  );
  return {
    format: 'dc+sd-jwt',
    query: {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: [PID_VCT] },
      claims: [{ path: ['claim_0'] }, { path: ['claim_1'] }],
    },
    trustedIssuers: [identity.ca.pem],
    async present(index, request) {
      const holder = holders[index % holders.length]!;
      const disclosed = await instance.present(holder.credential, { claim_0: true, claim_1: true } as never);
      const kb = await new SignJWT({
        iat: Math.floor(Date.now() / 1000),
        aud: request.clientId,
        nonce: request.nonce,
        sd_hash: Buffer.from(sha256(disclosed)).toString('base64url'),
      })
        .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
        .sign(holder.keys.privateKey);
      return disclosed + kb;
    },
  };
}

export async function mdocKind(): Promise<Kind> {
  const identity = await makeIssuerIdentity('Bench mdoc Issuer');
  const holders = await Promise.all(
    Array.from({ length: CREDENTIALS }, async () => {
      const device = deviceKey('P-256');
      return { device, mdoc: await issueMdoc(identity, { deviceJwk: device.publicJwk }) };
    }),
  );
  return {
    format: 'mso_mdoc',
    query: {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: MDL_DOCTYPE },
      claims: [{ path: [MDL_NAMESPACE, 'given_name'] }, { path: [MDL_NAMESPACE, 'family_name'] }],
    },
    trustedIssuers: [identity.ca.pem],
    async present(index, request) {
      const { device, mdoc } = holders[index % holders.length]!;
      const transcript = transcriptOf({
        clientId: request.clientId,
        nonce: request.nonce,
        thumbprint: request.thumbprint,
        responseUri: request.responseUri,
      });
      return presentMdoc(mdoc, { disclose: ['given_name', 'family_name'], transcript, device });
    },
  };
}

export async function jwtVcKind(): Promise<Kind> {
  const issuer = await createJwtVcIssuer();
  const holders = await Promise.all(
    Array.from({ length: CREDENTIALS }, async () => {
      const holder = ed25519Holder();
      return { holder, credential: await issuer.issue({ subject: holder.did }) };
    }),
  );
  return {
    format: 'jwt_vc_json',
    query: {
      id: 'degree',
      format: 'jwt_vc_json',
      meta: { type_values: [['https://www.w3.org/2018/credentials#VerifiableCredential']] },
      claims: [{ path: ['credentialSubject', 'given_name'] }],
    },
    trustedIssuers: [issuer.did],
    async present(index, request) {
      const { holder, credential } = holders[index % holders.length]!;
      return new SignJWT({
        nonce: request.nonce,
        vp: {
          '@context': ['https://www.w3.org/2018/credentials/v1'],
          type: ['VerifiablePresentation'],
          verifiableCredential: [credential],
        },
      })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: `${holder.did}#${holder.did.slice(8)}` })
        .setIssuer(holder.did)
        .setAudience(request.clientId)
        .setIssuedAt()
        .sign(await importJWK(holder.privateJwk as JWK, 'EdDSA'));
    },
  };
}

export async function ldpKind(): Promise<Kind> {
  const issuer = await createBenchIssuer(fastBbs);
  const operations = inProcessOperations({ bbs: fastBbs, jsonLd: benchJsonLd });
  const holders = await Promise.all(
    Array.from({ length: CREDENTIALS }, async () => {
      const holder = ed25519Holder();
      const signed = await issuer.issue(holder.did, 10);
      const derived = await discloseForVerifier(
        signed,
        ['/credentialSubject/claim_0', '/credentialSubject/claim_1'],
        operations,
      );
      return { holder, derived };
    }),
  );
  return {
    format: 'ldp_vc',
    query: {
      id: 'person',
      format: 'ldp_vc',
      meta: { type_values: [['https://issuer.example/vocab#PersonCredential']] },
      claims: [{ path: ['credentialSubject', 'claim_0'] }, { path: ['credentialSubject', 'claim_1'] }],
    },
    trustedIssuers: [issuer.did],
    async present(index, request) {
      const { holder, derived } = holders[index % holders.length]!;
      return signPresentation(
        derived as SecuredDocument,
        holder,
        { clientId: request.clientId, nonce: request.nonce, responseUri: '', encryptionJwkThumbprint: null },
        benchJsonLd,
      );
    },
  };
}

/**
 * A verifier tenant on `server` (client, `verifier enable`, the claims context) and its round trip:
 * create a request, fetch the request object, post the encrypted answer, read the result.
 */
export async function prepareVerifier(server: BenchServer): Promise<(kind: Kind) => Promise<void>> {
  const contextFile = path.join(tmpdir(), `coffer-bench-context-${process.pid}.json`);
  await writeFile(contextFile, JSON.stringify(BENCH_CONTEXT));
  try {
    const created = (await server.coffer('client', 'create', '--name', 'Bench shop', '--master')) as {
      client_id: number;
      api_token: string;
    };
    await server.coffer('verifier', 'enable', '--client', String(created.client_id));
    await server.coffer('context', 'add', '--url', BENCH_CONTEXT_URL, '--file', contextFile);
    const api = { 'x-api-token': created.api_token, 'content-type': 'application/json' };
    let counter = 0;
    return (kind) => verificationRoundTrip(server, api, kind, counter++);
  } finally {
    await rm(contextFile, { force: true });
  }
}

async function verificationRoundTrip(
  server: BenchServer,
  api: Record<string, string>,
  kind: Kind,
  n: number,
): Promise<void> {
  const made = await fetch(`${server.url}/v1/verifier/requests`, {
    method: 'POST',
    headers: api,
    body: JSON.stringify({
      dcql_query: { credentials: [kind.query] },
      client_id_prefix: 'x509_hash',
      ...(kind.trustedIssuers ? { trusted_issuers: kind.trustedIssuers } : {}),
    }),
  });
  if (made.status !== 201) throw new Error(`create: ${made.status} ${await made.text()}`);
  const { data } = (await made.json()) as Json;
  const fetched = await fetch(data.request_uri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'wallet_nonce=bench',
  });
  const jwt = await fetched.text();
  const leaf = new X509Certificate(Buffer.from((decodeProtectedHeader(jwt).x5c as string[])[0]!, 'base64'));
  const { payload } = await compactVerify(jwt, leaf.publicKey);
  const request = JSON.parse(new TextDecoder().decode(payload)) as Json;
  const jwk = request.client_metadata.jwks.keys[0] as JWK;
  const presentation = await kind.present(n, {
    clientId: request.client_id,
    nonce: request.nonce,
    responseUri: request.response_uri,
    thumbprint: Buffer.from(await calculateJwkThumbprint(jwk, 'sha256'), 'base64url'),
  });
  const response = await new CompactEncrypt(
    new TextEncoder().encode(
      JSON.stringify({
        vp_token: { [kind.query['id'] as string]: [presentation] },
        state: request.state,
      }),
    ),
  )
    .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128GCM', kid: jwk.kid! })
    .encrypt(await importJWK(jwk, 'ECDH-ES'));
  const posted = await fetch(request.response_uri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ response }).toString(),
  });
  if (posted.status !== 200) throw new Error(`response: ${posted.status} ${await posted.text()}`);
  const read = await fetch(`${server.url}/v1/verifier/requests/${data.id}`, { headers: api });
  const result = (await read.json()) as Json;
  if (result.data.status !== 'verified')
    throw new Error(`result: ${JSON.stringify(result.data).slice(0, 400)}`);
}

export async function runVerifierBenchmark(options: {
  database: BenchDatabase;
  duration: number;
  connections: number[];
  /** The server's environment beyond the bench's own (tracing on, for instance). */
  extraEnv?: Record<string, string>;
}): Promise<{ table: string; peakRssMiB: number; rows: Row[] }> {
  const server = await startBenchServer(options.database, { RESULT_RETENTION: '0', ...options.extraEnv });
  try {
    const roundTrip = await prepareVerifier(server);
    const kinds = [await ldpKind(), await sdJwtKind(), await mdocKind(), await jwtVcKind()];
    const rows: Row[] = [];
    const only = process.env['BENCH_VERIFIER_FORMATS']?.split(',');
    for (const kind of kinds.filter((k) => only === undefined || only.includes(k.format))) {
      for (let i = 0; i < 5; i++) await roundTrip(kind);
      for (const connections of options.connections) {
        rows.push({
          format: kind.format,
          ...(await measureRoundTrips(server, () => roundTrip(kind), connections, options.duration)),
        });
        console.error(`done: verifier ${kind.format} ${options.database} c=${connections}`);
      }
    }
    return {
      table: [
        '| scenario | db | concurrent | verifications/s | p50 ms | p99 ms | verifications | failures | server CPU ms/verification |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
        ...rows.map(
          (r) =>
            `| verifier ${r.format} (create, request object, direct_post.jwt, result) | ${options.database} | ${r.connections} | ${r.perSecond.toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.roundTrips} | ${r.failures} | ${r.cpuMs.toFixed(2)} |`,
        ),
      ].join('\n'),
      peakRssMiB: await server.peakRssMiB(),
      rows,
    };
  } finally {
    await server.stop();
  }
}
