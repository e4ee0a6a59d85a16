import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fixedKeyRing, type MasterKeyRing } from '../keys/master-key-ring.ts';
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

/** Beside master.key: the keys a rotation moved data off, one base64 key a line, read only. */
export const PREVIOUS_MASTER_KEYS_FILE = 'master.key.previous';

export interface LoadedMasterKeyRing {
  ring: MasterKeyRing;
  generated: boolean;
  file: string | undefined;
}

/** Keys of a key file: one base64 key of 32 bytes a line; blank lines and # comments skipped. */
export function parseKeyLines(text: string, where: string): Buffer[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const key = Buffer.from(line, 'base64');
      if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(line) || key.length !== 32) {
        throw new ConfigError('MASTER_KEY', `${where} holds a line that is not 32 bytes in base64`);
      }
      return key;
    });
}

export async function readKeyFile(file: string): Promise<Buffer[]> {
  try {
    return parseKeyLines(await readFile(file, 'utf8'), file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/**
 * The ring a server or the CLI reads with: MASTER_KEY (or DATA_DIR/master.key) writes, and
 * MASTER_KEY_PREVIOUS with DATA_DIR/master.key.previous are read only. Read once at start: a
 * change of keys takes a restart (docs/operations.md, "Master-key rotation").
 */
export async function loadMasterKeyRing(config: {
  masterKey: string | undefined;
  masterKeyPrevious: readonly string[];
  dataDir: string;
}): Promise<LoadedMasterKeyRing> {
  const loaded = await loadMasterKey(config.masterKey, config.dataDir);
  const previous = [
    ...config.masterKeyPrevious.map((key) => Buffer.from(key, 'base64')),
    ...(await readKeyFile(path.join(config.dataDir, PREVIOUS_MASTER_KEYS_FILE))),
  ];
  return { ...loaded, ring: fixedKeyRing(loaded.key, previous) };
}
