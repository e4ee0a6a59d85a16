import { readConfig } from '../config/config.ts';
import { loadMasterKeyRing } from '../config/master-key.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { CofferError } from '../errors.ts';
import { createEmailIndexes } from '../keys/blind-index.ts';
import { createFieldCipher } from '../keys/field-cipher.ts';
import { runAdminCommand } from './admin-command.ts';
import { runAuditCommand } from './audit-command.ts';
import { type CommandResult, runCommand, USAGE, UsageError } from './commands.ts';
import { runFederationCommand } from './federation-command.ts';
import { runIssuerCommand } from './issuer-command.ts';
import { runMasterKeyCommand } from './master-key-command.ts';
import { runStorageCommand, STORAGE_COMMANDS } from './storage-commands.ts';
import { runVerifierCommand } from './verifier-command.ts';
import { runWalletProviderCommand } from './wallet-provider-command.ts';

const argv = process.argv.slice(2);
const json = argv.includes('--json');

function fail(message: string, code: number): never {
  if (json) process.stderr.write(`${JSON.stringify({ error: message })}\n`);
  else process.stderr.write(`coffer: ${message}\n`);
  process.exit(code);
}

if (argv.length === 0) fail(`no command given\n\n${USAGE}`, 2);
if (argv[0] === '--help' || argv[0] === 'help') {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

try {
  if (argv[0] === 'wallet-provider') {
    const result = await runWalletProviderCommand(argv);
    process.stdout.write(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    process.exit(0);
  }
  const config = readConfig(process.env);
  // Backups, restores and storage collection open what they need themselves: a restore must
  // find DATA_DIR empty, so nothing may create the database first.
  if (STORAGE_COMMANDS.has(argv[0]!)) {
    const result = await runStorageCommand(config, argv);
    process.stdout.write(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    process.exit(0);
  }
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    // Every command may be the first thing run on a new DATA_DIR.
    if (argv[0] !== 'migrate') await migrateToLatest(database.db, database.dialect);
    const deps = {
      db: database.db,
      dialect: database.dialect,
      accessTokenTtl: config.accessTokenTtl,
      publicUrl: config.publicUrl,
      cipher: async () => createFieldCipher((await loadMasterKeyRing(config)).ring),
    };
    if (argv[0] === 'audit') {
      process.exitCode = await runAuditCommand(
        {
          db: database.db,
          dialect: database.dialect,
          masterKeys: async () => [...(await loadMasterKeyRing(config)).ring.keys],
          write: (line) => process.stdout.write(`${line}\n`),
        },
        argv,
      );
    }
    // The command groups with their own runner; every other command is runCommand's.
    const runners: Record<string, () => Promise<CommandResult>> = {
      admin: () =>
        runAdminCommand(
          { ...deps, emailIndexes: async () => createEmailIndexes((await loadMasterKeyRing(config)).ring) },
          argv,
        ),
      verifier: () => runVerifierCommand(deps, argv),
      issuer: () => runIssuerCommand(deps, argv),
      federation: () => runFederationCommand(deps, argv),
      'master-key': () =>
        runMasterKeyCommand(
          { db: database.db, config, log: (line) => process.stderr.write(`coffer: ${line}\n`) },
          argv,
        ),
    };
    const result =
      argv[0] === 'audit'
        ? undefined
        : await (Object.hasOwn(runners, argv[0]!) ? runners[argv[0]!]! : () => runCommand(deps, argv))();
    if (result) process.stdout.write(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    // A rotation that could not rewrite everything says so in its report and in its exit status.
    if (argv[0] === 'master-key' && (result!.json as { failed: number }).failed > 0) process.exitCode = 1;
  } finally {
    await database.close();
  }
} catch (error) {
  if (error instanceof UsageError) fail(`${error.message}\n\n${USAGE}`, 2);
  if (error instanceof CofferError) fail(error.message, 1);
  fail((error as Error).message ?? String(error), 1);
}
