import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import path from 'node:path';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { accessTokenHash } from '../src/oidc/dpop.ts';
import { freePort } from '../test/helpers/free-port.ts';
import { measure } from './load.ts';

/**
 * Issue 19's figures, side by side in one run: refresh exchanges per second and DPoP-bound
 * userinfo per second, Coffer (bench/anchor/coffer-target.ts, the real app) beside oidc-provider
 * (bench/anchor/oidc-provider-peer.mjs, the shared anchor's configuration plus refresh rotation
 * and DPoP with required nonces). Both run as child processes on 127.0.0.1; every refresh uses a
 * fresh token minted beforehand, every userinfo call a fresh DPoP proof signed in the load
 * generator (ES256, with the latest DPoP-Nonce either server handed out).
 */
const CLIENT_ID = 'anchor-client';
const CLIENT_SECRET = 'anchor-client-secret-0123456789abcdef0123456789abcdef';
const root = path.resolve(import.meta.dirname, '..');

interface Target {
  name: string;
  url: string;
  tokenPath: string;
  userinfoPath: string;
  process: ChildProcess;
  /** A DPoP-bound access token for the proof key, and the nonce to start with. */
  dpopToken(key: ProofKey): Promise<{ token: string; nonce: string }>;
}

interface ProofKey {
  jwk: JWK;
  jkt: string;
  proof(htm: string, htu: string, extra: Record<string, string>): string;
}

async function proofKey(): Promise<ProofKey> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' }) as JWK;
  const header = Buffer.from(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk })).toString('base64url');
  return {
    jwk,
    jkt: await calculateJwkThumbprint(jwk, 'sha256'),
    // Synchronous, so autocannon's setupRequest can make one per request.
    proof(htm, htu, extra) {
      const payload = Buffer.from(
        JSON.stringify({
          jti: randomBytes(12).toString('base64url'),
          htm,
          htu,
          iat: Math.floor(Date.now() / 1000),
          ...extra,
        }),
      ).toString('base64url');
      const signature = sign('sha256', Buffer.from(`${header}.${payload}`), {
        key: privateKey,
        dsaEncoding: 'ieee-p1363',
      });
      return `${header}.${payload}.${signature.toString('base64url')}`;
    },
  };
}

async function startProcess(name: string, script: string, env: Record<string, string>) {
  const port = await freePort();
  // BENCH_CPU_PROFILE=DIR writes a V8 CPU profile of each server there, as bench/server.ts does.
  const profile = process.env['BENCH_CPU_PROFILE']
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_CPU_PROFILE']}`]
    : [];
  const child = spawn(process.execPath, [...profile, path.join(root, script)], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/__bench/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { url, process: child };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  child.kill('SIGTERM');
  throw new Error(`${name} did not start within 120 s`);
}

const form = (params: Record<string, string>) => new URLSearchParams(params).toString();

async function startCoffer(databaseUrl: string | undefined): Promise<Target> {
  const started = await startProcess('coffer', 'bench/anchor/coffer-target.ts', {
    ...(databaseUrl ? { BENCH_DATABASE_URL: databaseUrl } : {}),
  });
  const tokenPath = '/v2/openidc/token';
  return {
    name: databaseUrl ? 'coffer (PostgreSQL)' : 'coffer (SQLite)',
    ...started,
    tokenPath,
    userinfoPath: '/v2/openidc/user',
    // Coffer's way: a refresh with a DPoP proof, after the nonce round trip.
    async dpopToken(key) {
      const [refreshToken] = await mint(started.url, 1);
      const body = form({
        grant_type: 'refresh_token',
        refresh_token: refreshToken!,
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
      });
      const post = (nonce?: string) =>
        fetch(started.url + tokenPath, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            dpop: key.proof('POST', started.url + tokenPath, nonce ? { nonce } : {}),
          },
          body,
        });
      const first = await post();
      const nonce = first.headers.get('dpop-nonce');
      if (first.status !== 400 || !nonce)
        throw new Error(`coffer: expected use_dpop_nonce, got ${first.status}`);
      const answer = await post(nonce);
      const json = (await answer.json()) as { access_token: string; token_type: string };
      if (json.token_type !== 'DPoP') throw new Error(`coffer: ${JSON.stringify(json)}`);
      return { token: json.access_token, nonce: answer.headers.get('dpop-nonce') ?? nonce };
    },
  };
}

