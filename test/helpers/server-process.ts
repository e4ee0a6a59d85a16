import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { TestDatabase } from './databases.ts';
import { freePort } from './free-port.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Coffer as an operator runs it (`node src/main.ts`), in its own process, so it can be killed. */
export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Ends the process with the signal and waits for it to be gone. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** The environment of a server process over a test database (same data and key on every start). */
export async function processEnv(database: TestDatabase, extra: Record<string, string> = {}) {
  const port = await freePort();
  return {
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: database.dataDir,
    MASTER_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
    API_RATE_LIMIT: '0',
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    ...extra,
  } as Record<string, string>;
}

export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, [path.join(ROOT, 'src/main.ts')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${env['PORT']}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {}
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('the Coffer process did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    child,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
