import assert from 'node:assert/strict';
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { coffer } from '../helpers/cli.ts';
import type { DatabaseKind } from '../helpers/databases.ts';
import type { HaipOptions, TestIssuerOptions } from '../helpers/issuers/openid4vci-issuer.ts';
import { type IssuanceWorld, startIssuanceWorld } from './issuance-helpers.ts';

/**
 * A wallet provider made the way an operator makes one for development: with
 * `coffer wallet-provider create`. The tests read its files with node:crypto only.
 */
export interface WalletProviderFiles {
  dir: string;
  keyFile: string;
  chainFile: string;
  privateKey: KeyObject;
  /** The chain as `x5c` carries it (leaf first). */
  x5c: string[];
  /** The self-signed root, as an issuer's trust list holds it. */
  rootPem: string;
  env: { WALLET_PROVIDER_KEY: string; WALLET_PROVIDER_CHAIN: string };
}

export async function createWalletProvider(name = 'Coffer'): Promise<WalletProviderFiles> {
  const dir = await mkdtemp(path.join(tmpdir(), 'coffer-wallet-provider-'));
  const made = await coffer({ env: {} }, 'wallet-provider', 'create', '--dir', dir, '--name', name, '--json');
  assert.equal(made.code, 0, made.stderr);
  const { key, chain } = JSON.parse(made.stdout) as { key: string; chain: string };
  const pems = (await readFile(chain, 'utf8')).match(
    /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g,
  )!;
  const certificates = pems.map((pem) => new X509Certificate(pem));
  return {
    dir,
    keyFile: key,
    chainFile: chain,
    privateKey: createPrivateKey(await readFile(key, 'utf8')),
    x5c: certificates.map((c) => c.raw.toString('base64')),
    rootPem: pems.at(-1)!,
    env: { WALLET_PROVIDER_KEY: key, WALLET_PROVIDER_CHAIN: chain },
  };
}

/**
 * A Coffer that is its own wallet provider (made with the CLI) beside a HAIP issuer that trusts
 * that provider; `close` stops both and removes the provider's files.
 */
export async function startHaipWorld(
  kind: DatabaseKind,
  haip: Omit<HaipOptions, 'walletProviders'> = {},
  issuerOptions: TestIssuerOptions = {},
): Promise<{ world: IssuanceWorld; provider: WalletProviderFiles; close(): Promise<void> }> {
  const provider = await createWalletProvider();
  const world = await startIssuanceWorld(
    kind,
    { ...issuerOptions, haip: { ...haip, walletProviders: provider.rootPem } },
    provider.env,
  );
  return {
    world,
    provider,
    close: async () => {
      await world.close();
      await rm(provider.dir, { recursive: true, force: true });
    },
  };
}
