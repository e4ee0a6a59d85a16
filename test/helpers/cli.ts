import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestServer } from './server.ts';

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, '../../bin/coffer.js');

/** Runs the real `coffer` executable with the server's configuration, as an operator would. */
export async function coffer(
  server: Pick<TestServer, 'env'>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    // A CLI that hangs fails its test in two minutes instead of holding the whole run.
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...server.env },
      timeout: 120_000,
      killSignal: 'SIGKILL',
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
