import 'reflect-metadata';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as x509 from '@peculiar/x509';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { type Certified, makeCertificate, privateKeyPem } from '../oid4vp/certificates.ts';

/**
 * `coffer issuer enable` (issue #39, "Development certificates are complete"): --country names
 * the development certificate's country (ISO 3166-1 alpha-2, ZZ by default) and a bad one is a
 * usage error; an operator's own certificate that mdoc or SD-JWT VC readers would refuse is
 * enabled with warnings.
 */
for (const kind of DATABASE_KINDS) {
  describe(`coffer issuer enable on ${kind}`, () => {
    let server: TestServer;
    let dir: string;
    let ca: Certified;

    before(async () => {
      server = await startTestServer(kind);
      dir = await mkdtemp(path.join(tmpdir(), 'coffer-cli-issuer-'));
      ca = await makeCertificate({ subject: 'C=GB, CN=CLI Test Issuer CA', ca: true });
    });
    after(async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    });

    const enable = (clientId: number, ...extra: string[]) =>
      coffer(server, 'issuer', 'enable', '--client', String(clientId), ...extra);
    /** The development certificate of an enabled issuer, as its signed credentials carry it. */
    async function subjectOf(output: string) {
      const { certificate } = JSON.parse(output) as { certificate: { subject: string } };
      return certificate.subject;
    }
    /** `--key` and `--chain` files for a certificate. */
    async function files(name: string, leaf: Certified, chain = `${leaf.pem}\n${ca.pem}\n`) {
      const key = path.join(dir, `${name}-key.pem`);
      const chainFile = path.join(dir, `${name}-chain.pem`);
      await writeFile(key, await privateKeyPem(leaf.keys.privateKey));
      await writeFile(chainFile, chain);
      return ['--key', key, '--chain', chainFile];
    }

    test('--country that is not an ISO 3166-1 alpha-2 code is a usage error (exit 2), and enables nothing', async () => {
      const { clientId } = await server.createMaster('Usage');
      const leaf = await makeCertificate({ subject: 'C=GB, CN=Usage', issuer: ca });
      for (const [args, message] of [
        [['--country', 'de'], /--country must be an ISO 3166-1 alpha-2 code in capitals .*"de"/],
        [['--country', 'DEU'], /--country must be an ISO 3166-1 alpha-2 code/],
        [['--country', 'XY'], /--country must be an ISO 3166-1 alpha-2 code/],
        [['--country', ''], /--country must be an ISO 3166-1 alpha-2 code/],
        [['--country', 'C=DE'], /--country must be an ISO 3166-1 alpha-2 code/],
        [['--country'], /--country/],
        [['--country', 'DE', ...(await files('usage', leaf))], /--country names the development certificate/],
      ] as const) {
        const r = await enable(clientId, ...args);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, message, args.join(' '));
        assert.match(r.stderr, /Usage: coffer/);
        assert.doesNotMatch(r.stderr, /\n\s+at /);
        assert.equal(r.stdout, '');
      }
      const json = await enable(clientId, '--country', 'Germany', '--json');
      assert.equal(json.code, 2);
      assert.match(JSON.parse(json.stderr).error, /--country must be an ISO 3166-1 alpha-2 code/);
      const metadata = await server.request(
        'GET',
        `/.well-known/openid-credential-issuer/issuers/${clientId}`,
      );
      assert.equal(metadata.status, 404, 'no refused command made the client an issuer');
    });

    test('without files: C=ZZ by default, the given --country otherwise, the tenant named as O and CN', async () => {
      const { clientId } = await server.createMaster('Acme University');
      const r = await enable(clientId);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Certificate C=ZZ, O=Acme University, CN=Acme University, valid until \d{4}-/);
      assert.match(r.stdout, /Warning: Development certificate: self-signed/);
      assert.equal(
        (r.stdout.match(/Warning:/g) ?? []).length,
        1,
        'a complete certificate warns of nothing else',
      );

      const again = await enable(clientId, '--country', 'DE', '--json');
      assert.equal(again.code, 0, again.stderr);
      const enabled = JSON.parse(again.stdout);
      assert.equal(await subjectOf(again.stdout), 'C=DE, O=Acme University, CN=Acme University');
      assert.equal(enabled.development, true);
      assert.match(enabled.warning, /^Development certificate: self-signed/);
      assert.deepEqual(enabled.warnings, [enabled.warning]);
    });

    test('with --key and --chain: a signer certificate without C, or not naming the host, enables with warnings', async () => {
      const { clientId } = await server.createMaster('Operator');
      const cases: [string, Certified, RegExp[]][] = [
        [
          'complete',
          await makeCertificate({
            subject: 'C=GB, O=Operator, CN=Operator',
            issuer: ca,
            ipAddresses: ['127.0.0.1'],
          }),
          [],
        ],
        [
          'no country',
          await makeCertificate({
            subject: 'O=Operator, CN=Operator',
            issuer: ca,
            ipAddresses: ['127.0.0.1'],
          }),
          [/signer certificate's subject names no country \(C\): mdoc readers .* refuse/],
        ],
        [
          'not naming the host',
          await makeCertificate({ subject: 'C=GB, CN=Operator', issuer: ca, dnsNames: ['issuer.example'] }),
          [/names neither 127\.0\.0\.1 nor http:\/\/127\.0\.0\.1:\d+\/issuers\/\d+ .*SD-JWT VCs/],
        ],
        [
          'neither, under a CA without a country',
          await makeCertificate({
            subject: 'CN=Operator',
            issuer: await makeCertificate({ subject: 'CN=Countryless CA', ca: true }),
          }),
          [/subject and issuer name names no country/, /names neither 127\.0\.0\.1/],
        ],
      ];
      for (const [what, leaf, expected] of cases) {
        const r = await enable(clientId, ...(await files(what, leaf, leaf.pem)), '--json');
        assert.equal(r.code, 0, `${what}: ${r.stderr}`);
        const enabled = JSON.parse(r.stdout);
        assert.equal(enabled.development, false, what);
        if (!expected.length) {
          assert.equal(enabled.warning, undefined, what);
          assert.equal(enabled.warnings, undefined, what);
          continue;
        }
        assert.equal(enabled.warnings.length, expected.length, `${what}: ${enabled.warnings}`);
        expected.forEach((pattern, i) => {
          assert.match(enabled.warnings[i], pattern, what);
        });
        assert.equal(enabled.warning, enabled.warnings.join(' '));
        const text = await enable(clientId, ...(await files(`${what}-text`, leaf, leaf.pem)));
        assert.equal(text.code, 0, text.stderr);
        for (const warning of enabled.warnings) assert.ok(text.stdout.includes(`Warning: ${warning}`), what);
      }
    });
  });
}

