import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import path from 'node:path';
import { freePort } from '../test/helpers/free-port.ts';
import { measure } from './load.ts';

/**
 * Issue 19's figures, side by side in one run: refresh exchanges per second and DPoP-bound
 * userinfo per second, Coffer (bench/anchor/coffer-target.ts, the real app) beside oidc-provider
 * (bench/anchor/oidc-provider-peer.mjs, the shared anchor's configuration plus refresh rotation
 * and DPoP with required nonces) on its memory and its SQLite adapter. All run as child processes
 * on 127.0.0.1; every refresh uses a fresh token minted beforehand, every userinfo call a fresh
 * DPoP proof signed in the load generator (ES256, with the latest DPoP-Nonce the server handed out).
 */
const CLIENT_ID = 'anchor-client';
const CLIENT_SECRET = 'anchor-client-secret-0123456789abcdef0123456789abcdef';
const root = path.resolve(import.meta.dirname, '..');
/** Floor of the refresh rate minted for before any has been measured; 1.5× is added on top. */
const EXPECTED_REFRESH_RATE = 4000;

interface Target {
  name: string;
  isPeer: boolean;
  url: string;
  tokenPath: string;
  userinfoPath: string;
  /** Query of the mint route for a refresh token whose refresh yields a userinfo token. */
  userinfoMint: string;
  process: ChildProcess;
  /** Best refresh rate seen so far, to mint enough for the next phase. */
  refreshRate: number;
}

interface ProofKey {
  proof(htm: string, htu: string, extra: Record<string, string>): string;
}

function proofKey(): ProofKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const header = b64(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk }));
  return {
    // Synchronous, so autocannon's setupRequest can make one per request.
    proof(htm, htu, extra) {
      const payload = b64(
        JSON.stringify({
          jti: randomBytes(12).toString('base64url'),
          htm,
          htu,
          iat: Math.floor(Date.now() / 1000),
          ...extra,
        }),
      );
      return `${header}.${payload}.${es256(privateKey, `${header}.${payload}`)}`;
    },
  };
}
const b64 = (text: string) => Buffer.from(text).toString('base64url');
const es256 = (key: KeyObject, input: string) =>
  sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

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

async function startCoffer(databaseUrl: string | undefined): Promise<Target> {
  const started = await startProcess('coffer', 'bench/anchor/coffer-target.ts', {
    ...(databaseUrl ? { BENCH_DATABASE_URL: databaseUrl } : {}),
  });
  return {
    name: databaseUrl ? 'coffer (PostgreSQL)' : 'coffer (SQLite)',
    isPeer: false,
    ...started,
    tokenPath: '/v2/openidc/token',
    userinfoPath: '/v2/openidc/user',
    userinfoMint: '',
    refreshRate: 0,
  };
}

async function startPeer(adapter: 'memory' | 'sqlite'): Promise<Target> {
  const started = await startProcess(`oidc-provider ${adapter}`, 'bench/anchor/oidc-provider-peer.mjs', {
    OIDC_ADAPTER: adapter,
  });
  return {
    name: `oidc-provider (${adapter})`,
    isPeer: true,
    ...started,
    tokenPath: '/token',
    userinfoPath: '/me',
    // Its userinfo takes only its opaque tokens, issued for refresh tokens without a resource.
    userinfoMint: '&userinfo=1',
    refreshRate: 0,
  };
}

async function mint(target: Target, n: number, query = ''): Promise<string[]> {
  const tokens: string[] = [];
  for (let left = n; left > 0; left -= 20_000) {
    const response = await fetch(`${target.url}/__bench/mint-refresh?n=${Math.min(left, 20_000)}${query}`, {
      method: 'POST',
    });
    if (!response.ok) throw new Error(`${target.name}: mint answered ${response.status}`);
    tokens.push(...((await response.json()) as { refresh_tokens: string[] }).refresh_tokens);
  }
  return tokens;
}

const refreshBody = (refreshToken: string) =>
  new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  }).toString();

