import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import { type AuditEvent, createAudit } from '../audit/audit-events.ts';
import { takeBackup } from '../backup/backup-service.ts';
import { restoreBackup } from '../backup/restore-service.ts';
import type { Config } from '../config/config.ts';
import { loadMasterKeyRing, MASTER_KEY_FILE } from '../config/master-key.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { readReferencedCids } from '../db/referenced-blocks.ts';
import { unreferencedBlockSightings } from '../db/unreferenced-blocks.ts';
import { CofferError } from '../errors.ts';
import { masterKeyId } from '../keys/master-key-ring.ts';
import {
  type BlockBackend,
  type CollectionDeps,
  collectGarbage,
  createFsBackend,
  createKuboBackend,
} from '../storage/index.ts';
import { type CommandResult, parse, UsageError } from './command-line.ts';

const DEFAULT_GRACE_SECONDS = 3600;
/** Ten years: a larger grace is a typo, not a policy. */
const MAX_GRACE_SECONDS = 10 * 365 * 24 * 3600;

function graceOf(raw: string | boolean | string[] | undefined): number {
  if (raw === undefined) return DEFAULT_GRACE_SECONDS;
  if (typeof raw !== 'string' || !/^\d{1,10}$/.test(raw) || Number(raw) > MAX_GRACE_SECONDS) {
    throw new UsageError(`--grace must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS}`);
  }
  return Number(raw);
}

/**
 * The block-key ids of the configured master keys, the current one first. Never generates one (as the server does on a
 * first start in development): a backup or restore under a new key would be useless.
 */
async function configuredKeyIds(config: Config): Promise<string[]> {
  if (!config.masterKey) {
    try {
      await access(path.join(config.dataDir, MASTER_KEY_FILE));
    } catch {
      throw new CofferError(
        'invalid_request',
        `No master key: set MASTER_KEY to the key the data was written with (or put its ${MASTER_KEY_FILE} in DATA_DIR).`,
      );
    }
  }
  const { ring } = await loadMasterKeyRing(config);
  return ring.keys.map((key) => masterKeyId(key));
}

async function keyIdsOf(config: Config): Promise<{ keyId: string; readableKeyIds: string[] }> {
  const ids = await configuredKeyIds(config);
  return { keyId: ids[0]!, readableKeyIds: ids };
}

function backendOf(config: Config): BlockBackend {
  if (config.storage === 'kubo') return createKuboBackend(config.kuboApiUrl!);
  return createFsBackend(path.join(config.dataDir, 'blocks'));
}

async function collect(config: Config, args: string[]): Promise<CommandResult> {
  const { values, positionals } = parse(args, { 'dry-run': { type: 'boolean' }, grace: { type: 'string' } });
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const graceSeconds = graceOf(values.grace);
  const dryRun = values['dry-run'] === true;
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    await migrateToLatest(database.db, database.dialect);
    const common = { referencedCids: () => readReferencedCids(database.db), now: () => new Date() };
    const fs = createFsBackend(path.join(config.dataDir, 'blocks'));
    const deps: CollectionDeps =
      config.storage === 'kubo'
        ? { ...common, backend: backendOf(config), sightings: unreferencedBlockSightings(database.db) }
        : { ...common, backend: fs, temporaries: { list: fs.temporaries, remove: fs.removeTemporary } };
    const report = await collectGarbage(deps, { graceSeconds, dryRun });
    const verb = dryRun ? 'Would remove' : 'Removed';
    const kept =
      report.young > 0
        ? ` ${report.young} unreferenced block(s) younger than the grace period${config.storage === 'kubo' ? ' (or seen for the first time)' : ''} kept.`
        : '';
    const foreign = report.foreign > 0 ? ` ${report.foreign} pin(s) that are not Coffer's left alone.` : '';
    return {
      json: { ...report, dry_run: dryRun },
      text: `${verb} ${report.removed} unreferenced block(s), ${report.bytes} bytes, and ${report.temporary_files} stale temporary file(s).${kept}${foreign}`,
    };
  } finally {
    await database.close();
  }
}

/**
 * Records a service-wide operation (actor `cli`, no tenant) once it is done: a backup or restore
 * is no database transaction, so its event follows it. The server's sealer seals the row.
 */