test('a development certificate keeps any tenant name exactly, as UTF8String attributes, never parsed as a DN', async () => {
  const { createDevelopmentCertificate } = await import('../../src/keys/development-certificate.ts');
  for (const name of [
    'Acme, Inc. + "Test"',
    '#0403 hex-looking',
    ' leading and trailing space ',
    'CN=Someone Else, O=Other, C=US',
    'back\\slash; <angle> = equals',
    'Ünïcödé 名前',
  ]) {
    const made = await createDevelopmentCertificate({
      name,
      country: 'ZZ',
      dnsName: 'issuer.example',
      url: 'https://issuer.example',
      now: new Date(),
    });
    const certificate = new x509.X509Certificate(made.chainPem);
    assert.deepEqual(certificate.subjectName.toJSON(), [{ C: ['ZZ'] }, { O: [name] }, { CN: [name] }], name);
  }
  const long = 'x'.repeat(70);
  const made = await createDevelopmentCertificate({
    name: long,
    country: 'ZZ',
    dnsName: 'issuer.example',
    url: 'https://issuer.example',
    now: new Date(),
  });
  // X.520's upper bound for CN and O.
  assert.deepEqual(new x509.X509Certificate(made.chainPem).subjectName.getField('CN'), ['x'.repeat(64)]);
  await assert.rejects(
    createDevelopmentCertificate({
      name: 'n',
      country: 'de',
      dnsName: 'h',
      url: 'https://h',
      now: new Date(),
    }),
    /the country must be an ISO 3166-1 alpha-2 code/,
  );
});
