import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fixedKeyRing, type MasterKeyRing, reloadableKeyRing } from '../keys/master-key-ring.ts';
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

/** How often, at most, a server re-reads its key files on meeting a key id it does not hold. */
const RELOAD_INTERVAL_MS = 10_000;

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

function readKeyFileSync(file: string): Buffer[] {
  try {
    return parseKeyLines(readFileSync(file, 'utf8'), file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/**
 * The ring a server or the CLI reads with: MASTER_KEY (or DATA_DIR/master.key) writes, and
 * MASTER_KEY_PREVIOUS with DATA_DIR/master.key.previous are read only. In the embedded default
 * (no MASTER_KEY) the server re-reads both files, at most every 10 s, when it meets a key id it
 * does not hold: `coffer master-key rotate` installs the new key there while the server runs.
 */
export async function loadMasterKeyRing(
  config: { masterKey: string | undefined; masterKeyPrevious: readonly string[]; dataDir: string },
  now: () => number = Date.now,
): Promise<LoadedMasterKeyRing> {
  const loaded = await loadMasterKey(config.masterKey, config.dataDir);
  const fromEnv = config.masterKeyPrevious.map((key) => Buffer.from(key, 'base64'));
  const previousFile = path.join(config.dataDir, PREVIOUS_MASTER_KEYS_FILE);
  const fromFile = readKeyFileSync(previousFile);
  if (loaded.file === undefined) {
    return { ...loaded, ring: fixedKeyRing(loaded.key, [...fromEnv, ...fromFile]) };
  }
  let readAt = now();
  const ring = reloadableKeyRing(loaded.key, [...fromEnv, ...fromFile], () => {
    if (now() - readAt < RELOAD_INTERVAL_MS) return undefined;
    readAt = now();
    try {
      return [...readKeyFileSync(loaded.file!), ...readKeyFileSync(previousFile)];
    } catch {
      return undefined; // a file half-written by an operator: the next reload reads it
    }
  });
  return { ...loaded, ring };
}
