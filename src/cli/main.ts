import { readConfig } from '../config/config.ts';
import { loadMasterKeyRing } from '../config/master-key.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { CofferError } from '../errors.ts';
import { createEmailIndexes } from '../keys/blind-index.ts';
import { createFieldCipher } from '../keys/field-cipher.ts';
import { type CommandResult, STORAGE_COMMANDS, USAGE, UsageError } from './command-line.ts';

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
  // Each command loads its own modules only, when it runs: an operator (or a test) waits for the
  // command, not for every other command's dependencies.
  if (argv[0] === 'wallet-provider') {
    const { runWalletProviderCommand } = await import('./wallet-provider-command.ts');
    const result = await runWalletProviderCommand(argv);
    process.stdout.write(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    process.exit(0);
  }
  const config = readConfig(process.env);
  // Backups, restores and storage collection open what they need themselves: a restore must
  // find DATA_DIR empty, so nothing may create the database first.
  if (STORAGE_COMMANDS.has(argv[0]!)) {
    const { runStorageCommand } = await import('./storage-commands.ts');
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
      const { runAuditCommand } = await import('./audit-command.ts');
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
      admin: async () =>
        (await import('./admin-command.ts')).runAdminCommand(
          { ...deps, emailIndexes: async () => createEmailIndexes((await loadMasterKeyRing(config)).ring) },
          argv,
        ),
      verifier: async () => (await import('./verifier-command.ts')).runVerifierCommand(deps, argv),
      issuer: async () => (await import('./issuer-command.ts')).runIssuerCommand(deps, argv),
      federation: async () => (await import('./federation-command.ts')).runFederationCommand(deps, argv),
      'master-key': async () =>
        (await import('./master-key-command.ts')).runMasterKeyCommand(
          { db: database.db, config, log: (line) => process.stderr.write(`coffer: ${line}\n`) },
          argv,
        ),
    };
    const runOther = async () => (await import('./commands.ts')).runCommand(deps, argv);
    const result =
      argv[0] === 'audit'
        ? undefined
        : await (Object.hasOwn(runners, argv[0]!) ? runners[argv[0]!]! : runOther)();
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
