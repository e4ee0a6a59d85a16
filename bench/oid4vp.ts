/**
 * The hosted wallet's whole presentation round trip (issues 5 and 14), per format (ldp_vc,
 * dc+sd-jwt, mso_mdoc), each beside ldp_vc in the same run: a verifier (the test suite's,
 * built on @openid4vc/openid4vp) makes an x509_hash request by reference with direct_post.jwt;
 * the person's browser (with a session) opens the authorization endpoint, the wallet fetches and
 * checks the request object, the consent page is read, the person approves, the wallet derives,
 * signs and encrypts, and the verifier receives and decrypts the response. Round trips per second
 * and p50/p99 latency at each concurrency, against a server process on 127.0.0.1.
 *
 * `npm run bench -- --only=oid4vp [--db=sqlite --duration=10 --connections=1,4,10]`
 */
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { fastBbs } from '../src/bbs/index.ts';
import { createClient } from '../src/clients/client-admin.ts';
import { registerContext } from '../src/formats/ldp-vc/contexts/context-admin.ts';
import { logInWithWallet } from '../src/users/user-login.ts';
import { BENCH_CONTEXT, BENCH_CONTEXT_URL, createBenchIssuer } from '../test/helpers/credential-factory.ts';
import { holderJwkOf } from '../test/helpers/issuers/holder.ts';
import { makeIssuerIdentity } from '../test/helpers/issuers/issuer-ca.ts';
import { issueMdoc, MDL_DOCTYPE, MDL_NAMESPACE } from '../test/helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc, PID_VCT } from '../test/helpers/issuers/sd-jwt-issuer.ts';
import { LDP_VC_FORMATS, startVerifier } from '../test/oid4vp/verifier.ts';
import { signSiwe } from '../test/oidc/flow-helpers.ts';
import { createRelyingParty, withServerState } from './seed.ts';
import { type BenchDatabase, startBenchServer } from './server.ts';
import { measureRoundTrips, type RoundTripFigures } from './timing.ts';

type RoundTripResult = RoundTripFigures & { format: string };