function refreshRequest(target: Target, refreshToken: string, dpop?: string) {
  return fetch(target.url + target.tokenPath, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(dpop ? { dpop } : {}) },
    body: refreshBody(refreshToken),
  });
}

/** The anchor's kind of sanity check: a refresh works and its replay is refused. */
async function checkRefresh(target: Target): Promise<void> {
  const [token] = await mint(target, 1);
  const first = await refreshRequest(target, token!);
  const json = (await first.json()) as Record<string, string>;
  if (first.status !== 200 || !json['access_token'] || !json['refresh_token'] || !json['id_token'])
    throw new Error(`${target.name}: refresh answered ${first.status} ${JSON.stringify(json)}`);
  const replay = await refreshRequest(target, token!);
  if (replay.status !== 400) throw new Error(`${target.name}: a replayed refresh answered ${replay.status}`);
}

/**
 * One DPoP-bound access token, the way a client gets it: a refresh with a proof, answered
 * use_dpop_nonce first, then again with the nonce. Then one userinfo call by hand must give 200.
 */
async function dpopSetup(target: Target, key: ProofKey): Promise<{ token: string; nonce: string }> {
  const [refreshToken] = await mint(target, 1, target.userinfoMint);
  const tokenUrl = target.url + target.tokenPath;
  const first = await refreshRequest(target, refreshToken!, key.proof('POST', tokenUrl, {}));
  let nonce = first.headers.get('dpop-nonce');
  const challenge = (await first.json()) as { error?: string };
  if (first.status !== 400 || challenge.error !== 'use_dpop_nonce' || !nonce)
    throw new Error(
      `${target.name}: expected use_dpop_nonce, got ${first.status} ${JSON.stringify(challenge)}`,
    );
  const answer = await refreshRequest(target, refreshToken!, key.proof('POST', tokenUrl, { nonce }));
  const json = (await answer.json()) as { access_token: string; token_type: string };
  if (answer.status !== 200 || json.token_type !== 'DPoP')
    throw new Error(`${target.name}: DPoP refresh answered ${answer.status} ${JSON.stringify(json)}`);
  nonce = answer.headers.get('dpop-nonce') ?? nonce;
  const htu = target.url + target.userinfoPath;
  const probe = await fetch(htu, {
    headers: {
      authorization: `DPoP ${json.access_token}`,
      dpop: key.proof('GET', htu, { ath: ath(json.access_token), nonce }),
    },
  });
  const claims = await probe.text();
  if (probe.status !== 200 || !JSON.parse(claims).sub)
    throw new Error(`${target.name}: DPoP userinfo answered ${probe.status} ${claims}`);
  return { token: json.access_token, nonce: probe.headers.get('dpop-nonce') ?? nonce };
}

interface Row {
  scenario: 'refresh' | 'userinfo';
  target: Target;
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Refresh: requests past the minted tokens (they reuse spent ones). Userinfo: use_dpop_nonce 401s. */
  note: number;
}

async function refreshPhase(target: Target, connections: number, duration: number): Promise<Row> {
  const count = Math.ceil(duration * Math.max(target.refreshRate, EXPECTED_REFRESH_RATE) * 1.5);
  const tokens = await mint(target, count);
  let next = 0;
  const r = await measure({
    url: target.url + target.tokenPath,
    method: 'POST',
    connections,
    duration,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    setupRequest: (request) => {
      request.body = refreshBody(tokens[next++ % tokens.length]!);
      return request;
    },
  });
  target.refreshRate = Math.max(target.refreshRate, r.requestsPerSecond);
  const { requestsPerSecond: rps, p50, p99, non2xx } = r;
  return { scenario: 'refresh', target, connections, rps, p50, p99, non2xx, note: Math.max(0, next - count) };
}

