import { enableVerifier } from '../verifier/verifier-admin.ts';
import { type CliDeps, type CommandResult, clientIdOf, parse, UsageError } from './command-line.ts';
import { signingMaterialOf } from './signing-material.ts';

/**
 * `coffer verifier enable --client ID [--key FILE --chain FILE]`: the client's request-signing
 * key and certificate chain; without files, a development key and self-signed certificate.
 */
export async function runVerifierCommand(deps: CliDeps, argv: string[]): Promise<CommandResult> {
  const [, action, ...args] = argv;
  if (action !== 'enable') {
    throw new UsageError(action ? `unknown command "verifier ${action}"` : 'verifier needs enable');
  }
  const { values, positionals } = parse(args, {
    client: { type: 'string' },
    key: { type: 'string' },
    chain: { type: 'string' },
  });
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const clientId = clientIdOf(values.client as string | undefined, '--client');
  const now = new Date();
  const { development, ...material } = await signingMaterialOf(
    deps,
    values,
    `Coffer verifier ${clientId}`,
    now,
  );
  const enabled = await enableVerifier(
    { db: deps.db, cipher: await deps.cipher(), publicUrl: deps.publicUrl, now },
    clientId,
    material,
  );
  const warning = development
    ? 'Development certificate: self-signed, so wallets show this verifier as unverified unless they trust it. Production uses a certificate from the ecosystem (--key, --chain).'
    : undefined;
  return {
    json: { ...enabled, development, ...(warning ? { warning } : {}) },
    text: [
      `Client ${clientId} verifies presentations as ${enabled.client_ids.join(' and ')}.`,
      `Certificate ${enabled.certificate.subject}, valid until ${enabled.certificate.not_after}.`,
      ...(warning ? [`Warning: ${warning}`] : []),
    ].join('\n'),
  };
}
