import { readFile } from 'node:fs/promises';
import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import { type AuditEvent, createAudit } from '../audit/audit-events.ts';
import {
  createApiToken,
  createClient,
  rotateClientSecret,
  setClientSettings,
} from '../clients/client-admin.ts';
import { revokeApiTokenOf } from '../clients/client-repository.ts';
import type { Dialect } from '../db/dialect.ts';
import { migrateToLatest } from '../db/migrate.ts';
import type { Database } from '../db/schema.ts';
import { registerContext } from '../formats/ldp-vc/contexts/context-admin.ts';
import { createDevelopmentCertificate, DEVELOPMENT_COUNTRY } from '../keys/development-certificate.ts';
import type { FieldCipher } from '../keys/field-cipher.ts';
import { rotateSigningKey } from '../keys/signing-keys.ts';
import { checkVerifierMetadata } from '../oid4vp/verifier-registry.ts';
import { checkWalletLogin } from '../verifier/wallet-login.ts';

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
function audited<T>(
  deps: CliDeps,
  event: Omit<AuditEvent, 'actor'>,
  act: (tx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return deps.db.transaction().execute(async (tx) => {
    const result = await act(tx);
    await audit.record(tx, { ...event, actor: 'cli' });
    return result;
  });
}

export function clientIdOf(raw: string | undefined, what: string): number {
  if (raw === undefined) throw new UsageError(`${what} is required`);
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2147483647)
    throw new UsageError(`${what} must be a positive integer`);
  return Number(raw);
}

type Values = Record<string, string | boolean | string[] | undefined>;

/**
 * Switches, which DESIGN.md documents bare (`--dpop-bound`), negated (`--no-dpop-bound`) and with
 * a value (`--dpop-bound true|false`, `--dpop-bound=false`): parseArgs takes an option as a
 * boolean or as a string, not both, so each is two booleans, NAME and no-NAME, and `parse`
 * rewrites the value forms to them. `switchValue` reads the result.
 */
function switchOptions(...names: string[]): ParseArgsOptionsConfig {
  return Object.fromEntries(
    names.flatMap((name) => [
      [name, { type: 'boolean' }],
      [`no-${name}`, { type: 'boolean' }],
    ]),
  );
}

