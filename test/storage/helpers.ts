import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';

export const projectRoot = path.resolve(import.meta.dirname, '../..');

/** A fresh directory under the system temp dir, removed when the test ends. */
export async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'coffer-storage-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Every regular file below `dir`, with its bytes. */
export async function filesUnder(dir: string): Promise<Array<{ file: string; bytes: Buffer }>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
  return Promise.all(files.map(async (file) => ({ file, bytes: await readFile(file) })));
}

export const MASTER_KEY = new Uint8Array(32).fill(7);
export const OTHER_MASTER_KEY = new Uint8Array(32).fill(8);

export function profile() {
  return {
    email: 'ada.lovelace@example.org',
    first_name: 'Ada',
    last_name: 'Lovelace-Byron',
    date_of_birth: '1815-12-10',
    country: 'GB',
    mobile_country_code: '+44',
    mobile_number: '7700900123',
    languages: ['en', 'fr'],
    marketing: { email: true, sms: false },
    household_size: 3,
  };
}
