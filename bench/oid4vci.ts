/**
 * The hosted wallet's issuance round trip (issues 15 and 18), against the test suite's
 * OpenID4VCI issuer (built on the issuer side of @openid4vc/openid4vci), in three grants:
 *
 * - pre-authorized: the person's browser (with a session) opens an offer by reference; the wallet
 *   fetches the offer and both metadata documents, the person approves; the wallet gets a token
 *   and a nonce, signs a proof with a fresh key, receives the SD-JWT VC, checks it and stores it;
 *   the issuer is notified;
 * - authorization code: the same offer with the authorization code grant through PAR, PKCE and
 *   DPoP; the browser follows the issuer's authorization page (which approves at once) back to the
 *   wallet's callback, which exchanges the code;
 * - HAIP: that flow against a HAIP issuer, adding a Wallet Attestation and its proof of
 *   possession at PAR and token, and a key attestation in the credential request.
 *
 * The last two rows differ only by what HAIP adds. Round trips per second, p50/p99 latency and the
 * server's CPU per round trip at each concurrency, against a server process on 127.0.0.1.
 *
 * `npm run bench -- --only=oid4vci [--db=sqlite --duration=10 --connections=1,10]`
 */
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { logInWithWallet } from '../src/users/user-login.ts';
import { startTestIssuer, type TestIssuer } from '../test/helpers/issuers/openid4vci-issuer.ts';
import { createWalletProvider } from '../test/oid4vci/haip-helpers.ts';
import { fetchWithCa } from '../test/oid4vci/issuance-helpers.ts';
import { signSiwe } from '../test/oidc/flow-helpers.ts';
import { createRelyingParty, withServerState } from './seed.ts';
import { type BenchDatabase, startBenchServer } from './server.ts';
import { closedLoop, percentile } from './timing.ts';

interface Flow {
  name: string;
  issuer: TestIssuer;
  grant: 'pre-authorized' | 'authorization_code';
}

