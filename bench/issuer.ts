/**
 * Coffer's credential issuer (issue 31), per format, beside a bare issuer built directly on the
 * issuer side of @openid4vc/openid4vci with its state in memory (bench/issuer-peer.ts, its own
 * process): one issuance is the tenant creating an offer with a person's claims, the wallet
 * fetching it by reference, exchanging the pre-authorized code for a token, getting a c_nonce and
 * asking for the credential with one jwt proof. Every issuance carries distinct claims for a
 * distinct offer; the wallet's proof keys come from a pool of 64. Issuances per second, latency and
 * each server's CPU per issuance at each concurrency; the wallet (plain fetch and jose) runs in
 * this process and is not counted as either server's.
 *
 * `npm run bench -- --only=issuer [--db=sqlite --duration=8 --connections=1,10]`;
 * BENCH_ISSUER_FORMATS=dc+sd-jwt,mso_mdoc,ldp_vc picks formats, BENCH_ISSUER_PEER=0 skips the
 * bare issuer, BENCH_CPU_PROFILE=DIR profiles both servers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { PEER_DOCTYPE_NAME, PEER_ISSUER_ID } from './issuer-peer-names.ts';
import { type BenchDatabase, startBenchServer } from './server.ts';
import { measureRoundTrips, type RoundTripFigures } from './timing.ts';

// biome-ignore lint/suspicious/noExplicitAny: responses are arbitrary JSON
type Json = any;

const FORMATS = ['dc+sd-jwt', 'mso_mdoc', 'ldp_vc'] as const;
export type Format = (typeof FORMATS)[number];
const TARGET_MS: Record<Format, number> = { 'dc+sd-jwt': 3, mso_mdoc: 5, ldp_vc: 10 };
const CLAIMS = 10;
/** Untimed issuances per format and issuer before the timed runs. */
export const WARM_UP_ISSUANCES = 600;
/** Issuances in the per-step CPU breakdown (bench/issuer.ts stepBreakdown). */
const STEP_ISSUANCES = 1500;
const STEP_SECONDS = 12;
const MDOC_NAMESPACE = 'org.example.bench.1';

/** A person's claims, different for every issuance, in the shape each format takes them. */
export function claimsOf(format: Format, n: number): Record<string, unknown> {
  const flat = Object.fromEntries(
    Array.from({ length: CLAIMS }, (_, i) => [`claim_${i}`, `person ${n} value ${i}`]),
  );
  return format === 'mso_mdoc' ? { [MDOC_NAMESPACE]: flat } : flat;
}

export interface Target {
  name: string;
  cpuMicros(): Promise<number>;
  /** Creates an offer for `claims` as the tenant; answers the offer URI (fetchable from here). */
  createOffer(format: Format, claims: Record<string, unknown>): Promise<string>;
  /** Maps a URL the server published to one this process can fetch. */
  local(url: string): string;
  tokenUrl: string;
  configurationId(format: Format): string;
}

async function tenantPost(url: string, headers: Record<string, string>, body: unknown): Promise<Json> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  if (response.status !== 201) throw new Error(`offer: ${response.status} ${await response.text()}`);
  return response.json();
}

export async function cofferTarget(server: Awaited<ReturnType<typeof startBenchServer>>): Promise<Target> {
  const created = (await server.coffer('client', 'create', '--name', 'Bench university', '--master')) as {
    client_id: number;
    api_token: string;
  };
  await server.coffer('issuer', 'enable', '--client', String(created.client_id));
  const api = { 'x-api-token': created.api_token };
  const claims = Array.from({ length: CLAIMS }, (_, i) => ({ path: [`claim_${i}`] }));
  const configurations: Record<Format, unknown> = {
    'dc+sd-jwt': { format: 'dc+sd-jwt', vct: 'https://bench.example/person', claims },
    mso_mdoc: {
      format: 'mso_mdoc',
      doctype: PEER_DOCTYPE_NAME,
      claims: claims.map((c) => ({ path: [MDOC_NAMESPACE, ...c.path] })),
    },
    ldp_vc: {
      format: 'ldp_vc',
      type: 'PersonCredential',
      claims: claims.map((c) => ({ path: ['credentialSubject', ...c.path] })),
    },
  };
  for (const format of FORMATS) {
    const put = await fetch(`${server.url}/v1/issuer/configurations/${configId(format)}`, {
      method: 'PUT',
      headers: { ...api, 'content-type': 'application/json' },
      body: JSON.stringify(configurations[format]),
    });
    if (put.status !== 201 && put.status !== 200)
      throw new Error(`configuration ${format}: ${put.status} ${await put.text()}`);
  }
  const origin = server.url;
  return {
    name: 'Coffer',
    cpuMicros: () => server.cpuMicros(),
    async createOffer(format, claims) {
      const { data } = await tenantPost(`${server.url}/v1/issuer/offers`, api, {
        configuration_ids: [configId(format)],
        // W3C claims are given as the credential addresses them (the bare issuer takes them flat).
        claims: { [configId(format)]: format === 'ldp_vc' ? { credentialSubject: claims } : claims },
      });
      return data.credential_offer_uri;
    },
    local: (url) => {
      const u = new URL(url);
      return `${origin}${u.pathname}${u.search}`;
    },
    tokenUrl: `${server.url}/v2/openidc/token`,
    configurationId: configId,
  };
}