/** The relying-party switches of `client create` and `client set`. */
const RELYING_PARTY_SWITCHES = switchOptions('dpop-bound', 'require-par');

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
function switchValue(values: Values, name: string): boolean | undefined {
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

function trueOrFalse(values: Values, name: string): boolean | undefined {
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

export async function runCommand(deps: CliDeps, argv: string[]): Promise<CommandResult> {
  const [group, action, ...rest] = argv;
  const key = action && !action.startsWith('-') ? `${group} ${action}` : (group ?? '');
  const args = action && !action.startsWith('-') ? rest : argv.slice(1);

  switch (key) {
    case 'client create': {
      const { values, positionals } = parse(args, {
        name: { type: 'string' },
        master: { type: 'boolean' },
        parent: { type: 'string' },
        'redirect-uri': { type: 'string', multiple: true },
        'post-logout-redirect-uri': { type: 'string', multiple: true },
        verifier: { type: 'boolean' },
        public: { type: 'boolean' },
        grant: { type: 'string', multiple: true },
        ...RELYING_PARTY_SWITCHES,
      });
      if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
      if (typeof values.name !== 'string') throw new UsageError('--name is required');
      const created = await createClient(
        deps.db,
        {
          name: values.name,
          master: values.master === true,
          parentId: values.parent === undefined ? undefined : clientIdOf(values.parent as string, '--parent'),
          redirectUris: (values['redirect-uri'] as string[] | undefined) ?? [],
          postLogoutRedirectUris: (values['post-logout-redirect-uri'] as string[] | undefined) ?? [],
          verifier: values.verifier === true,
          public: values.public === true,
          grantTypes: (values.grant as string[] | undefined) ?? [],
          dpopBound: switchValue(values, 'dpop-bound') === true,
          requirePar: switchValue(values, 'require-par') === true,
        },
        (tx, clientId) =>
          audit.record(tx, {
            actor: 'cli',
            clientId,
            type: 'client.create',
            targets: { client_id: clientId },
          }),
      );
      const secretLine =
        created.client_secret === null
          ? 'A public client: no client_secret; it must use PKCE.'
          : `client_secret: ${created.client_secret}`;
      return {
        json: created,
        text: `Created client ${created.client_id}.\n${secretLine}\napi_token: ${created.api_token}\nThey are shown only once: store them now.`,
      };
    }
    case 'client set': {
      const { values, positionals } = parse(args, {
        'from-email': { type: 'string' },
        'esp-token': { type: 'string' },
        'recaptcha-key': { type: 'string' },
        'recaptcha-threshold': { type: 'string' },
        'recaptcha-enabled': { type: 'string' },
        'privacy-link': { type: 'string' },
        'redirect-uri': { type: 'string', multiple: true },
        'post-logout-redirect-uri': { type: 'string', multiple: true },
        'verifier-metadata': { type: 'string' },
        grant: { type: 'string', multiple: true },
        'wallet-login': { type: 'string' },
        ...RELYING_PARTY_SWITCHES,
      });
      const id = clientIdOf(positionals[0], 'client ID');
      const walletLoginFile = values['wallet-login'] as string | undefined;
      const walletLogin =
        walletLoginFile === undefined
          ? undefined
          : walletLoginFile === 'none'
            ? null
            : await checkWalletLogin(deps.db, id, await readText(walletLoginFile));
      if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`);
      const metadataFile = values['verifier-metadata'] as string | undefined;
      const verifierMetadata =
        metadataFile === undefined ? undefined : checkVerifierMetadata(await readText(metadataFile));
      const threshold = values['recaptcha-threshold'] as string | undefined;
      if (threshold !== undefined && !/^(0(\.\d+)?|1(\.0+)?)$/.test(threshold)) {
        throw new UsageError('--recaptcha-threshold must be a number between 0 and 1');
      }
      const enabled = trueOrFalse(values, 'recaptcha-enabled');
      const cipher = await deps.cipher();
      const updated = { clientId: id, type: 'client.update', targets: { client_id: id } };
      await audited(deps, updated, (tx) =>
        setClientSettings(tx, cipher, id, {
          fromEmail: values['from-email'] as string | undefined,
          espToken: values['esp-token'] as string | undefined,
          recaptchaKey: values['recaptcha-key'] as string | undefined,
          recaptchaThreshold: threshold === undefined ? undefined : Number(threshold),
          recaptchaEnabled: enabled,
          privacyLink: values['privacy-link'] as string | undefined,
          redirectUris: values['redirect-uri'] as string[] | undefined,
          postLogoutRedirectUris: values['post-logout-redirect-uri'] as string[] | undefined,
          verifierMetadata,
          grantTypes: values.grant as string[] | undefined,
          dpopBound: switchValue(values, 'dpop-bound'),
          requirePar: switchValue(values, 'require-par'),
          walletLogin,
        }),
      );
      return { json: { client_id: id, updated: true }, text: `Updated client ${id}.` };
    }
    case 'client secret-rotate': {
      const { positionals } = parse(args, {});
      const id = clientIdOf(positionals[0], 'client ID');
      const rotation = { clientId: id, type: 'client.secret_rotate', targets: { client_id: id } };
      const rotated = await audited(deps, rotation, (tx) => rotateClientSecret(tx, id));
      return {
        json: rotated,
        text: `New client_secret for client ${id}: ${rotated.client_secret}\nThe old one no longer works.`,
      };
    }
    case 'token create': {
      const { values } = parse(args, { client: { type: 'string' } });
      const id = clientIdOf(values.client as string | undefined, '--client');
      const issued = { clientId: id, type: 'client.token_create', targets: { client_id: id } };
      const created = await audited(deps, issued, (tx) => createApiToken(tx, id));
      return {
        json: created,
        text: `api_token for client ${id}: ${created.api_token}\nIt is shown only once.`,
      };
    }
    case 'token revoke': {
      const { positionals } = parse(args, {});
      const token = positionals[0];
      if (!token) throw new UsageError('TOKEN is required');
      const revoked = await deps.db.transaction().execute(async (tx) => {
        const clientId = await revokeApiTokenOf(tx, token);
        // Never the token: the client it belonged to.
        if (clientId !== undefined) {
          await audit.record(tx, {
            actor: 'cli',
            clientId,
            type: 'client.token_revoke',
            targets: { client_id: clientId },
          });
        }
        return clientId;
      });
      if (revoked === undefined) throw new UsageError('no live API token has that value');
      return { json: { revoked: true }, text: 'Token revoked.' };
    }
    case 'keys rotate': {
      parse(args, {});
      const { kid } = await rotateSigningKey(deps.db, await deps.cipher(), deps.accessTokenTtl);
      return {
        json: { kid },
        text: `New signing key ${kid} signs from now on (servers pick it up within 30 s); the previous key stays published until its tokens expire.`,
      };
    }
    case 'context add': {
      const { values, positionals } = parse(args, { url: { type: 'string' }, file: { type: 'string' } });
      if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
      if (typeof values.url !== 'string') throw new UsageError('--url is required');
      if (typeof values.file !== 'string') throw new UsageError('--file is required');
      const result = await registerContext(deps.db, values.url, await readText(values.file));
      return {
        json: result,
        text: result.registered
          ? `Registered ${result.url} (sha256 ${result.sha256}); credentials may use it now.`
          : `${result.url} was registered already with the same content.`,
      };
    }
    case 'migrate': {
      parse(args, {});
      const applied = await migrateToLatest(deps.db, deps.dialect);
      return {
        json: { applied },
        text: applied.length ? `Applied ${applied.join(', ')}.` : 'The database is up to date.',
      };
    }
    default:
      throw new UsageError(
        group ? `unknown command "${[group, action].filter(Boolean).join(' ')}"` : 'no command given',
      );
  }
}

/**
 * `--key FILE --chain FILE` (PEM, the chain's leaf first), or a development key and self-signed
 * certificate for PUBLIC_URL's host when neither is given: what `verifier enable` and
 * `issuer enable` sign with.
 */
export async function signingMaterialOf(
  deps: Pick<CliDeps, 'publicUrl'>,
  values: Record<string, unknown>,
  name: string,
  now: Date,
  country = DEVELOPMENT_COUNTRY,
): Promise<{ keyPem: string; chainPem: string; development: boolean }> {
  if ((typeof values['key'] === 'string') !== (typeof values['chain'] === 'string')) {
    throw new UsageError('--key and --chain go together: the key signs, the chain names it');
  }
  if (typeof values['key'] !== 'string') {
    const made = await createDevelopmentCertificate({
      name,
      country,
      dnsName: new URL(deps.publicUrl).hostname,
      url: deps.publicUrl,
      now,
    });
    return { ...made, development: true };
  }
  return {
    keyPem: await readText(values['key']),
    chainPem: await readText(values['chain'] as string),
    development: false,
  };
}
