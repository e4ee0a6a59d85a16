import { readFile } from 'node:fs/promises';
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import { type AuditEvent, createAudit } from '../audit/audit-events.ts';
import type { Dialect } from '../db/dialect.ts';
import type { Database } from '../db/schema.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';

// What every command shares: the usage, the parsing of arguments, the result's shape and the
// audit of CLI acts. Apart from commands.ts, so that a command loads only its own modules: the
// CLI starts in a fraction of the time that loading every command took (`coffer audit verify`
// loaded 2,153 modules).

/** The commands that handle the block store and whole backups; they open what they need themselves. */
export const STORAGE_COMMANDS = new Set(['storage', 'backup', 'restore']);

/** Thrown for a command line that cannot be understood; the CLI prints it with the usage. */
export class UsageError extends Error {}

export interface CliDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  cipher: () => Promise<FieldCipher>;
  /** How long tokens live: a replaced signing key stays published that long. */
  accessTokenTtl: number;
  /** PUBLIC_URL: the host a verifier's x509_san_dns client id names. */
  publicUrl: string;
}

/** What a command prints: a JSON value for --json, and a sentence for people. */
export interface CommandResult {
  json: unknown;
  text: string;
}

export const USAGE = `Usage: coffer <command> [options]

  client create --name NAME [--master] [--parent ID] [--redirect-uri URI]...
                [--post-logout-redirect-uri URI]... [--verifier] [--public]
                [--grant refresh_token]... [--[no-]dpop-bound] [--[no-]require-par] [--json]
  client set ID [--from-email E] [--esp-token T] [--recaptcha-key K] [--recaptcha-threshold X]
                [--recaptcha-enabled true|false] [--privacy-link URL] [--redirect-uri URI]...
                [--post-logout-redirect-uri URI]... [--verifier-metadata FILE]
                [--grant GRANT]... [--[no-]dpop-bound] [--[no-]require-par]
                [--wallet-login FILE|none] [--json]
                (--wallet-login: a JSON file {"dcql_query": …, "account_claim": ["email"],
                 "trusted_issuers"?: [PEM or DID, …]} that lets people log in with a credential
                 from a wallet, issued by one of trusted_issuers (else ISSUER_TRUST_ANCHORS); the
                 client must be a verifier (verifier enable); none removes it)
  client secret-rotate ID [--json]
  token create --client ID [--json]
  token revoke TOKEN [--json]
  keys rotate [--json]
  context add --url URL --file PATH [--json]
  migrate [--json]
  federation enable [--authority-hint URL]... [--name NAME] [--json]
                (Coffer as an OpenID Federation intermediate at PUBLIC_URL, its tenant issuers
                 entities below it; prints the keys to register with the superior)
  federation keys rotate [--json]
                (a new federation key, published now and signing a day later; the earlier
                 ones stay published for seven days after that)
  verifier enable --client ID [--key FILE --chain FILE] [--json]
                (the key and certificate chain that sign the client's presentation requests;
                 without files, a development key and self-signed certificate)
  issuer enable --client ID [--key FILE --chain FILE | --country CC] [--haip] [--json]
                (the client's credential issuer: the ES256 key and chain that sign its SD-JWT
                 VCs, mdocs, VC-JWTs and status lists, and a BLS12-381 key for bbs-2023;
                 without files, a development key and self-signed certificate whose subject
                 names the country CC, an ISO 3166-1 alpha-2 code, default ZZ; --haip asks
                 wallets for PAR, PKCE, DPoP, a Wallet Attestation and key attestations)
  storage gc [--dry-run] [--grace SECONDS] [--json]
                (removes blocks no row names that are older than the grace period, default
                 3600 s; Kubo: unpins them, once two runs a grace period apart found them so)
  backup --out FILE [--blocks-only] [--json]
                (while the server runs: SQLite's online backup with the blocks it names, in one
                 file without the master key; on PostgreSQL --blocks-only, beside pg_dump)
  restore --from FILE [--json]
                (into an empty DATA_DIR, with the MASTER_KEY the backup was taken with)
  master-key rotate --new-key-file FILE [--dry-run] [--json]
                (re-encrypts every block and sealed value under the key in FILE and rewrites
                 the keyed hashes, while the server runs; run again after a crash, it continues.
                 With MASTER_KEY: make the new key MASTER_KEY and the old one
                 MASTER_KEY_PREVIOUS, restart the servers, then rotate. Without it, rotate
                 installs FILE as DATA_DIR/master.key (the old key goes to master.key.previous);
                 restart the server and rotate again. --dry-run counts what remains)
  admin add --client ID (--email ADDRESS | --wallet ADDRESS) --role owner|operator|auditor [--json]
  admin remove --client ID (--email ADDRESS | --wallet ADDRESS) [--json]
  admin list --client ID [--json]
                (the people who run the client from /console, logging in with that e-mail
                 address or wallet; owner: everything; operator: offers, revocations, verifier
                 requests, users; auditor: reads only. The e-mail is kept as a blind index)
  audit verify [--json]
                (walks the audit chain from its retention checkpoint; exit status 1 and the
                 first broken position when a row was edited, deleted or reordered)
  audit export --since ISO-TIME
                (the audit events since then, oldest first, as JSON lines)
  wallet-provider create --dir DIR [--name NAME] [--json]
                (a development key and self-signed chain for WALLET_PROVIDER_KEY and
                 WALLET_PROVIDER_CHAIN; production uses a certificate from the ecosystem)

--dpop-bound and --require-par also take a value: --dpop-bound true|false, --require-par=false.

Configuration comes from the same environment variables as the server (DATA_DIR, DATABASE_URL, MASTER_KEY, …).`;