async function userinfoPhase(
  target: Target,
  key: ProofKey,
  connections: number,
  duration: number,
): Promise<Row> {
  const bound = await dpopSetup(target, key);
  let nonce = bound.nonce;
  let nonceRefusals = 0;
  const htu = target.url + target.userinfoPath;
  const tokenHash = ath(bound.token);
  const r = await measure({
    url: htu,
    connections,
    duration,
    setupRequest: (request) => {
      request.headers = {
        authorization: `DPoP ${bound.token}`,
        dpop: key.proof('GET', htu, { ath: tokenHash, nonce }),
      };
      return request;
    },
    // Nonces rotate (Coffer's every 5 min, oidc-provider's every minute); a proof with a stale one
    // is a 401 use_dpop_nonce, kept in non-2xx and counted apart.
    onResponse: (status, headers) => {
      const fresh = headers['dpop-nonce'];
      if (fresh) nonce = fresh;
      if (status === 401 && headers['www-authenticate']?.includes('use_dpop_nonce')) nonceRefusals++;
    },
  });
  const { requestsPerSecond: rps, p50, p99, non2xx } = r;
  return { scenario: 'userinfo', target, connections, rps, p50, p99, non2xx, note: nonceRefusals };
}

export async function runRefreshDpopBenchmark(options: {
  databaseUrls: Array<string | undefined>;
  duration: number;
  connections: number[];
  warmup: number;
}): Promise<string> {
  const { duration, connections, warmup } = options;
  const key = proofKey();
  const rows: Row[] = [];
  const targets: Target[] = [];
  const stop = () => {
    for (const target of targets) target.process.kill('SIGTERM');
  };
  // A hard bound on the whole run: start-up, minting and checks get a minute per phase.
  const phases = 2 * (2 + options.databaseUrls.length) * (connections.length + (warmup > 0 ? 1 : 0));
  const limit = setTimeout(
    () => {
      console.error('refresh-dpop: over its time limit, stopping');
      stop();
      process.exit(2);
    },
    (300 + phases * (duration + 60)) * 1000,
  );
  limit.unref();
  try {
    targets.push(await startPeer('memory'), await startPeer('sqlite'));
    for (const databaseUrl of options.databaseUrls) targets.push(await startCoffer(databaseUrl));
    for (const target of targets) await checkRefresh(target);
    // Not reported: lets each server's JIT settle and measures the rate to mint for.
    if (warmup > 0)
      for (const target of targets) {
        await refreshPhase(target, 10, warmup);
        await userinfoPhase(target, key, 10, warmup);
      }
    // Interleaved per connection count, so the machine's drift hits every target alike.
    for (const n of connections) {
      for (const target of targets) rows.push(await refreshPhase(target, n, duration));
      for (const target of targets) rows.push(await userinfoPhase(target, key, n, duration));
      console.error(`refresh-dpop: done at ${n} connections`);
    }
  } finally {
    clearTimeout(limit);
    stop();
  }
  return [
    table(rows, 'refresh', 'refresh exchanges/s', 'minted ran out'),
    table(rows, 'userinfo', 'DPoP-bound userinfo/s', 'use_dpop_nonce'),
  ].join('\n\n');
}

function table(rows: Row[], scenario: Row['scenario'], title: string, noteName: string): string {
  const mine = rows.filter((r) => r.scenario === scenario);
  const peers = [...new Set(mine.filter((r) => r.target.isPeer).map((r) => r.target))];
  const ratio = (row: Row, peer: Target) => {
    const other = mine.find((r) => r.target === peer && r.connections === row.connections);
    return row.target.isPeer || !other ? '' : `${(row.rps / other.rps).toFixed(2)}×`;
  };
  const header = [
    'target',
    'conn',
    'req/s',
    'p50 ms',
    'p99 ms',
    `non-2xx (${noteName})`,
    ...peers.map((p) => `÷ ${p.name}`),
  ];
  const lines = mine.map((row) => [
    row.target.name,
    String(row.connections),
    row.rps.toFixed(0),
    row.p50.toFixed(1),
    row.p99.toFixed(1),
    `${row.non2xx} (${row.note})`,
    ...peers.map((p) => ratio(row, p)),
  ]);
  return [
    `${title}`,
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...lines.map((cells) => `| ${cells.join(' | ')} |`),
  ].join('\n');
}