export async function runOid4vpBenchmark(options: {
  database: BenchDatabase;
  duration: number;
  connections: number[];
}): Promise<{ table: string; peakRssMiB: number }> {
  const verifier = await startVerifier();
  const caFile = path.join(tmpdir(), `coffer-bench-verifier-${process.pid}.pem`);
  await writeFile(caFile, verifier.tlsCertificatePem);
  // A separate process trusts the verifier's self-signed TLS certificate the standard way.
  const server = await startBenchServer(options.database, {
    ALLOW_PRIVATE_TARGETS: 'true',
    NODE_EXTRA_CA_CERTS: caFile,
    LOGIN_RATE_LIMIT: '0',
  });
  try {
    const account = privateKeyToAccount(generatePrivateKey());
    // The person has an account (signed up at some app with this wallet) and an issuer to serve them.
    const { issuerToken, did } = await withServerState(server, async (state) => {
      await registerContext(state.database.db, BENCH_CONTEXT_URL, JSON.stringify(BENCH_CONTEXT));
      const rp = await createRelyingParty(state);
      const user = await logInWithWallet(state.users, rp.client_id, account.address, 1);
      const issuer = await createClient(state.database.db, { name: 'Bench issuer', master: true });
      return { issuerToken: issuer.api_token, did: user.did };
    });

    // The person logs in once inside a consent; the session cookie then skips the log-in.
    const first = await verifier.createRequest();
    const start = await fetch(`${server.url}/v1/oid4vp/authorize?${first.query}`, { redirect: 'manual' });
    const interaction = start.headers.get('location')!;
    const view = (await (
      await fetch(server.url + interaction, { headers: { accept: 'application/json' } })
    ).json()) as {
      siwe: Parameters<typeof signSiwe>[1];
    };
    const login = await fetch(`${server.url}${interaction}/login/wallet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(await signSiwe(account, view.siwe)),
    });
    if (login.status !== 200) throw new Error(`log-in failed: ${login.status} ${await login.text()}`);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const issuer = await createBenchIssuer(fastBbs);
    const vc = await issuer.issue(did, 10);
    const stored = await fetch(`${server.url}/v1/vc/issuer/store`, {
      method: 'POST',
      headers: { 'x-api-token': issuerToken, 'content-type': 'application/json' },
      body: JSON.stringify({ vc }),
    });
    if (stored.status !== 201) throw new Error(`store failed: ${stored.status} ${await stored.text()}`);
    // The same person holds an SD-JWT VC (10 claims) and an mDL from an X.509 issuer.
    const identity = await makeIssuerIdentity('Bench Issuer');
    const tenClaims = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`claim_${i}`, `value ${i}`]));
    for (const compact of [
      await issueSdJwtVc(identity, {
        holderJwk: holderJwkOf(did),
        claims: tenClaims,
        disclosureFrame: { _sd: Object.keys(tenClaims) },
      }),
      await issueMdoc(identity, { deviceJwk: holderJwkOf(did) }),
    ]) {
      const answer = await fetch(`${server.url}/v1/vc/issuer/store`, {
        method: 'POST',
        headers: { 'x-api-token': issuerToken, 'content-type': 'application/json' },
        body: JSON.stringify({ vc: compact }),
      });
      if (answer.status !== 201) throw new Error(`store failed: ${answer.status} ${await answer.text()}`);
    }

    const kinds = [
      {
        format: 'ldp_vc',
        formats: LDP_VC_FORMATS,
        query: {
          id: 'person',
          format: 'ldp_vc',
          meta: { type_values: [['https://issuer.example/vocab#PersonCredential']] },
          claims: [{ path: ['credentialSubject', 'claim_0'] }, { path: ['credentialSubject', 'claim_1'] }],
        },
      },
      {
        format: 'dc+sd-jwt',
        formats: { 'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['EdDSA'] } },
        query: {
          id: 'pid',
          format: 'dc+sd-jwt',
          meta: { vct_values: [PID_VCT] },
          claims: [{ path: ['claim_0'] }, { path: ['claim_1'] }],
        },
      },
      {
        format: 'mso_mdoc',
        formats: { mso_mdoc: { issuerauth_alg_values: [-7], deviceauth_alg_values: [-8] } },
        query: {
          id: 'mdl',
          format: 'mso_mdoc',
          meta: { doctype_value: MDL_DOCTYPE },
          claims: [{ path: [MDL_NAMESPACE, 'given_name'] }, { path: [MDL_NAMESPACE, 'age_over_18'] }],
        },
      },
    ];
    async function roundTrip(kind: (typeof kinds)[number]): Promise<void> {
      const transaction = await verifier.createRequest({
        dcql: { credentials: [kind.query] },
        formats: kind.formats,
      });
      const authorize = await fetch(`${server.url}/v1/oid4vp/authorize?${transaction.query}`, {
        redirect: 'manual',
        headers: { cookie },
      });
      const consentPath = authorize.headers.get('location');
      if (authorize.status !== 303 || !consentPath?.startsWith('/interaction/')) {
        throw new Error(`authorize: ${authorize.status} ${await authorize.text()}`);
      }
      const consent = await fetch(server.url + consentPath, {
        headers: { accept: 'application/json', cookie },
      });
      if (consent.status !== 200) throw new Error(`consent view: ${consent.status}`);
      await consent.arrayBuffer();
      const decided = await fetch(`${server.url}${consentPath}/consent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify({ decision: 'approve' }),
      });
      const answer = (await decided.json()) as { redirect_to?: string };
      const received = transaction.received.at(-1);
      if (
        decided.status !== 200 ||
        !received?.vpToken?.[kind.query.id] ||
        answer.redirect_to !== received.redirectUri
      ) {
        throw new Error(`consent: ${decided.status} ${JSON.stringify(answer)}`);
      }
    }

    const results: RoundTripResult[] = [];
    // BENCH_OID4VP_FORMATS=ldp_vc,… runs only those formats (a CPU profile of one format).
    const only = process.env['BENCH_OID4VP_FORMATS']?.split(',');
    for (const kind of kinds.filter((k) => only === undefined || only.includes(k.format))) {
      for (let i = 0; i < 5; i++) await roundTrip(kind);
      for (const connections of options.connections) {
        results.push({
          format: kind.format,
          ...(await measureRoundTrips(server, () => roundTrip(kind), connections, options.duration)),
        });
        console.error(`done: OpenID4VP round trip ${kind.format} ${options.database} c=${connections}`);
      }
    }
    const vsLdp = (r: RoundTripResult) => {
      const ldp = results.find((l) => l.format === 'ldp_vc' && l.connections === r.connections);
      return ldp ? `${(r.perSecond / ldp.perSecond).toFixed(2)}×` : '—';
    };
    const rows = results.map(
      (r) =>
        `| OpenID4VP round trip ${r.format} (x509_hash, request_uri, direct_post.jwt) | ${options.database} | ${r.connections} | ${r.perSecond.toFixed(1)} | ${vsLdp(r)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.roundTrips} | ${r.failures} | ${r.cpuMs.toFixed(1)} |`,
    );
    const peakRssMiB = await server.peakRssMiB();
    return {
      table: [
        '| scenario | db | concurrent | round trips/s | vs ldp_vc | p50 ms | p99 ms | round trips | failures | server CPU ms/round trip |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
        ...rows,
      ].join('\n'),
      peakRssMiB,
    };
  } finally {
    await server.stop();
    await verifier.close();
    await rm(caFile, { force: true });
  }
}
