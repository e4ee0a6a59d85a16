import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from './config.ts';

export const MASTER_KEY_FILE = 'master.key';

export interface LoadedMasterKey {
  key: Buffer;
  /** True when the key was generated just now; the caller warns. */
  generated: boolean;
  file: string | undefined;
}

/**
 * The master key from MASTER_KEY, or from DATA_DIR/master.key, generated there on first start.
 * Generation only happens outside production (readConfig refuses production without MASTER_KEY).
 */
export async function loadMasterKey(
  configured: string | undefined,
  dataDir: string,
): Promise<LoadedMasterKey> {
  if (configured) return { key: Buffer.from(configured, 'base64'), generated: false, file: undefined };
  const file = path.join(dataDir, MASTER_KEY_FILE);
  try {
    const stored = (await readFile(file, 'utf8')).trim();
    const key = Buffer.from(stored, 'base64');
    if (key.length !== 32) throw new ConfigError('MASTER_KEY', `${file} does not hold 32 bytes in base64`);
    return { key, generated: false, file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true });
  const key = randomBytes(32);
  // 'wx' fails if another process created it meanwhile; then read theirs so both agree.
  try {
    await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadMasterKey(undefined, dataDir);
    throw error;
  }
  return { key, generated: true, file };
}
