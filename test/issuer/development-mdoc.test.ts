// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { base64url, Holder, IssuerSigned, type MdocContext } from '@owf/mdoc';
import * as x509 from '@peculiar/x509';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { MDL_DOCTYPE, MDL_NAMESPACE, testMdocContext } from '../helpers/issuers/mdoc-issuer.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { preAuthorizedCodeOf, redeemPreAuthorizedCode, requestCredential } from './issuer-helpers.ts';

/**
 * Issue #39, found by Credo-ts: an mdoc from a development issuer read by an mdoc library that
 * applies ISO/IEC 18013-5's certificate profile. @owf/mdoc (Credo's mdoc library) refuses an
 * issuerAuth whose certificate names no country ("Country name (C) must be present in the issuer
 * certificate's subject distinguished name") and compares an mDL's issuing_country with it. Its
 * context reads the field from the certificate's issuer name here, as Credo's does (for a
 * self-signed development certificate issuer and subject are one name).
 */
const credoLikeContext: MdocContext = {
  ...testMdocContext,
  x509: {
    ...testMdocContext.x509,
    getIssuerNameField: ({ certificate, field }) =>
      new x509.X509Certificate(certificate).issuerName.getField(field),
  },
};

const DAY = 24 * 3600_000;
/** A tenant whose name holds what RFC 4514 escapes (comma, plus, quotes, backslash, a leading #). */
const TENANT = '#Acme, Inc. + "Test" \\ <1>;=';

for (const kind of DATABASE_KINDS) {
  describe(`a development issuer's mdoc read by @owf/mdoc (${kind})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(kind, { ALLOW_PRIVATE_TARGETS: 'true' });
    });
    after(() => server.close());

    /** `coffer issuer enable` without files, an mDL configuration, and one mDL issued to a wallet. */
    async function developmentMdoc(extra: string[], elements: Record<string, unknown>) {
      const { clientId, token } = await server.createMaster(TENANT);
      const enabled = await coffer(
        server,
        'issuer',
        'enable',
        '--client',
        String(clientId),
        ...extra,
        '--json',
      );
      assert.equal(enabled.code, 0, enabled.stderr);
      const { credential_issuer: issuerId, certificate } = JSON.parse(enabled.stdout);
      const api = (method: string, p: string, body: unknown) =>
        server.request(method, p, { headers: { 'x-api-token': token }, body });
      const put = await api('PUT', '/v1/issuer/configurations/mdl', {
        format: 'mso_mdoc',
        doctype: MDL_DOCTYPE,
        claims: Object.keys(elements).map((name) => ({ path: [MDL_NAMESPACE, name] })),
      });
      assert.equal(put.status, 201, put.text);
      const offer = await api('POST', '/v1/issuer/offers', {
        configuration_ids: ['mdl'],
        claims: { mdl: { [MDL_NAMESPACE]: elements } },
      });
      assert.equal(offer.status, 201, offer.text);
      const world = { server, issuerId } as any;
      const token_ = await redeemPreAuthorizedCode(world, await preAuthorizedCodeOf(offer.body.data));
      assert.equal(token_.status, 200, token_.text);
      const issued = await requestCredential(world, token_.body.access_token, 'mdl');
      assert.equal(issued.status, 200, JSON.stringify(issued.body));
      const credential = issued.body.credentials[0].credential as string;
      const [der] = IssuerSigned.decode(base64url.decode(credential)).issuerAuth.certificateChain;
      // The reader trusts the certificate the operator was shown, as a tester adds it to a wallet.
      assert.equal(new X509Certificate(der!).fingerprint256, certificate.sha256);
      return { credential, der: der! };
    }

    const readByOwfMdoc = (credential: string, der: Uint8Array) =>
      Holder.verifyIssuerSigned(
        { issuerSigned: credential, trustedCertificates: [der], now: new Date() },
        credoLikeContext,
      );

    it('is accepted: its certificate names a country (ZZ by default), and @owf/mdoc verifies it', async () => {
      const { credential, der } = await developmentMdoc([], { given_name: 'Ada' });
      await readByOwfMdoc(credential, der);
      assert.deepEqual(new x509.X509Certificate(der).subjectName.getField('C'), ['ZZ']);
    });

    it("with --country DE it names DE, and an mDL's issuing_country DE matches it", async () => {
      const { credential, der } = await developmentMdoc(['--country', 'DE'], {
        given_name: 'Ada',
        issuing_country: 'DE',
      });
      await readByOwfMdoc(credential, der);
      assert.deepEqual(new x509.X509Certificate(der).subjectName.getField('C'), ['DE']);
    });

    it("carries ISO/IEC 18013-5 Annex B's signer fields (asserted here, beyond what @owf/mdoc checks)", async () => {
      const { der } = await developmentMdoc([], { given_name: 'Ada' });
      const certificate = new x509.X509Certificate(der);
      // Subject C (PrintableString), O and CN, the tenant's name exactly, never parsed as a DN;
      // self-signed, so the issuer name is the same.
      assert.deepEqual(certificate.subjectName.toJSON(), [{ C: ['ZZ'] }, { O: [TENANT] }, { CN: [TENANT] }]);
      assert.equal(certificate.issuer, certificate.subject);
      const countryAttribute = new Uint8Array(certificate.subjectName.toArrayBuffer());
      // 06 03 55 04 06 (id-at-countryName) then 13 (PrintableString) 02 'Z' 'Z'.
      assert.ok(
        Buffer.from(countryAttribute).includes(
          Buffer.from([0x06, 0x03, 0x55, 0x04, 0x06, 0x13, 0x02, 0x5a, 0x5a]),
        ),
      );
      const keyUsage = certificate.getExtension(x509.KeyUsagesExtension)!;
      assert.equal(keyUsage.critical, true);
      assert.equal(keyUsage.usages, x509.KeyUsageFlags.digitalSignature);
      const issuerAltName = certificate.getExtension(x509.IssuerAlternativeNameExtension);
      assert.ok(issuerAltName, 'issuerAltName (Annex B: a URI or e-mail of the issuer)');
      assert.equal(issuerAltName.names.items[0]!.type, 'url');
      const ski = certificate.getExtension(x509.SubjectKeyIdentifierExtension)!;
      const aki = certificate.getExtension(x509.AuthorityKeyIdentifierExtension)!;
      assert.ok(ski && aki);
      assert.equal(aki.keyId, ski.keyId);
      assert.ok(certificate.notAfter.getTime() - certificate.notBefore.getTime() <= 457 * DAY);
      const serial = Buffer.from(certificate.serialNumber, 'hex');
      assert.ok(serial.length >= 8 && serial.length <= 20, `serial of ${serial.length} octets`);
    });
  });
}