// The server's sealer (or `coffer audit verify`) seals what the CLI records.
const audit = createAudit();

/** Records an act of the command line in the act's transaction (actor `cli`). */
export const recordCliEvent = (tx: Kysely<Database>, event: Omit<AuditEvent, 'actor'>) =>
  audit.record(tx, { ...event, actor: 'cli' });

/** The act in one transaction with its audit event (actor `cli`). */
export function audited<T>(
  deps: CliDeps,
  event: Omit<AuditEvent, 'actor'>,
  act: (tx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return deps.db.transaction().execute(async (tx) => {
    const result = await act(tx);
    await recordCliEvent(tx, event);
    return result;
  });
}

export function clientIdOf(raw: string | undefined, what: string): number {
  if (raw === undefined) throw new UsageError(`${what} is required`);
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2147483647)
    throw new UsageError(`${what} must be a positive integer`);
  return Number(raw);
}

export type Values = Record<string, string | boolean | string[] | undefined>;

/**
 * Switches, which DESIGN.md documents bare (`--dpop-bound`), negated (`--no-dpop-bound`) and with
 * a value (`--dpop-bound true|false`, `--dpop-bound=false`): parseArgs takes an option as a
 * boolean or as a string, not both, so each is two booleans, NAME and no-NAME, and `parse`
 * rewrites the value forms to them. `switchValue` reads the result.
 */
export function switchOptions(...names: string[]): ParseArgsOptionsConfig {
  return Object.fromEntries(
    names.flatMap((name) => [
      [name, { type: 'boolean' }],
      [`no-${name}`, { type: 'boolean' }],
    ]),
  );
}

/** `--NAME true`, `--NAME=true` → `--NAME`; `--NAME false`, `--NAME=false` → `--no-NAME`. */
function spellSwitches(args: string[], options: ParseArgsOptionsConfig): string[] {
  const isSwitch = (name: string) => options[name]?.type === 'boolean' && options[`no-${name}`] !== undefined;
  const spelled: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      spelled.push(...args.slice(i));
      break;
    }
    const equals = arg.indexOf('=');
    const name = arg.startsWith('--') ? arg.slice(2, equals === -1 ? undefined : equals) : '';
    if (!isSwitch(name)) {
      spelled.push(arg);
      continue;
    }
    let value = equals === -1 ? undefined : arg.slice(equals + 1);
    if (value === undefined && (args[i + 1] === 'true' || args[i + 1] === 'false')) value = args[++i];
    if (value !== undefined && value !== 'true' && value !== 'false') {
      throw new UsageError(`--${name} must be true or false`);
    }
    spelled.push(value === 'false' ? `--no-${name}` : `--${name}`);
  }
  return spelled;
}

/** A switch's value: true, false (`--no-NAME`), or undefined when not given. */
export function switchValue(values: Values, name: string): boolean | undefined {
  const on = values[name] === true;
  const off = values[`no-${name}`] === true;
  if (on && off) throw new UsageError(`--${name} and --no-${name} contradict each other`);
  return on ? true : off ? false : undefined;
}

export function parse(
  args: string[],
  options: ParseArgsOptionsConfig,
): { values: Values; positionals: string[] } {
  try {
    const parsed = parseArgs({
      args: spellSwitches(args, options),
      options: { ...options, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
    return { values: parsed.values as Values, positionals: parsed.positionals };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function trueOrFalse(values: Values, name: string): boolean | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw new UsageError(`--${name} must be true or false`);
  return value === 'true';
}

export async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
}
