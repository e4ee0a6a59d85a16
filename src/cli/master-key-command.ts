import { randomUUID } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { createAudit } from '../audit/audit-events.ts';
import type { Config } from '../config/config.ts';
import {
  MASTER_KEY_FILE,
  PREVIOUS_MASTER_KEYS_FILE,
  parseKeyLines,
  readKeyFile,
} from '../config/master-key.ts';
import type { Database } from '../db/schema.ts';
import { createFieldCipher } from '../keys/field-cipher.ts';
import { fixedKeyRing, masterKeyId } from '../keys/master-key-ring.ts';
import { type RotationReport, rotateMasterKey } from '../master-key/rotation.ts';
import { createEncryptedStore, fsyncDir } from '../storage/index.ts';
import { type CommandResult, parse, UsageError } from './command-line.ts';

export interface MasterKeyDeps {
  db: Kysely<Database>;
  config: Config;
  log: (line: string) => void;
}

/** A refusal before anything is written: the configuration does not fit a rotation. */
export class RotationRefused extends Error {}

async function readTargetKey(file: string): Promise<Buffer> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--new-key-file ${file} cannot be read (${(error as NodeJS.ErrnoException).code})`);
  }
  const keys = (() => {
    try {
      return parseKeyLines(text, file);
    } catch {
      return [];
    }
  })();
  if (keys.length !== 1) {
    throw new UsageError(
      `--new-key-file ${file} must hold one key of 32 bytes in base64 (e.g. \`openssl rand -base64 32 > ${path.basename(file)}\`)`,
    );
  }
  return keys[0]!;
}

