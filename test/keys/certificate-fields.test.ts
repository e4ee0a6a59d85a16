import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { authorityKeyIdentifierOf, dnsNamesOf, maySign } from '../../src/keys/certificate-fields.ts';
import { KeyUsage, keyIdentifierOf, makeCertificate } from '../oid4vp/certificates.ts';

const read = (der: string) => new X509Certificate(Buffer.from(der, 'base64'));

describe('certificate fields (kept per certificate)', () => {
  it('key usage and dNSNames are read from each certificate, asked once or many times', async () => {
    const signing = await makeCertificate({
      subject: 'CN=Signing verifier',
      dnsNames: ['Verifier.Example'],
      keyUsage: KeyUsage.digitalSignature,
    });
    const encrypting = await makeCertificate({
      subject: 'CN=Encrypting only',
      dnsNames: ['other.example', 'third.example'],
      keyUsage: KeyUsage.keyEncipherment,
    });
    const plain = await makeCertificate({ subject: 'CN=No extensions' });
    for (let round = 0; round < 3; round++) {
      // A fresh X509Certificate each round, as each request object brings its own x5c.
      assert.equal(maySign(read(signing.der)), true);
      assert.deepEqual(dnsNamesOf(read(signing.der)), ['verifier.example']);
      assert.equal(maySign(read(encrypting.der)), false);
      assert.deepEqual(dnsNamesOf(read(encrypting.der)), ['other.example', 'third.example']);
      assert.equal(maySign(read(plain.der)), true);
      assert.deepEqual(dnsNamesOf(read(plain.der)), []);
    }
  });

  it("the authority key identifier is the issuing CA's key identifier, base64url; none without the extension", async () => {
    const ca = await makeCertificate({ subject: 'CN=Root', ca: true, keyIdentifiers: true });
    const leaf = await makeCertificate({ subject: 'CN=Leaf', issuer: ca, keyIdentifiers: true });
    const bare = await makeCertificate({ subject: 'CN=Bare', issuer: ca });
    for (let round = 0; round < 2; round++) {
      assert.equal(authorityKeyIdentifierOf(read(leaf.der)), await keyIdentifierOf(ca));
      // A self-signed CA names its own key as its authority.
      assert.equal(authorityKeyIdentifierOf(read(ca.der)), await keyIdentifierOf(ca));
      assert.equal(authorityKeyIdentifierOf(read(bare.der)), null);
    }
  });

  it('what a caller is given cannot change what the next caller reads', async () => {
    const certificate = await makeCertificate({ subject: 'CN=Named', dnsNames: ['named.example'] });
    const names = dnsNamesOf(read(certificate.der)) as string[];
    assert.throws(() => names.push('attacker.example'), TypeError);
    assert.deepEqual(dnsNamesOf(read(certificate.der)), ['named.example']);
  });
});
