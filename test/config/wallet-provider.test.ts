import 'reflect-metadata';
import assert from 'node:assert/strict';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as x509 from '@peculiar/x509';
import { ConfigError, readConfig } from '../../src/config/config.ts';
import { loadWalletProvider } from '../../src/config/wallet-provider.ts';
import { createDevelopmentWalletProvider } from '../../src/keys/development-wallet-provider.ts';
import { coffer } from '../helpers/cli.ts';
import { createWalletProvider, type WalletProviderFiles } from '../oid4vci/haip-helpers.ts';
import { makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';

describe('coffer wallet-provider create, and WALLET_PROVIDER_KEY / WALLET_PROVIDER_CHAIN', () => {
  let provider: WalletProviderFiles;
  before(async () => {
    provider = await createWalletProvider();
  });
  after(async () => {
    await rm(provider.dir, { recursive: true, force: true });
  });

  test('the command writes a private key only its owner reads, and a chain whose root signs the signing certificate', async () => {
    assert.equal((await stat(provider.keyFile)).mode & 0o777, 0o600);
    const pems = (await readFile(provider.chainFile, 'utf8')).match(
      /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g,
    )!;
    assert.equal(pems.length, 2);
    const [signer, root] = pems.map((pem) => new X509Certificate(pem));
    assert.equal(root!.ca, true);
    assert.equal(signer!.ca, false);
    assert.ok(root!.verify(root!.publicKey), 'the root is self-signed');
    assert.ok(signer!.checkIssued(root!) && signer!.verify(root!.publicKey));
    assert.match(signer!.subject, /CN=Coffer development wallet provider/);
    const usages = (pem: string) =>
      new x509.X509Certificate(pem).getExtension(x509.KeyUsagesExtension)!.usages;
    assert.equal(usages(pems[0]!), x509.KeyUsageFlags.digitalSignature);
    assert.equal(usages(pems[1]!), x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    assert.equal(provider.privateKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    const loaded = await loadWalletProvider(provider.keyFile, provider.chainFile, new Date());
    assert.deepEqual(loaded?.x5c, provider.x5c);
  });

  test('a name with DN syntax in it stays one name: no attribute is added', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'coffer-provider-name-'));
    try {
      const made = await createDevelopmentWalletProvider(dir, 'Acme, C=XX + OU=Evil', new Date());
      const [signerPem, rootPem] = (await readFile(made.chain, 'utf8')).match(
        /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g,
      )!;
      for (const [pem, commonName] of [
        [signerPem!, 'Acme, C=XX + OU=Evil development wallet provider'],
        [rootPem!, 'Acme, C=XX + OU=Evil development wallet provider root'],
      ] as const) {
        const subject = new x509.X509Certificate(pem).subjectName.toJSON();
        assert.deepEqual(subject, [{ CN: [commonName] }, { O: ['Acme, C=XX + OU=Evil'] }]);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('it never overwrites, and a bad command line fails with usage, not a stack trace', async () => {
    const again = await coffer({ env: {} }, 'wallet-provider', 'create', '--dir', provider.dir);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /key\.pem exists already; give another --dir \(nothing was written\)/);
    assert.doesNotMatch(again.stderr, /\n\s+at /);
    for (const args of [
      ['wallet-provider', 'create'],
      ['wallet-provider', 'rotate', '--dir', provider.dir],
      ['wallet-provider', 'create', '--dir', provider.dir, '--name', '<script>'],
    ]) {
      const refused = await coffer({ env: {} }, ...args);
      assert.equal(refused.code, 2, args.join(' '));
      assert.match(refused.stderr, /Usage: coffer/);
    }
  });

  test('the key and the chain come together', () => {
    for (const [env, variable] of [
      [{ WALLET_PROVIDER_KEY: provider.keyFile }, 'WALLET_PROVIDER_CHAIN'],
      [{ WALLET_PROVIDER_CHAIN: provider.chainFile }, 'WALLET_PROVIDER_KEY'],
    ] as const) {
      assert.throws(
        () => readConfig(env),
        (error) => error instanceof ConfigError && error.variable === variable,
      );
    }
    const config = readConfig(provider.env);
    assert.equal(config.walletProviderKey, provider.keyFile);
  });

  test('a key that is not the chain’s, not P-256, unreadable, or a chain out of order or expired is refused at start', async () => {
    const refused = async (
      key: string,
      chain: string,
      variable: string,
      pattern: RegExp,
      now = new Date(),
    ) => {
      await assert.rejects(
        loadWalletProvider(key, chain, now),
        (error) => error instanceof ConfigError && error.variable === variable && pattern.test(error.message),
      );
    };
    const other = await createWalletProvider('Other');
    try {
      await refused(
        other.keyFile,
        provider.chainFile,
        'WALLET_PROVIDER_CHAIN',
        /not the certificate of the key/,
      );
      const p384 = path.join(other.dir, 'p384.pem');
      await writeFile(
        p384,
        generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({
          format: 'pem',
          type: 'pkcs8',
        }),
      );
      await refused(p384, provider.chainFile, 'WALLET_PROVIDER_KEY', /must be a P-256 EC private key/);
      await refused(
        path.join(other.dir, 'missing.pem'),
        provider.chainFile,
        'WALLET_PROVIDER_KEY',
        /cannot read/,
      );
      await refused(provider.chainFile, provider.chainFile, 'WALLET_PROVIDER_KEY', /no PEM private key/);
      await refused(provider.keyFile, provider.keyFile, 'WALLET_PROVIDER_CHAIN', /no PEM certificate/);
      const reversed = path.join(other.dir, 'reversed.pem');
      const [signer, root] = (await readFile(provider.chainFile, 'utf8')).match(
        /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g,
      )!;
      const mixed = path.join(other.dir, 'mixed.pem');
      const otherRoot = (await readFile(other.chainFile, 'utf8')).match(
        /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g,
      )![1]!;
      await writeFile(mixed, `${signer}\n${otherRoot}\n`);
      await refused(
        provider.keyFile,
        mixed,
        'WALLET_PROVIDER_CHAIN',
        /certificate 1 is not issued by certificate 2/,
      );
      await writeFile(reversed, `${root}\n${signer}\n`);
      await refused(provider.keyFile, reversed, 'WALLET_PROVIDER_CHAIN', /not the certificate of the key/);
      const inTwoYears = new Date(Date.now() + 2 * 365 * 24 * 3600 * 1000);
      await refused(provider.keyFile, provider.chainFile, 'WALLET_PROVIDER_CHAIN', /not now/, inTwoYears);
      const expired = await makeCertificate({
        subject: 'CN=Expired provider',
        notBefore: new Date(Date.now() - 48 * 3600_000),
        notAfter: new Date(Date.now() - 24 * 3600_000),
      });
      const expiredKey = path.join(other.dir, 'expired-key.pem');
      const expiredChain = path.join(other.dir, 'expired-chain.pem');
      await writeFile(expiredKey, await privateKeyPem(expired.keys.privateKey));
      await writeFile(expiredChain, expired.pem);
      await refused(expiredKey, expiredChain, 'WALLET_PROVIDER_CHAIN', /not now/);
    } finally {
      await rm(other.dir, { recursive: true, force: true });
    }
  });
});
