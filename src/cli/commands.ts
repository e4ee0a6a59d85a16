import {
  createApiToken,
  createClient,
  rotateClientSecret,
  setClientSettings,
} from '../clients/client-admin.ts';
import { revokeApiTokenOf } from '../clients/client-repository.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { rotateSigningKey } from '../keys/signing-keys.ts';
import {
  audited,
  type CliDeps,
  type CommandResult,
  clientIdOf,
  parse,
  readText,
  recordCliEvent,
  switchOptions,
  switchValue,
  trueOrFalse,
  UsageError,
} from './command-line.ts';

/** The relying-party switches of `client create` and `client set`. */
const RELYING_PARTY_SWITCHES = switchOptions('dpop-bound', 'require-par');

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
          recordCliEvent(tx, {
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
            : await (await import('../verifier/wallet-login.ts')).checkWalletLogin(
                deps.db,
                id,
                await readText(walletLoginFile),
              );
      if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`);
      const metadataFile = values['verifier-metadata'] as string | undefined;
      const verifierMetadata =
        metadataFile === undefined
          ? undefined
          : (await import('../oid4vp/verifier-registry.ts')).checkVerifierMetadata(
              await readText(metadataFile),
            );
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
          await recordCliEvent(tx, {
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
      // Loaded here: JSON-LD processing is most of what the CLI would otherwise load for every command.
      const { registerContext } = await import('../formats/ldp-vc/contexts/context-admin.ts');
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
