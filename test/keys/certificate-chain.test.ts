import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chainsToAnchor, parseCertificate } from '../../src/keys/certificate-chain.ts';
import { makeCertificate } from '../oid4vp/certificates.ts';

describe('certificate chains (parsed and checked once per certificate)', () => {
  it('a leaf chains to the CA that signed it, and never to an impostor CA of the same name, however often asked', async () => {
    const realCa = await makeCertificate({ subject: 'CN=Issuer CA', ca: true });
    // Same subject, its own key: names match, the signature does not.
    const impostorCa = await makeCertificate({ subject: 'CN=Issuer CA', ca: true });
    const leaf = await makeCertificate({ subject: 'CN=Document signer', issuer: realCa });
    const now = new Date();
    for (let round = 0; round < 3; round++) {
      const parsedLeaf = parseCertificate(Buffer.from(leaf.der, 'base64'));
      const real = parseCertificate(Buffer.from(realCa.der, 'base64'));
      const impostor = parseCertificate(Buffer.from(impostorCa.der, 'base64'));
      assert.equal(chainsToAnchor(parsedLeaf, [], [real], now), true);
      assert.equal(chainsToAnchor(parsedLeaf, [], [impostor], now), false);
      assert.equal(chainsToAnchor(parsedLeaf, [impostor], [impostor], now), false);
    }
  });

  it('a chain counts only while every certificate in it is valid: leaf, intermediate and anchor', async () => {
    const HOUR = 3600_000;
    const now = new Date();
    const past = { notBefore: new Date(now.getTime() - 48 * HOUR), notAfter: new Date(now.getTime() - HOUR) };
    const future = {
      notBefore: new Date(now.getTime() + HOUR),
      notAfter: new Date(now.getTime() + 48 * HOUR),
    };
    const root = await makeCertificate({ subject: 'CN=Root', ca: true });
    const parse = (c: { der: string }) => parseCertificate(Buffer.from(c.der, 'base64'));
    const cases: [string, { der: string }, { der: string }[], { der: string }][] = [];
    cases.push([
      'an expired leaf',
      await makeCertificate({ subject: 'CN=Old', issuer: root, ...past }),
      [],
      root,
    ]);
    cases.push([
      'a leaf not yet valid',
      await makeCertificate({ subject: 'CN=Early', issuer: root, ...future }),
      [],
      root,
    ]);
    const oldIntermediate = await makeCertificate({ subject: 'CN=Old CA', issuer: root, ca: true, ...past });
    cases.push([
      'an expired intermediate',
      await makeCertificate({ subject: 'CN=Leaf', issuer: oldIntermediate }),
      [oldIntermediate],
      root,
    ]);
    const oldRoot = await makeCertificate({ subject: 'CN=Old Root', ca: true, ...past });
    cases.push([
      'an expired anchor',
      await makeCertificate({ subject: 'CN=Leaf', issuer: oldRoot }),
      [],
      oldRoot,
    ]);
    const selfAnchored = await makeCertificate({ subject: 'CN=Pinned', ...past });
    cases.push(['an expired leaf that is itself an anchor', selfAnchored, [], selfAnchored]);
    for (const [what, leaf, intermediates, anchor] of cases) {
      assert.equal(chainsToAnchor(parse(leaf), intermediates.map(parse), [parse(anchor)], now), false, what);
    }
    const fresh = await makeCertificate({ subject: 'CN=Fresh', issuer: root });
    assert.equal(chainsToAnchor(parse(fresh), [], [parse(root)], now), true, 'a valid chain still counts');
  });

  it('parses a PEM and its DER to the same certificate, and refuses bytes that are not one', async () => {
    const ca = await makeCertificate({ subject: 'CN=Root', ca: true });
    const pem = parseCertificate(Buffer.from(ca.der, 'base64')).toString();
    assert.equal(
      parseCertificate(pem).fingerprint256,
      parseCertificate(Buffer.from(ca.der, 'base64')).fingerprint256,
    );
    assert.equal(parseCertificate(pem), parseCertificate(pem), 'parsed once');
    assert.throws(() => parseCertificate(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01])));
    assert.throws(() => parseCertificate('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----'));
  });
});