async function startPeer(): Promise<Target> {
  const started = await startProcess('oidc-provider', 'bench/anchor/oidc-provider-peer.mjs', {});
  const userinfoPath = '/me';
  return {
    name: 'oidc-provider (memory)',
    ...started,
    tokenPath: '/token',
    userinfoPath,
    // oidc-provider's userinfo takes only opaque tokens; one is minted bound to the key.
    async dpopToken(key) {
      const minted = await fetch(`${started.url}/__bench/mint-dpop-token?jkt=${key.jkt}`, { method: 'POST' });
      const { access_token: token } = (await minted.json()) as { access_token: string };
      const probe = await fetch(started.url + userinfoPath, {
        headers: {
          authorization: `DPoP ${token}`,
          dpop: key.proof('GET', started.url + userinfoPath, { ath: accessTokenHash(token) }),
        },
      });
      const nonce = probe.headers.get('dpop-nonce');
      if (probe.status !== 401 || !nonce)
        throw new Error(`oidc-provider: expected use_dpop_nonce, got ${probe.status}`);
      return { token, nonce };
    },
  };
}

async function mint(url: string, n: number): Promise<string[]> {
  const tokens: string[] = [];
  for (let left = n; left > 0; left -= 20_000) {
    const response = await fetch(`${url}/__bench/mint-refresh?n=${Math.min(left, 20_000)}`, {
      method: 'POST',
    });
    tokens.push(...((await response.json()) as { refresh_tokens: string[] }).refresh_tokens);
  }
  return tokens;
}

interface Row {
  scenario: string;
  target: string;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function refreshPhase(target: Target, connections: number, duration: number): Promise<Row> {
  // Enough for 6,000/s; a run that used them all would show as non-2xx.
  const tokens = await mint(target.url, Math.ceil(duration * 6000));
  let next = 0;
  const r = await measure({
    url: target.url + target.tokenPath,
    method: 'POST',
    connections,
    duration,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    setupRequest: (request) => {
      request.body = form({
        grant_type: 'refresh_token',
        refresh_token: tokens[next++ % tokens.length]!,
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
      });
      return request;
    },
  });
  return {
    scenario: 'refresh exchange',
    target: target.name,
    connections,
    rps: r.requestsPerSecond,
    p50: r.p50,
    p99: r.p99,
    non2xx: r.non2xx,
  };
}

async function userinfoPhase(
  target: Target,
  key: ProofKey,
  connections: number,
  duration: number,
): Promise<Row> {
  const bound = await target.dpopToken(key);
  let nonce = bound.nonce;
  const htu = target.url + target.userinfoPath;
  const ath = accessTokenHash(bound.token);
  const r = await measure({
    url: htu,
    connections,
    duration,
    setupRequest: (request) => {
      request.headers = { authorization: `DPoP ${bound.token}`, dpop: key.proof('GET', htu, { ath, nonce }) };
      return request;
    },
    onResponse: (_status, headers) => {
      const fresh = headers['dpop-nonce'];
      if (fresh) nonce = fresh;
    },
  });
  return {
    scenario: 'DPoP userinfo',
    target: target.name,
    connections,
    rps: r.requestsPerSecond,
    p50: r.p50,
    p99: r.p99,
    non2xx: r.non2xx,
  };
}

export async function runRefreshDpopBenchmark(options: {
  databaseUrls: Array<string | undefined>;
  duration: number;
  connections: number[];
}): Promise<string> {
  const key = await proofKey();
  const rows: Row[] = [];
  const targets: Target[] = [];
  try {
    targets.push(await startPeer());
    for (const databaseUrl of options.databaseUrls) targets.push(await startCoffer(databaseUrl));
    // Interleaved per connection count, so the machine's drift hits every target alike.
    for (const connections of options.connections) {
      for (const target of targets) rows.push(await refreshPhase(target, connections, options.duration));
      for (const target of targets)
        rows.push(await userinfoPhase(target, key, connections, options.duration));
    }
  } finally {
    for (const target of targets) target.process.kill('SIGTERM');
  }
  const peerOf = (row: Row) =>
    rows.find(
      (r) =>
        r.scenario === row.scenario &&
        r.connections === row.connections &&
        r.target.startsWith('oidc-provider'),
    );
  const lines = [
    '| scenario | target | conn | req/s | p50 ms | p99 ms | non-2xx | × oidc-provider |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((row) => {
      const peer = peerOf(row);
      const ratio = peer && peer !== row ? (row.rps / peer.rps).toFixed(2) : '';
      return `| ${row.scenario} | ${row.target} | ${row.connections} | ${row.rps.toFixed(0)} | ${row.p50.toFixed(1)} | ${row.p99.toFixed(1)} | ${row.non2xx} | ${ratio} |`;
    }),
  ];
  return lines.join('\n');
}
