/**
 * The hosted wallet's issuance round trip (issue 15): the test suite's OpenID4VCI issuer (built
 * on the issuer side of @openid4vc/openid4vci) makes a pre-authorized offer by reference; the
 * person's browser (with a session) opens the wallet's offer endpoint, the wallet fetches the
 * offer and both metadata documents, the interaction is read, the person approves; the wallet
 * gets a token and a nonce, signs a proof with a fresh key, receives the SD-JWT VC, checks it and
 * stores it; the issuer is notified. Round trips per second and p50/p99 latency at each
 * concurrency, against a server process on 127.0.0.1.
 *
 * `npm run bench -- --only=oid4vci [--db=sqlite --duration=10 --connections=1,10]`
 */
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { logInWithWallet } from '../src/users/user-login.ts';
import { startTestIssuer } from '../test/helpers/issuers/openid4vci-issuer.ts';
import { signSiwe } from '../test/oidc/flow-helpers.ts';
import { createRelyingParty, withServerState } from './seed.ts';
import { type BenchDatabase, startBenchServer } from './server.ts';
import { closedLoop, percentile } from './timing.ts';

export async function runOid4vciBenchmark(options: {
  database: BenchDatabase;
  duration: number;
  connections: number[];
}): Promise<{ table: string; peakRssMiB: number }> {
  const issuer = await startTestIssuer();
  const caFile = path.join(tmpdir(), `coffer-bench-issuer-${process.pid}.pem`);
  await writeFile(caFile, issuer.tlsCaPem);
  // A separate process trusts the issuer's TLS certificate the standard way.
  const server = await startBenchServer(options.database, {
    ALLOW_PRIVATE_TARGETS: 'true',
    NODE_EXTRA_CA_CERTS: caFile,
    LOGIN_RATE_LIMIT: '0',
  });
  try {
    const account = privateKeyToAccount(generatePrivateKey());
    await withServerState(server, async (state) => {
      const rp = await createRelyingParty(state);
      await logInWithWallet(state.users, rp.client_id, account.address, 1);
    });
    const offerPath = async () => {
      const { byReferenceQuery } = await issuer.createOffer({
        configurationIds: ['pid-sd-jwt'],
        grant: 'pre-authorized',
      });
      return `/v1/oid4vci/offer?${byReferenceQuery}`;
    };

    // The person logs in once inside an issuance; the session cookie then skips the log-in.
    const start = await fetch(server.url + (await offerPath()), { redirect: 'manual' });
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

    async function roundTrip(): Promise<void> {
      const opened = await fetch(server.url + (await offerPath()), {
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
      const answer = (await decided.json()) as { received?: unknown[] };
      if (decided.status !== 200 || answer.received?.length !== 1) {
        throw new Error(`approve: ${decided.status} ${JSON.stringify(answer).slice(0, 300)}`);
      }
    }

    for (let i = 0; i < 5; i++) await roundTrip();
    const rows: string[] = [];
    for (const connections of options.connections) {
      const { latencies, failures } = await closedLoop(roundTrip, connections, options.duration);
      rows.push(
        `| OpenID4VCI round trip dc+sd-jwt (offer by reference, pre-authorized, nonce, proof, notification) | ${options.database} | ${connections} | ${(latencies.length / options.duration).toFixed(1)} | ${percentile(latencies, 0.5).toFixed(1)} | ${percentile(latencies, 0.99).toFixed(1)} | ${latencies.length} | ${failures} |`,
      );
      console.error(`done: OpenID4VCI round trip ${options.database} c=${connections}`);
    }
    return {
      table: [
        '| scenario | db | concurrent | round trips/s | p50 ms | p99 ms | round trips | failures |',
        '| --- | --- | --- | --- | --- | --- | --- | --- |',
        ...rows,
      ].join('\n'),
      peakRssMiB: await server.peakRssMiB(),
    };
  } finally {
    await server.stop();
    await issuer.close();
    await rm(caFile, { force: true });
  }
}
