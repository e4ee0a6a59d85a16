import { enableIssuer } from '../issuer/issuer-admin.ts';
import {
  type CliDeps,
  type CommandResult,
  clientIdOf,
  parse,
  signingMaterialOf,
  UsageError,
} from './commands.ts';

/**
 * `coffer issuer enable --client ID [--key FILE --chain FILE] [--haip]`: the client's credential
 * issuer; without files, a development key and self-signed certificate, with a warning.
 */
export async function runIssuerCommand(deps: CliDeps, argv: string[]): Promise<CommandResult> {
  const [, action, ...args] = argv;
  if (action !== 'enable') {
    throw new UsageError(action ? `unknown command "issuer ${action}"` : 'issuer needs enable');
  }
  const { values, positionals } = parse(args, {
    client: { type: 'string' },
    key: { type: 'string' },
    chain: { type: 'string' },
    haip: { type: 'boolean' },
  });
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const clientId = clientIdOf(values.client as string | undefined, '--client');
  const now = new Date();
  const { development, ...material } = await signingMaterialOf(
    deps,
    values,
    `Coffer issuer ${clientId}`,
    now,
  );
  const enabled = await enableIssuer(
    { db: deps.db, cipher: await deps.cipher(), publicUrl: deps.publicUrl, now },
    clientId,
    material,
    { haip: values.haip === true },
  );
  const warning = development
    ? 'Development certificate: self-signed, so wallets show this issuer as unverified unless they trust it. Production uses a certificate from the ecosystem (--key, --chain).'
    : undefined;
  return {
    json: { ...enabled, development, ...(warning ? { warning } : {}) },
    text: [
      `Client ${clientId} issues credentials as ${enabled.credential_issuer}${enabled.haip ? ' (HAIP)' : ''}.`,
      `Metadata: ${enabled.metadata}`,
      `bbs-2023 issuer: ${enabled.did}`,
      `Certificate ${enabled.certificate.subject}, valid until ${enabled.certificate.not_after}.`,
      ...(warning ? [`Warning: ${warning}`] : []),
    ].join('\n'),
  };
}