const configId = (format: Format) =>
  `person-${format === 'dc+sd-jwt' ? 'sd-jwt' : format === 'mso_mdoc' ? 'mdoc' : 'ldp'}`;

async function startPeer(): Promise<{ target: Target; stop(): Promise<void> }> {
  const profile = process.env['BENCH_CPU_PROFILE']
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env['BENCH_CPU_PROFILE']}`]
    : [];
  const child: ChildProcess = spawn(
    process.execPath,
    [...profile, path.join(import.meta.dirname, 'issuer-peer.ts')],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', () => reject(new Error('the bare issuer exited')));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = line.match(/^listening (\d+)$/);
      if (match) resolve(Number(match[1]));
    });
  });
  const origin = `http://127.0.0.1:${port}`;
  const pid = child.pid!;
  return {
    target: {
      name: 'bare @openid4vc (in memory)',
      async cpuMicros() {
        const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return ((Number(fields[11]) + Number(fields[12])) / 100) * 1e6;
      },
      async createOffer(format, claims) {
        const body = await tenantPost(`${origin}/offers`, {}, { configuration_id: configId(format), claims });
        return body.credential_offer_uri;
      },
      local: (url) => `${origin}${url.slice(PEER_ISSUER_ID.length)}`,
      tokenUrl: `${origin}/token`,
      configurationId: configId,
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

export type ProofKey = Awaited<ReturnType<typeof proofKeys>>[number];

export async function proofKeys(count: number) {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const keys = await generateKeyPair('ES256', { extractable: true });
      return { privateKey: keys.privateKey, jwk: (await exportJWK(keys.publicKey)) as JWK };
    }),
  );
}

/** Called between the steps of an issuance (the per-step breakdown); a no-op in the timed runs. */
type StepMark = (step: IssuanceStep) => Promise<void>;
const noMark: StepMark = async () => {};

/**
 * One pre-authorized issuance as a wallet does it: the tenant's offer for person `n`, the offer
 * fetched by reference, the code exchanged, a c_nonce, the credential asked for with one jwt proof.
 */
export async function preAuthorizedIssuance(
  target: Target,
  format: Format,
  key: ProofKey,
  n: number,
  mark: StepMark = noMark,
): Promise<void> {
  await mark('start');
  const offerUri = await target.createOffer(format, claimsOf(format, n));
  await mark('offer created');
  const offer = (await (await fetch(target.local(offerUri))).json()) as Json;
  await mark('offer fetched');
  const code = offer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code'];
  const token = await fetch(target.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
      'pre-authorized_code': code,
    }).toString(),
  });
  if (token.status !== 200) throw new Error(`token: ${token.status} ${await token.text()}`);
  const { access_token: accessToken } = (await token.json()) as Json;
  await mark('token');
  const issuerId = offer.credential_issuer as string;
  const nonce = await fetch(target.local(`${issuerId}/nonce`), { method: 'POST' });
  const { c_nonce: cNonce } = (await nonce.json()) as Json;
  await mark('nonce');
  const proof = await new SignJWT({ aud: issuerId, nonce: cNonce, iat: Math.floor(Date.now() / 1000) })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: key.jwk })
    .sign(key.privateKey);
  const credential = await fetch(target.local(`${issuerId}/credential`), {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      credential_configuration_id: target.configurationId(format),
      proofs: { jwt: [proof] },
    }),
  });
  const body = (await credential.json()) as Json;
  if (credential.status !== 200 || body.credentials?.length !== 1)
    throw new Error(`credential: ${credential.status} ${JSON.stringify(body).slice(0, 300)}`);
  await mark('credential');
}

type Row = RoundTripFigures & { target: string; format: Format };
const STEPS = ['offer created', 'offer fetched', 'token', 'nonce', 'credential'] as const;
export type IssuanceStep = 'start' | (typeof STEPS)[number];
type StepRow = {
  target: string;
  format: Format;
  perStep: Record<(typeof STEPS)[number], number>;
  count: number;
};