export async function runOid4vciBenchmark(options: {
  database: BenchDatabase;
  duration: number;
  connections: number[];
}): Promise<{ table: string; peakRssMiB: number }> {
  const provider = await createWalletProvider();
  const [preAuthorized, authorizationCode, haip] = await Promise.all([
    startTestIssuer(),
    startTestIssuer({ requirePar: true, requireDpop: true }),
    startTestIssuer({ haip: { walletProviders: provider.rootPem } }),
  ]);
  const issuers = [preAuthorized, authorizationCode, haip];
  const caFile = path.join(tmpdir(), `coffer-bench-issuer-${process.pid}.pem`);
  await writeFile(caFile, issuers.map((i) => i.tlsCaPem).join('\n'));
  // A separate process trusts the issuers' TLS certificates the standard way. It is its own
  // wallet provider; only the HAIP issuer asks for attestations.
  const server = await startBenchServer(options.database, {
    ALLOW_PRIVATE_TARGETS: 'true',
    NODE_EXTRA_CA_CERTS: caFile,
    LOGIN_RATE_LIMIT: '0',
    ...provider.env,
  });
  const flows: Flow[] = [
    {
      name: 'dc+sd-jwt, pre-authorized (offer by reference, nonce, proof, notification)',
      issuer: preAuthorized,
      grant: 'pre-authorized',
    },
    {
      name: 'dc+sd-jwt, authorization code (PAR, PKCE, DPoP, authorization page, callback)',
      issuer: authorizationCode,
      grant: 'authorization_code',
    },
    {
      name: 'dc+sd-jwt, HAIP (the same + Wallet Attestation at PAR and token, key attestation)',
      issuer: haip,
      grant: 'authorization_code',
    },
  ];
  try {
    const account = privateKeyToAccount(generatePrivateKey());
    await withServerState(server, async (state) => {
      const rp = await createRelyingParty(state);
      await logInWithWallet(state.users, rp.client_id, account.address, 1);
    });
    const offerPath = async (flow: Flow) => {
      const { byReferenceQuery } = await flow.issuer.createOffer({
        configurationIds: ['pid-sd-jwt'],
        grant: flow.grant,
      });
      return `/v1/oid4vci/offer?${byReferenceQuery}`;
    };

    // The person logs in once inside an issuance; the session cookie then skips the log-in.
    const start = await fetch(server.url + (await offerPath(flows[0]!)), { redirect: 'manual' });
    const interaction = start.headers.get('location')!;
    if (start.status !== 303) throw new Error(`offer: ${start.status} ${await start.text()}`);
    const view = (await (
      await fetch(server.url + interaction, { headers: { accept: 'application/json' } })
    ).json()) as { siwe: Parameters<typeof signSiwe>[1] };
    const login = await fetch(`${server.url}${interaction}/login/wallet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(await signSiwe(account, view.siwe)),
    });
    if (login.status !== 200) throw new Error(`log-in failed: ${login.status} ${await login.text()}`);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;

    /** The browser at the issuer's authorization page and back at the wallet's callback. */
    async function throughAuthorization(
      flow: Flow,
      authorizationUrl: string,
    ): Promise<unknown[] | undefined> {
      const atIssuer = await fetchWithCa(flow.issuer.tlsCaPem, authorizationUrl);
      if (atIssuer.status !== 302 || !atIssuer.location) {
        throw new Error(`authorization page: ${atIssuer.status} ${atIssuer.body.slice(0, 300)}`);
      }
      const back = await fetch(atIssuer.location, { headers: { accept: 'application/json', cookie } });
      const answer = (await back.json()) as { received?: unknown[] };
      if (back.status !== 200)
        throw new Error(`callback: ${back.status} ${JSON.stringify(answer).slice(0, 300)}`);
      return answer.received;
    }

    async function roundTrip(flow: Flow): Promise<void> {
      const opened = await fetch(server.url + (await offerPath(flow)), {
        redirect: 'manual',
        headers: { cookie },
      });
      const issuancePath = opened.headers.get('location');
      if (opened.status !== 303 || !issuancePath?.startsWith('/interaction/')) {
        throw new Error(`offer: ${opened.status} ${await opened.text()}`);
      }
      const described = await fetch(server.url + issuancePath, {
        headers: { accept: 'application/json', cookie },
      });
      if (described.status !== 200) throw new Error(`interaction view: ${described.status}`);
      await described.arrayBuffer();
      const decided = await fetch(`${server.url}${issuancePath}/consent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify({ decision: 'approve' }),
      });
      const answer = (await decided.json()) as { received?: unknown[]; redirect_to?: string };
      if (decided.status !== 200) {
        throw new Error(`approve: ${decided.status} ${JSON.stringify(answer).slice(0, 300)}`);
      }
      const received = answer.redirect_to
        ? await throughAuthorization(flow, answer.redirect_to)
        : answer.received;
      if (received?.length !== 1)
        throw new Error(`nothing received: ${JSON.stringify(answer).slice(0, 300)}`);
    }

    const rows: string[] = [];
    for (const flow of flows) {
      for (let i = 0; i < 5; i++) await roundTrip(flow);
      for (const connections of options.connections) {
        const cpuBefore = await server.cpuMicros();
        const { latencies, failures } = await closedLoop(
          () => roundTrip(flow),
          connections,
          options.duration,
        );
        const cpuPerRoundTrip =
          ((await server.cpuMicros()) - cpuBefore) / Math.max(latencies.length, 1) / 1000;
        rows.push(
          `| ${flow.name} | ${options.database} | ${connections} | ${(latencies.length / options.duration).toFixed(1)} | ${percentile(latencies, 0.5).toFixed(1)} | ${percentile(latencies, 0.99).toFixed(1)} | ${cpuPerRoundTrip.toFixed(1)} | ${latencies.length} | ${failures} |`,
        );
        console.error(`done: OpenID4VCI ${flow.name} ${options.database} c=${connections}`);
      }
    }
    return {
      table: [
        '| scenario | db | concurrent | round trips/s | p50 ms | p99 ms | server CPU ms/round trip | round trips | failures |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
        ...rows,
      ].join('\n'),
      peakRssMiB: await server.peakRssMiB(),
    };
  } finally {
    await server.stop();
    await Promise.all(issuers.map((i) => i.close()));
    await rm(caFile, { force: true });
    await rm(provider.dir, { recursive: true, force: true });
  }
}
