import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { fastBbs } from '../../src/bbs/index.ts';
import { createClient } from '../../src/clients/client-admin.ts';
import { openDatabase } from '../../src/db/database.ts';
import { registerContext } from '../../src/formats/ldp-vc/contexts/context-admin.ts';
import { BENCH_CONTEXT, BENCH_CONTEXT_URL, createBenchIssuer } from '../helpers/credential-factory.ts';
import { createTestDatabase, DATABASE_KINDS } from '../helpers/databases.ts';
import { processEnv, startServerProcess } from '../helpers/server-process.ts';
import { signSiwe } from '../oidc/flow-helpers.ts';

/**
 * The soak (issue 7, `npm run test:soak`): a bounded mixed workload against a server process on
 * 127.0.0.1 — people logging in with Sign-In with Ethereum, code exchange, userinfo, an issuer
 * storing credentials for them, listing, presentations — for SOAK_SECONDS (default 60) with
 * SOAK_USERS concurrent people (default 8). Zero errors and zero 5xx; RSS at the end within
 * bounds of RSS after warm-up.
 */
const SECONDS = Number(process.env['SOAK_SECONDS'] ?? '60');
const PEOPLE = Number(process.env['SOAK_USERS'] ?? '8');
const REDIRECT_URI = 'https://rp.soak.example/cb';

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

const kinds = process.env['SOAK_DATABASES'] ? process.env['SOAK_DATABASES'].split(',') : DATABASE_KINDS;
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