async function recordOperation(config: Config, event: Pick<AuditEvent, 'type' | 'targets'>) {
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
  try {
    await migrateToLatest(database.db, database.dialect);
    await createAudit().record(database.db, { ...event, actor: 'cli', clientId: null });
  } finally {
    await database.close();
  }
}

async function backup(config: Config, args: string[]): Promise<CommandResult> {
  const { values, positionals } = parse(args, {
    out: { type: 'string' },
    'blocks-only': { type: 'boolean' },
  });
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
  if (typeof values.out !== 'string' || values.out === '') throw new UsageError('--out FILE is required');
  const blocksOnly = values['blocks-only'] === true;
  if (config.databaseUrl && !blocksOnly) {
    throw new UsageError(
      'on PostgreSQL the database is backed up with pg_dump: run coffer backup --blocks-only beside it (docs/operations.md, "Backups and restore drill")',
    );
  }
  const out = path.resolve(values.out);
  const exists = await stat(out).then(
    () => true,
    () => false,
  );
  if (exists) throw new CofferError('conflict', `${out} exists: a backup never overwrites a file.`);
  const directory = await stat(path.dirname(out)).catch(() => undefined);
  if (!directory?.isDirectory()) throw new UsageError(`${path.dirname(out)} is not a directory`);
  const backend = backendOf(config);
  const fs = config.storage === 'fs' ? createFsBackend(path.join(config.dataDir, 'blocks')) : undefined;
  const report = await takeBackup(
    {
      backend,
      ...(fs ? { linkTo: fs.linkTo } : {}),
      sqliteFile: blocksOnly ? undefined : path.join(config.dataDir, 'coffer.sqlite'),
      dataDir: config.dataDir,
      ...(await keyIdsOf(config)),
      now: () => new Date(),
    },
    out,
  );
  await recordOperation(config, {
    type: 'backup',
    targets: { key_id: report.key_id, blocks: report.blocks, database: report.database ? 1 : 0 },
  });
  const what = report.database ? 'the database and ' : '';
  const missing = report.missing.length
    ? `\nWarning: ${report.missing.length} referenced block(s) were already missing or damaged in the store: ${report.missing.slice(0, 5).join(', ')}`
    : '';
  return {
    json: report,
    text: `Wrote ${out} (${report.bytes} bytes): ${what}${report.blocks} block(s), ${report.block_bytes} bytes; it needs the master key with id ${report.key_id}, which it does not contain.${missing}`,
  };
}

async function restore(config: Config, args: string[]): Promise<CommandResult> {
  const { values, positionals } = parse(args, { from: { type: 'string' } });
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
  if (typeof values.from !== 'string' || values.from === '') throw new UsageError('--from FILE is required');
  const keyIds = await keyIdsOf(config);
  const report = await restoreBackup(
    {
      dataDir: config.dataDir,
      database: config.databaseUrl ? 'postgres' : 'sqlite',
      stagesBlocks: config.storage === 'fs',
      blockBackend: (staging) =>
        config.storage === 'kubo'
          ? createKuboBackend(config.kuboApiUrl!)
          : createFsBackend(path.join(staging, 'blocks')),
      ...keyIds,
    },
    path.resolve(values.from),
  );
  // Into the restored SQLite database; a PostgreSQL one is restored by pg_restore afterwards.
  if (report.database) {
    await recordOperation(config, { type: 'restore', targets: { blocks: report.blocks } });
  }
  const database = report.database
    ? 'the database and '
    : config.databaseUrl
      ? 'blocks only (restore the database with pg_restore) and '
      : 'no database (a blocks-only backup) and ';
  const missing = report.missing.length
    ? `\nWarning: the backup lacks ${report.missing.length} referenced block(s) that the store had already lost when it was taken: ${report.missing.slice(0, 5).join(', ')}`
    : '';
  return {
    json: report,
    text: `Restored ${database}${report.blocks} block(s), ${report.block_bytes} bytes, from the backup of ${report.created_at}.${missing}`,
  };
}

export async function runStorageCommand(config: Config, argv: string[]): Promise<CommandResult> {
  const [group, action, ...rest] = argv;
  if (group === 'storage') {
    if (action === 'gc') return collect(config, rest);
    throw new UsageError(action ? `unknown command "storage ${action}"` : 'storage needs a command: gc');
  }
  if (group === 'backup') return backup(config, argv.slice(1));
  return restore(config, argv.slice(1));
}
