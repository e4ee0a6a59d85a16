import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { createDevelopmentWalletProvider } from '../keys/development-wallet-provider.ts';
import { type CommandResult, parse, UsageError } from './command-line.ts';

/**
 * `coffer wallet-provider create --dir DIR [--name NAME]`: needs no database or master key, so
 * the CLI runs it before opening either.
 */
export async function runWalletProviderCommand(argv: string[]): Promise<CommandResult> {
  const [, action, ...rest] = argv;
  if (action !== 'create') {
    throw new UsageError(
      action ? `unknown command "wallet-provider ${action}"` : 'wallet-provider needs create',
    );
  }
  const { values, positionals } = parse(rest, { dir: { type: 'string' }, name: { type: 'string' } });
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
  if (typeof values.dir !== 'string' || values.dir === '') throw new UsageError('--dir is required');
  const name = typeof values.name === 'string' ? values.name : 'Coffer';
  if (!/^[\p{L}\p{N} ._-]{1,64}$/u.test(name)) {
    throw new UsageError('--name must be 1–64 letters, digits, spaces, dots, dashes or underscores');
  }
  const dir = path.resolve(values.dir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const made = await createDevelopmentWalletProvider(dir, name, new Date());
  return {
    json: {
      key: made.key,
      chain: made.chain,
      subject: made.subject,
      not_after: made.notAfter,
      root_sha256: made.rootSha256,
    },
    text: [
      `Wrote ${made.key} and ${made.chain} (${made.subject}, valid until ${made.notAfter}).`,
      `Set WALLET_PROVIDER_KEY=${made.key} and WALLET_PROVIDER_CHAIN=${made.chain}.`,
      `Issuers that should admit this wallet trust its self-signed root (the last certificate of chain.pem, SHA-256 ${made.rootSha256}).`,
      'For development only: production wallets use a provider certificate from the trust list of their ecosystem.',
    ].join('\n'),
  };
}