for (const kind of kinds as Array<'sqlite' | 'postgres'>) {
  test(`mixed load for ${SECONDS} s on ${kind}: no errors, no 5xx, memory flat`, {
    timeout: (SECONDS + 180) * 1000,
  }, async () => {
    const database = await createTestDatabase(kind);
    cleanups.push(() => database.drop());
    // Every person of the soak comes from 127.0.0.1; the per-address log-in limit would stop them.
    // The heap is capped as an operator would cap it. Uncapped on a 24 GiB machine, V8 lets the old
    // space grow for minutes before collecting it (RSS rose ~2 MiB/s with ~60 MB live), which
    // looks like a leak and hides one; capped, a real leak fills the cap and fails the run.
    const env = await processEnv(database, {
      LOGIN_RATE_LIMIT: '0',
      NODE_OPTIONS: '--max-old-space-size=384',
    });
    const server = await startServerProcess(env);
    cleanups.push(() => server.kill('SIGTERM'));
    const handle = openDatabase({
      databaseUrl: database.databaseUrl,
      dataDir: database.dataDir,
      poolSize: 1,
    });
    cleanups.push(() => handle.close());
    const rp = await createClient(handle.db, { name: 'Soak RP', redirectUris: [REDIRECT_URI] });
    const issuerClient = await createClient(handle.db, { name: 'Soak issuer', master: true });
    await registerContext(handle.db, BENCH_CONTEXT_URL, JSON.stringify(BENCH_CONTEXT));
    const issuer = await createBenchIssuer(fastBbs);

    const counts = new Map<string, number>();
    const failures: string[] = [];
    const count = (label: string, status: number, ok: boolean, text = '') => {
      counts.set(label, (counts.get(label) ?? 0) + 1);
      if (!ok || status >= 500) failures.push(`${label}: ${status} ${text.slice(0, 200)}`);
    };
    const call = async (label: string, url: string, init: RequestInit = {}, okStatus = [200, 201]) => {
      const response = await fetch(server.url + url, { redirect: 'manual', ...init });
      const text = await response.text();
      count(label, response.status, okStatus.includes(response.status), text);
      return {
        response,
        body: text
          ? (() => {
              try {
                return JSON.parse(text);
              } catch {
                return text;
              }
            })()
          : undefined,
      };
    };

    /** One person's visit: log in, exchange, userinfo, receive a credential, list, present. */
    async function visit(account: ReturnType<typeof privateKeyToAccount>) {
      const authorize = await call(
        'authorize',
        `/v2/openidc/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: String(rp.client_id),
          redirect_uri: REDIRECT_URI,
          scope: 'openid',
          state: 's',
          nonce: 'n',
        })}`,
        {},
        [303],
      );
      const interaction = authorize.response.headers.get('location')!;
      const view = await call('interaction', interaction, { headers: { accept: 'application/json' } });
      const { message, signature } = await signSiwe(account, view.body.siwe);
      const login = await call('login', `${interaction}/login/wallet`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message, signature }),
      });
      const code = new URL(login.body.redirect_to).searchParams.get('code')!;
      const tokens = await call('token', '/v2/openidc/token', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'authorization_code',
          code,
          client_id: String(rp.client_id),
          client_secret: rp.client_secret,
          redirect_uri: REDIRECT_URI,
        }),
      });
      const bearer = { authorization: `Bearer ${tokens.body.access_token}` };
      const info = await call('userinfo', '/v2/openidc/user', { headers: bearer });
      const vc = await issuer.issue(info.body.did_wallet_address, 10);
      await call('store', '/v1/vc/issuer/store', {
        method: 'POST',
        headers: { 'x-api-token': issuerClient.api_token, 'content-type': 'application/json' },
        body: JSON.stringify({ vc }),
      });
      await call('list', '/v1/openidc/credentials', { headers: bearer });
      await call('proof', '/v1/openidc/credentials/proof', {
        method: 'POST',
        headers: { ...bearer, 'content-type': 'application/json' },
        body: JSON.stringify({
          vcIdFields: { [vc['id'] as string]: ['/credentialSubject/claim_0'] },
          options: { presentationHeader: 'soak' },
        }),
      });
    }

    const accounts = Array.from({ length: PEOPLE * 4 }, () => privateKeyToAccount(generatePrivateKey()));
    const deadline = Date.now() + SECONDS * 1000;
    const warmupEnd = Date.now() + Math.min(10, SECONDS / 4) * 1000;
    let rssAfterWarmup = 0;
    const peopleLoops = Array.from({ length: PEOPLE }, async (_, lane) => {
      let n = lane;
      while (Date.now() < deadline) {
        try {
          await visit(accounts[n++ % accounts.length]!);
        } catch (error) {
          failures.push(`visit: ${(error as Error).message}`);
        }
      }
    });
    const samples: number[] = [];
    const sampler = setInterval(() => {
      rssMiB(server.child.pid!).then(
        (mib) => samples.push(Math.round(mib)),
        () => {},
      );
    }, 5000);
    await new Promise((r) => setTimeout(r, warmupEnd - Date.now()));
    rssAfterWarmup = await rssMiB(server.child.pid!);
    await Promise.all(peopleLoops);
    clearInterval(sampler);
    await new Promise((r) => setTimeout(r, 2000));
    const rssAtEnd = await rssMiB(server.child.pid!);
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    console.log(
      `soak on ${kind}: ${total} requests in ${SECONDS} s (${Object.fromEntries(counts) && JSON.stringify(Object.fromEntries(counts))}), ` +
        `${failures.length} failures, RSS ${rssAfterWarmup.toFixed(0)} MiB after warm-up → ${rssAtEnd.toFixed(0)} MiB at the end (every 5 s: ${samples.join(', ')})`,
    );
    assert.deepEqual(failures.slice(0, 5), [], `${failures.length} failures`);
    assert.ok((counts.get('proof') ?? 0) > 0, 'the workload ran');
    // Flat: over the second half of the run RSS grows by at most 10 % (plus page noise); a leak
    // keeps growing, a heap settling into its working size does not.
    const halfway = samples[Math.floor(samples.length / 2)] ?? rssAfterWarmup;
    assert.ok(
      rssAtEnd <= halfway * 1.1 + 16,
      `memory kept growing: ${halfway} MiB halfway, ${rssAtEnd.toFixed(0)} MiB at the end (${samples.join(', ')})`,
    );
  });
}