/** Written to a temporary file, synced and renamed into place, so a crash leaves the old or the new file. */
async function writeKeyFileAtomically(file: string, keys: Uint8Array[]) {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${randomUUID()}.tmp`);
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(keys.map((key) => `${Buffer.from(key).toString('base64')}\n`).join(''));
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  await fsyncDir(path.dirname(file));
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

/**
 * The previous keys the rotation reads with, after checking that servers will read what it
 * writes: with MASTER_KEY, the operator has made the new key MASTER_KEY and the old one
 * MASTER_KEY_PREVIOUS and restarted the servers. In the embedded default, a first run installs
 * the new key as DATA_DIR/master.key (the old one joins master.key.previous) and stops: the
 * server reads its keys at start, so it is restarted before a second run rewrites anything.
 */
async function keysOfRotation(
  config: Config,
  target: Buffer,
  dryRun: boolean,
): Promise<{ previous: Buffer[]; installed?: { keyFile: string; previousFile: string } }> {
  const fromEnv = config.masterKeyPrevious.map((key) => Buffer.from(key, 'base64'));
  const previousFile = path.join(config.dataDir, PREVIOUS_MASTER_KEYS_FILE);
  const fromFile = await readKeyFile(previousFile);
  if (config.masterKey !== undefined) {
    const current = Buffer.from(config.masterKey, 'base64');
    if (!same(current, target)) {
      throw new RotationRefused(
        'MASTER_KEY is not the key in --new-key-file: first make the new key MASTER_KEY and put the old one in MASTER_KEY_PREVIOUS, restart every server, then run the rotation with that configuration (servers must write under the new key and read the old one)',
      );
    }
    return { previous: [...fromEnv, ...fromFile] };
  }
  const keyFile = path.join(config.dataDir, MASTER_KEY_FILE);
  const [current] = await readKeyFile(keyFile);
  if (current === undefined) {
    throw new RotationRefused(
      `${keyFile} does not exist: there is no master key to rotate from (set MASTER_KEY?)`,
    );
  }
  if (same(current, target)) return { previous: [...fromEnv, ...fromFile] };
  if (dryRun) return { previous: [current, ...fromEnv, ...fromFile] };
  // The old key is kept before the new one replaces it: a crash between leaves both readable.
  const previous = [current, ...fromFile.filter((key) => !same(key, current) && !same(key, target))];
  await writeKeyFileAtomically(previousFile, previous);
  await writeKeyFileAtomically(keyFile, [target]);
  return { previous: [...fromEnv, ...previous], installed: { keyFile, previousFile } };
}

/** `coffer master-key rotate --new-key-file FILE [--dry-run]`. */
export async function runMasterKeyCommand(deps: MasterKeyDeps, argv: string[]): Promise<CommandResult> {
  const [, action, ...args] = argv;
  if (action !== 'rotate') {
    throw new UsageError(action ? `unknown command "master-key ${action}"` : 'master-key needs rotate');
  }
  const { values, positionals } = parse(args, {
    'new-key-file': { type: 'string' },
    'dry-run': { type: 'boolean' },
  });
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const file = values['new-key-file'] as string | undefined;
  if (!file) throw new UsageError('--new-key-file is required');
  const dryRun = values['dry-run'] === true;
  const target = await readTargetKey(file);
  const keys = await keysOfRotation(deps.config, target, dryRun);
  if (keys.installed) {
    const { keyFile, previousFile } = keys.installed;
    return {
      json: {
        kid: masterKeyId(target),
        installed: { key_file: keyFile, previous_file: previousFile },
        restart: true,
      },
      text: `Installed the new key ${masterKeyId(target)} as ${keyFile}; the old one is kept in ${previousFile}. Restart the server (it reads its keys at start), then run this command again to re-encrypt.`,
    };
  }
  const previous = keys.previous.filter((key) => !same(key, target));
  if (previous.length === 0 && !dryRun) {
    throw new RotationRefused(
      'the new key is already the current key and no previous key is configured (MASTER_KEY_PREVIOUS or DATA_DIR/master.key.previous): there is nothing to read old values with. To change keys, generate a new one (`openssl rand -base64 32`)',
    );
  }
  const ring = fixedKeyRing(target, previous);
  const store = createEncryptedStore({
    backend: deps.config.storage,
    dataDir: deps.config.dataDir,
    kuboApiUrl: deps.config.kuboApiUrl,
    masterKey: ring,
  });
  const report = await rotateMasterKey(
    { db: deps.db, store, cipher: createFieldCipher(ring), target, log: deps.log },
    dryRun,
  );
  // Many transactions, resumable: the event follows the run (actor cli, service-wide).
  if (!dryRun) {
    await createAudit().record(deps.db, {
      actor: 'cli',
      clientId: null,
      type: 'master_key.rotate',
      targets: { kid: report.kid, failed: report.failed, remaining: report.remaining },
      ...(report.failed > 0 ? { outcome: 'failure', reason: 'incomplete' } : {}),
    });
  }
  return { json: report, text: describe(report, previous.map(masterKeyId)) };
}

function describe(report: RotationReport, previousKids: string[]): string {
  const lines = [
    report.dry_run
      ? `Dry run: nothing was written. Target key ${report.kid}; previous keys: ${previousKids.join(', ') || 'none'}.`
      : `Rotated to key ${report.kid}: ${report.blocks.reencrypted} blocks and ${report.fields.reencrypted} sealed values re-encrypted, ${report.hashes.rewritten} keyed hashes rewritten, ${report.old_blocks_removed} old blocks removed.`,
    `Remaining under other keys: ${report.blocks.remaining} blocks, ${report.fields.remaining} sealed values, ${report.hashes.remaining} keyed hashes.`,
  ];
  if (report.expiring.count > 0) {
    lines.push(
      `${report.expiring.count} access-token claims sealed under an old key expire by ${report.expiring.until}; they cannot be re-encrypted and are counted as remaining until then.`,
    );
  }
  if (report.failed > 0) lines.push(`${report.failed} failed:`, ...report.failures.map((f) => `  ${f}`));
  lines.push(
    report.remaining === 0
      ? 'Nothing remains under a previous key: it can be retired (docs/operations.md, "Master-key rotation").'
      : 'Keep the previous keys until a run reports nothing remaining.',
  );
  return lines.join('\n');
}