export async function runIssuerBenchmark(options: {
  database: BenchDatabase;
  duration: number;
  connections: number[];
  /** The server's environment beyond the bench's own (tracing on, for instance). */
  extraEnv?: Record<string, string>;
  /** The per-step CPU breakdown after each timed run (default on). */
  steps?: boolean;
}): Promise<{ table: string; peakRssMiB: number; rows: Row[] }> {
  const only = process.env['BENCH_ISSUER_FORMATS']?.split(',');
  const formats = FORMATS.filter((f) => only === undefined || only.includes(f));
  const keys = await proofKeys(64);
  const server = await startBenchServer(options.database, options.extraEnv);
  const peer = process.env['BENCH_ISSUER_PEER'] === '0' ? undefined : await startPeer();

  let counter = 0;
  const issuance = (target: Target, format: Format, mark?: StepMark) =>
    preAuthorizedIssuance(target, format, keys[counter % keys.length]!, counter++, mark);

  /**
   * Server CPU per step of an issuance, one issuance at a time: the CPU counter is read between
   * steps while the server is idle, so each step's share is its own. /proc samples CPU in 10 ms
   * ticks, so a step's figure is a statistical estimate: over 1,500 issuances its standard error
   * is about 0.05 ms. Slow issuers (the stock bbs-2023 stack) stop after STEP_SECONDS.
   */
  async function stepBreakdown(target: Target, format: Format, most: number): Promise<StepRow> {
    const spent = new Map<IssuanceStep, number>();
    let last = 0;
    const mark: StepMark = async (step) => {
      const now = await target.cpuMicros();
      if (step !== 'start') spent.set(step, (spent.get(step) ?? 0) + now - last);
      last = now;
    };
    const until = Date.now() + STEP_SECONDS * 1000;
    let count = 0;
    while (count < most && Date.now() < until) {
      await issuance(target, format, mark);
      count++;
    }
    const perStep = Object.fromEntries(
      STEPS.map((step) => [step, (spent.get(step) ?? 0) / count / 1000]),
    ) as Record<Exclude<IssuanceStep, 'start'>, number>;
    return { target: target.name, format, perStep, count };
  }

  try {
    const targets = [await cofferTarget(server), ...(peer ? [peer.target] : [])];
    const rows: Row[] = [];
    const steps: StepRow[] = [];
    for (const format of formats) {
      for (const target of targets) {
        // Untimed: 600 issuances, 10 at a time, so that the code each takes is compiled and warm:
        // after only 50, V8's optimizing compiler was still at work during the first timed run and
        // its threads' CPU counted as the server's (0.5 ms more per issuance at one connection).
        await Promise.all(
          Array.from({ length: 10 }, async () => {
            for (let i = 0; i < WARM_UP_ISSUANCES / 10; i++) await issuance(target, format);
          }),
        );
        for (const connections of options.connections) {
          rows.push({
            target: target.name,
            format,
            ...(await measureRoundTrips(
              target,
              () => issuance(target, format),
              connections,
              options.duration,
            )),
          });
          console.error(`done: issuer ${target.name} ${format} ${options.database} c=${connections}`);
        }
        if (options.steps !== false) steps.push(await stepBreakdown(target, format, STEP_ISSUANCES));
      }
    }
    return {
      table: [
        '| issuer | format | db | concurrent | issuances/s | p50 ms | p99 ms | issuances | failures | server CPU ms/issuance | target |',
        '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
        ...rows.map(
          (r) =>
            `| ${r.target} | ${r.format} | ${r.target === 'Coffer' ? options.database : 'memory'} | ${r.connections} | ${r.perSecond.toFixed(1)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.roundTrips} | ${r.failures} | ${r.cpuMs.toFixed(2)} | ≤ ${TARGET_MS[r.format]} |`,
        ),
        '',
        `Server CPU ms per step, issuances one at a time (at most ${STEP_ISSUANCES} or ${STEP_SECONDS} s):`,
        '',
        `| issuer | format | issuances | ${STEPS.join(' | ')} | all |`,
        `| --- | --- | --- |${STEPS.map(() => ' --- |').join('')} --- |`,
        ...steps.map(
          (r) =>
            `| ${r.target} | ${r.format} | ${r.count} | ${STEPS.map((step) => r.perStep[step].toFixed(2)).join(' | ')} | ${STEPS.reduce((sum, step) => sum + r.perStep[step], 0).toFixed(2)} |`,
        ),
      ].join('\n'),
      peakRssMiB: await server.peakRssMiB(),
      rows,
    };
  } finally {
    await server.stop();
    await peer?.stop();
  }
}
