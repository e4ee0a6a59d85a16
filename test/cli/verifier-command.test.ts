import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { type Certified, makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';

const HOUR = 3600_000;

/**
 * `coffer verifier enable` (issue #30): a bad command line is a usage error (exit 2), a key or
 * chain that cannot sign requests is refused with the reason (exit 1), and neither makes the
 * client a verifier; without files the client gets a development certificate, with a warning.
 */
for (const kind of DATABASE_KINDS) {
  describe(`coffer verifier enable on ${kind}`, () => {
    let server: TestServer;
    let dir: string;
    let ca: Certified;
    let leaf: Certified;

    before(async () => {
      server = await startTestServer(kind);
      dir = await mkdtemp(path.join(tmpdir(), 'coffer-cli-verifier-'));
      ca = await makeCertificate({ subject: 'CN=CLI Test CA, O=Test', ca: true });
      leaf = await makeCertificate({ subject: 'CN=Shop Verifier, O=Shop', issuer: ca });
    });
    after(async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    });

    async function file(name: string, text: string): Promise<string> {
      const written = path.join(dir, name);
      await writeFile(written, text);
      return written;
    }
    /** Whether the client may ask wallets for credentials: 201 once enabled, 403 before. */
    const createStatus = async (token: string) =>
      (
        await server.request('POST', '/v1/verifier/requests', {
          headers: { 'x-api-token': token },
          body: {
            dcql_query: {
              credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:v'] } }],
            },
          },
        })
      ).status;
    const enable = (clientId: number, ...extra: string[]) =>
      coffer(server, 'verifier', 'enable', '--client', String(clientId), ...extra);

    test('command lines it cannot read are usage errors (exit 2), never a stack trace', async () => {
      const key = await file('usage-key.pem', await privateKeyPem(leaf.keys.privateKey));
      const chain = await file('usage-chain.pem', leaf.pem);
      const { clientId } = await server.createMaster('Usage');
      for (const [args, message] of [
        [['verifier'], /verifier needs enable/],
        [['verifier', 'disable', '--client', String(clientId)], /unknown command "verifier disable"/],
        [['verifier', 'enable'], /--client is required/],
        [['verifier', 'enable', '--client'], /--client/],
        [['verifier', 'enable', '--client', 'abc'], /--client must be a positive integer/],
        [['verifier', 'enable', '--client', String(clientId), '--key', key], /--key and --chain go together/],
        [
          ['verifier', 'enable', '--client', String(clientId), '--chain', chain],
          /--key and --chain go together/,
        ],
        [['verifier', 'enable', '--client', String(clientId), 'extra'], /unexpected argument extra/],
        [['verifier', 'enable', '--client', String(clientId), '--bogus'], /Unknown option '--bogus'/],
        [
          [
            'verifier',
            'enable',
            '--client',
            String(clientId),
            '--key',
            path.join(dir, 'missing.pem'),
            '--chain',
            chain,
          ],
          /cannot read .*missing\.pem: ENOENT/,
        ],
      ] as const) {
        const r = await coffer(server, ...args);
        assert.equal(r.code, 2, `coffer ${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, message, args.join(' '));
        assert.match(r.stderr, /Usage: coffer/, args.join(' '));
        assert.doesNotMatch(r.stderr, /\n\s+at /, `stack trace for ${args.join(' ')}`);
        assert.equal(r.stdout, '');
      }
      const json = await coffer(server, 'verifier', 'enable', '--json');
      assert.equal(json.code, 2);
      assert.match(JSON.parse(json.stderr).error, /--client is required/);
    });

    test('an unknown client, or a key and chain that cannot sign its requests, are refused (exit 1)', async () => {
      const { clientId, token } = await server.createMaster('Refused');
      const leafKey = await file('leaf-key.pem', await privateKeyPem(leaf.keys.privateKey));
      const other = await makeCertificate({ subject: 'CN=Someone Else', issuer: ca });
      const expired = await makeCertificate({
        subject: 'CN=Expired Verifier',
        issuer: ca,
        notBefore: new Date(Date.now() - 48 * HOUR),
        notAfter: new Date(Date.now() - 24 * HOUR),
      });
      const future = await makeCertificate({
        subject: 'CN=Future Verifier',
        issuer: ca,
        notBefore: new Date(Date.now() + 24 * HOUR),
        notAfter: new Date(Date.now() + 48 * HOUR),
      });
      const pemOf = (key: ReturnType<typeof generateKeyPairSync>['privateKey']) =>
        key.export({ format: 'pem', type: 'pkcs8' }).toString();
      const rsa = pemOf(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
      const ed25519 = pemOf(generateKeyPairSync('ed25519').privateKey);
      const secp256k1 = pemOf(generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey);
      const chain = `${leaf.pem}\n${ca.pem}\n`;
      const cases: [string, string, string, RegExp][] = [
        ['unknown client', '', '', /Client 999999 was not found/],
        [
          'a key of another certificate',
          leafKey,
          `${other.pem}\n${ca.pem}`,
          /the first certificate of the chain is not of this key/,
        ],
        [
          'an expired certificate',
          await privateKeyPem(expired.keys.privateKey),
          expired.pem,
          /the certificate is not valid now/,
        ],
        [
          'a certificate not valid yet',
          await privateKeyPem(future.keys.privateKey),
          future.pem,
          /the certificate is not valid now/,
        ],
        ['an RSA key', rsa, chain, /the key must be an EC key on P-256, P-384 or P-521/],
        ['an Ed25519 key', ed25519, chain, /the key must be an EC key on P-256, P-384 or P-521/],
        ['an EC key on secp256k1', secp256k1, chain, /the key must be an EC key on P-256, P-384 or P-521/],
        [
          'a key file without a key',
          'not a key',
          chain,
          /the key file holds no private key that can be read/,
        ],
        [
          'a chain without a certificate',
          leafKey,
          'not a certificate',
          /the chain file holds no PEM certificate/,
        ],
        [
          'a chain with a broken certificate',
          leafKey,
          '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
          /the chain file holds a certificate that cannot be read/,
        ],
      ];
      for (const [what, keyPem, chainPem, message] of cases) {
        const r =
          what === 'unknown client'
            ? await enable(999999)
            : await enable(
                clientId,
                '--key',
                keyPem === leafKey ? leafKey : await file(`${what}-key.pem`, keyPem),
                '--chain',
                await file(`${what}-chain.pem`, chainPem),
              );
        assert.equal(r.code, 1, `${what}: ${r.stderr}`);
        assert.match(r.stderr, /^coffer: /, what);
        assert.match(r.stderr, message, what);
        assert.doesNotMatch(r.stderr, /\n\s+at |Usage:/, what);
        assert.equal(r.stdout, '', what);
      }
      assert.equal(await createStatus(token), 403, 'no refused command made the client a verifier');
    });

    test('without files: a development certificate, its client ids (x509_hash among them) and a warning', async () => {
      const { clientId, token } = await server.createMaster('Development');
      assert.equal(await createStatus(token), 403);
      const r = await enable(clientId);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^Client ${clientId} verifies presentations as `));
      assert.match(r.stdout, /x509_san_dns:127\.0\.0\.1 and x509_hash:[A-Za-z0-9_-]{43}\./);
      // ISO 3166-1's user-assigned ZZ as its country (mdoc readers ask a C of every certificate).
      assert.match(
        r.stdout,
        new RegExp(
          `Certificate C=ZZ, O=Coffer verifier ${clientId}, CN=Coffer verifier ${clientId}, valid until \\d{4}-`,
        ),
      );
      assert.match(r.stdout, /Warning: Development certificate: self-signed/);
      assert.equal(await createStatus(token), 201);

      const again = await enable(clientId, '--json');
      assert.equal(again.code, 0, again.stderr);
      const enabled = JSON.parse(again.stdout);
      assert.equal(enabled.client_id, clientId);
      assert.equal(enabled.development, true);
      assert.match(enabled.warning, /^Development certificate: self-signed/);
      assert.equal(enabled.client_ids.length, 2);
      assert.equal(enabled.client_ids[0], 'x509_san_dns:127.0.0.1');
      assert.match(enabled.client_ids[1], /^x509_hash:[A-Za-z0-9_-]{43}$/);
      assert.match(enabled.certificate.subject, new RegExp(`CN=Coffer verifier ${clientId}`));
      assert.ok(new Date(enabled.certificate.not_after).getTime() > Date.now() + 300 * 24 * HOUR);
      assert.match(enabled.certificate.sha256, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    });

    test('with --key and --chain: the x509_hash of the given leaf, no warning', async () => {
      const { clientId, token } = await server.createMaster('Production');
      const r = await enable(
        clientId,
        '--key',
        await file('production-key.pem', await privateKeyPem(leaf.keys.privateKey)),
        '--chain',
        await file('production-chain.pem', `${leaf.pem}\n${ca.pem}\n`),
        '--json',
      );
      assert.equal(r.code, 0, r.stderr);
      const enabled = JSON.parse(r.stdout);
      const hash = createHash('sha256').update(Buffer.from(leaf.der, 'base64')).digest('base64url');
      // The leaf names no DNS host, so x509_hash is its one client id.
      assert.deepEqual(enabled.client_ids, [`x509_hash:${hash}`]);
      assert.equal(enabled.development, false);
      assert.equal(enabled.warning, undefined);
      assert.equal(enabled.certificate.sha256, new X509Certificate(leaf.pem).fingerprint256);
      assert.equal(await createStatus(token), 201);
    });
  });
}
