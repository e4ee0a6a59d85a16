import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createOutboundClient } from '../../../src/http/outbound.ts';
import type { TrustError } from '../../../src/trust/trust-error.ts';
import type { TrustedListKind } from '../../../src/trust/trusted-lists/trusted-list.ts';
import {
  createTrustedListResolver,
  listedAnchors,
  outboundListFetcher,
  RETRY_FAILED_LIST_MS,
  serviceVouchingFor,
  trustedListIssuerTrust,
} from '../../../src/trust/trusted-lists/trusted-list-resolver.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../../helpers/issuers/issuer-ca.ts';
import type { Certified } from '../../oid4vp/certificates.ts';
import {
  etsiListXml,
  type ListServer,
  LOTE_PID_ISSUANCE,
  newListSigner,
  PID_PROVIDER,
  QEAA,
  signEtsiList,
  signLote,
  startListServer,
  WALLET_PROVIDER,
  WITHDRAWN,
} from '../test-trusted-lists.ts';

/**
 * The trusted-list reader against lists made and signed in the test (xadesjs, jose) and served
 * over HTTPS: a LoTL and its member list, the services that count, and every way a list is
 * refused — tampered, another signer, expired, a member signed by a key its pointer does not
 * name, signature wrapping, a DOCTYPE, a server that is down.
 */

const x509 = (c: Certified) => new X509Certificate(Buffer.from(c.der, 'base64'));

describe('trusted lists: reading, verifying and matching', () => {
  let server: ListServer;
  let lotlSigner: Certified;
  let memberSigner: Certified;
  let pid: IssuerIdentity;
  let eaa: IssuerIdentity;
  let wallet: IssuerIdentity;
  let revoked: IssuerIdentity;
  let stranger: IssuerIdentity;

  before(async () => {
    server = await startListServer();
    lotlSigner = await newListSigner('LoTL signer');
    memberSigner = await newListSigner('Member signer');
    pid = await makeIssuerIdentity('PID Provider');
    eaa = await makeIssuerIdentity('QEAA Provider');
    wallet = await makeIssuerIdentity('Wallet Provider');
    revoked = await makeIssuerIdentity('Withdrawn Provider');
    stranger = await makeIssuerIdentity('Stranger Provider');
    server.put(
      '/member.xml',
      await signEtsiList(
        {
          territory: 'IT',
          services: [
            { type: PID_PROVIDER, name: 'PID issuance', certificates: [pid.ca] },
            { type: QEAA, name: 'QEAA issuance', certificates: [eaa.signer] },
            { type: WALLET_PROVIDER, name: 'Wallet', certificates: [wallet.ca] },
            { type: PID_PROVIDER, name: 'Old PID', status: WITHDRAWN, certificates: [revoked.ca] },
          ],
        },
        memberSigner,
      ),
    );
    server.put(
      '/lotl.xml',
      await signEtsiList(
        { pointers: [{ url: `${server.url}/member.xml`, signers: [memberSigner] }] },
        lotlSigner,
      ),
    );
  });
  after(() => server.close());

  function resolverFor(
    path: string,
    signers: Certified[],
    kind: TrustedListKind = 'etsi-119612',
    now = () => new Date(),
  ) {
    const rejected: { url: string; code: string }[] = [];
    const resolver = createTrustedListResolver({
      sources: [{ url: `${server.url}${path}`, kind, signers: signers.map(x509) }],
      fetchList: outboundListFetcher(createOutboundClient({ allowPrivateTargets: true, ca: server.ca.pem })),
      now,
      onRejected: (url, error: TrustError) => rejected.push({ url, code: error.code }),
    });
    return { resolver, rejected, url: `${server.url}${path}` };
  }
  const codeOf = async (promise: Promise<unknown>) =>
    promise.then(
      () => 'accepted',
      (error: TrustError) => error.code,
    );

  test('a LoTL is followed to its member list; granted PID and (Q)EAA services vouch for their issuers only', async () => {
    const { resolver, url } = resolverFor('/lotl.xml', [lotlSigner]);
    const { services, lists } = await resolver.issuerServices(url);
    assert.deepEqual(lists, [url, `${server.url}/member.xml`]);
    assert.deepEqual(
      services.map((s) => [s.name, s.listUrl]),
      [
        ['PID issuance', `${server.url}/member.xml`],
        ['QEAA issuance', `${server.url}/member.xml`],
      ],
    );
    const now = new Date();
    assert.equal(serviceVouchingFor(services, x509(pid.signer), [], now)?.name, 'PID issuance');
    assert.equal(serviceVouchingFor(services, x509(eaa.signer), [], now)?.name, 'QEAA issuance');
    // A wallet provider's service, a withdrawn one and an unlisted CA make no issuer trusted.
    for (const other of [wallet, revoked, stranger])
      assert.equal(serviceVouchingFor(services, x509(other.signer), [], now), undefined);
    const trust = trustedListIssuerTrust(resolver);
    assert.equal(await trust(x509(pid.signer), [], now), `${server.url}/member.xml`);
    assert.equal(await trust(x509(stranger.signer), [], now), null);
  });

  test('wallet-provider and relying-party access services are anchors of their own role only', async () => {
    const { resolver } = resolverFor('/lotl.xml', [lotlSigner]);
    const providers = await listedAnchors(resolver, 'wallet_provider')();
    assert.deepEqual(
      providers.map((c) => c.fingerprint256),
      [x509(wallet.ca).fingerprint256],
      'the granted wallet provider, and no PID or (Q)EAA issuer',
    );
    assert.deepEqual(await listedAnchors(resolver, 'relying_party_access')(), []);
    // Issuer trust never comes from the wallet provider's service.
    assert.equal(await trustedListIssuerTrust(resolver)(x509(wallet.signer), [], new Date()), null);
    // A list that cannot be had vouches for nobody, and does not fail the others.
    server.put('/gone.xml', null);
    const both = createTrustedListResolver({
      sources: [
        { url: `${server.url}/gone.xml`, kind: 'etsi-119612', signers: [x509(lotlSigner)] },
        { url: `${server.url}/lotl.xml`, kind: 'etsi-119612', signers: [x509(lotlSigner)] },
      ],
      fetchList: outboundListFetcher(createOutboundClient({ allowPrivateTargets: true, ca: server.ca.pem })),
      now: () => new Date(),
    });
    assert.equal((await listedAnchors(both, 'wallet_provider')()).length, 1);
  });

  test('a verified list is cached, and concurrent requests share one fetch', async () => {
    const { resolver, url } = resolverFor('/lotl.xml', [lotlSigner]);
    const before = server.served.length;
    await Promise.all([
      resolver.issuerServices(url),
      resolver.issuerServices(url),
      resolver.issuerServices(url),
    ]);
    await resolver.issuerServices(url);
    assert.deepEqual(server.served.slice(before), ['/lotl.xml', '/member.xml']);
  });

  test('a list with a service certificate swapped after signing is refused', async () => {
    const signed = await signEtsiList(
      { services: [{ type: PID_PROVIDER, name: 'PID', certificates: [pid.ca] }] },
      lotlSigner,
    );
    server.put('/tampered.xml', signed.replace(pid.ca.der, stranger.ca.der));
    const { resolver, url, rejected } = resolverFor('/tampered.xml', [lotlSigner]);
    assert.equal(await codeOf(resolver.issuerServices(url)), 'signature_invalid');
    assert.deepEqual(rejected, [{ url, code: 'signature_invalid' }]);
  });

  test('a list signed by anyone but a configured signer is refused, whatever its KeyInfo says', async () => {
    const { resolver, url } = resolverFor('/lotl.xml', [memberSigner]);
    assert.equal(await codeOf(resolver.issuerServices(url)), 'signature_invalid');
  });

  test('a list past its NextUpdate is refused as expired', async () => {
    server.put('/expired.xml', await signEtsiList({ nextUpdate: new Date(Date.now() - 60_000) }, lotlSigner));
    const { resolver, url } = resolverFor('/expired.xml', [lotlSigner]);
    assert.equal(await codeOf(resolver.issuerServices(url)), 'list_expired');
  });

  test('a member list signed by a key its LoTL pointer does not name is not used', async () => {
    server.put(
      '/impostor.xml',
      await signEtsiList(
        { services: [{ type: PID_PROVIDER, name: 'Impostor', certificates: [stranger.ca] }] },
        lotlSigner,
      ),
    );
    server.put(
      '/lotl-2.xml',
      await signEtsiList(
        { pointers: [{ url: `${server.url}/impostor.xml`, signers: [memberSigner] }] },
        lotlSigner,
      ),
    );
    const { resolver, url, rejected } = resolverFor('/lotl-2.xml', [lotlSigner]);
    const { services, lists } = await resolver.issuerServices(url);
    assert.deepEqual(services, []);
    assert.deepEqual(lists, [url]);
    assert.deepEqual(rejected, [{ url: `${server.url}/impostor.xml`, code: 'signature_invalid' }]);
  });

  test('signature wrapping is refused: an Id reference, and a signed root moved under a forged one', async () => {
    // Signed by the real signer, but over an element named by Id rather than the whole document.
    const genuine = etsiListXml({ services: [{ type: PID_PROVIDER, name: 'PID', certificates: [pid.ca] }] });
    const { DOMParser, XMLSerializer } = await import('@xmldom/xmldom');
    const xadesjs = await import('xadesjs');
    const document = new DOMParser().parseFromString(genuine, 'text/xml');
    const signature = await new xadesjs.SignedXml().Sign(
      { name: 'ECDSA', hash: 'SHA-256' } as never,
      lotlSigner.keys.privateKey as never,
      document as never,
      { x509: [lotlSigner.der], references: [{ uri: '#tsl', hash: 'SHA-256', transforms: ['exc-c14n'] }] },
    );
    document.documentElement!.appendChild(signature.GetXml() as never);
    const byId = new XMLSerializer().serializeToString(document);
    // The attacker's root, with the signed original hidden inside, keeps the reference resolvable.
    const forged = etsiListXml({
      services: [{ type: PID_PROVIDER, name: 'Forged', certificates: [stranger.ca] }],
    });
    const wrapped = forged
      .replace(
        '</TrustServiceStatusList>',
        `${byId.slice(byId.indexOf('<ds:Signature'), byId.indexOf('</TrustServiceStatusList>'))}<Wrapper>${byId
          .replace(/<\?xml[^>]*\?>/, '')
          .replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '')}</Wrapper></TrustServiceStatusList>`,
      )
      .replace('Id="tsl" TSLTag', 'Id="forged" TSLTag');
    server.put('/wrapped-id.xml', wrapped);
    const a = resolverFor('/wrapped-id.xml', [lotlSigner]);
    assert.equal(await codeOf(a.resolver.issuerServices(a.url)), 'signature_invalid');

    // A whole-document signature moved from its signed root onto a forged one.
    const signed = await signEtsiList(
      { services: [{ type: PID_PROVIDER, name: 'PID', certificates: [pid.ca] }] },
      lotlSigner,
    );
    const signatureXml = signed.slice(
      signed.indexOf('<ds:Signature'),
      signed.indexOf('</TrustServiceStatusList>'),
    );
    server.put(
      '/wrapped-moved.xml',
      forged.replace('</TrustServiceStatusList>', `${signatureXml}</TrustServiceStatusList>`),
    );
    const b = resolverFor('/wrapped-moved.xml', [lotlSigner]);
    assert.equal(await codeOf(b.resolver.issuerServices(b.url)), 'signature_invalid');
  });

  test('a list declaring a DOCTYPE (entities) is refused before anything is parsed', async () => {
    const signed = await signEtsiList({}, lotlSigner);
    server.put(
      '/doctype.xml',
      signed.replace(
        '<TrustServiceStatusList',
        '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><TrustServiceStatusList',
      ),
    );
    const { resolver, url } = resolverFor('/doctype.xml', [lotlSigner]);
    assert.equal(await codeOf(resolver.issuerServices(url)), 'invalid_list');
  });

  test('a list server that is down is fetch_failed, and is not asked again for a minute', async () => {
    server.put('/down.xml', null);
    let clock = Date.now();
    const { resolver, url } = resolverFor('/down.xml', [lotlSigner], 'etsi-119612', () => new Date(clock));
    const before = server.served.length;
    assert.equal(await codeOf(resolver.issuerServices(url)), 'fetch_failed');
    assert.equal(await codeOf(resolver.issuerServices(url)), 'fetch_failed');
    assert.deepEqual(server.served.slice(before), ['/down.xml'], 'the second verification waits on no fetch');
    clock += RETRY_FAILED_LIST_MS + 1;
    assert.equal(await codeOf(resolver.issuerServices(url)), 'fetch_failed');
    assert.deepEqual(server.served.slice(before), ['/down.xml', '/down.xml'], 'asked again after the minute');
  });

  test('a TS 119 602 LoTE signed with JAdES: its PID issuance service vouches; another x5c or signer is refused', async () => {
    const list = {
      services: [
        { type: LOTE_PID_ISSUANCE, name: 'PID issuance', certificates: [pid.ca] },
        {
          type: 'http://uri.etsi.org/19602/SvcType/WalletSolution/Issuance',
          name: 'Wallet',
          certificates: [wallet.ca],
        },
      ],
    };
    server.put('/lote.jwt', await signLote(list, lotlSigner));
    const good = resolverFor('/lote.jwt', [lotlSigner], 'lote-119602');
    const { services } = await good.resolver.issuerServices(good.url);
    assert.deepEqual(
      services.map((s) => s.name),
      ['PID issuance'],
    );
    assert.equal(serviceVouchingFor(services, x509(pid.signer), [], new Date())?.listUrl, good.url);
    assert.equal(serviceVouchingFor(services, x509(wallet.signer), [], new Date()), undefined);

    const other = resolverFor('/lote.jwt', [memberSigner], 'lote-119602');
    assert.equal(await codeOf(other.resolver.issuerServices(other.url)), 'signature_invalid');
    // Signed by a stranger who names the configured signer in x5c: the key decides.
    server.put('/lote-forged.jwt', await signLote(list, memberSigner, [lotlSigner]));
    const forged = resolverFor('/lote-forged.jwt', [lotlSigner], 'lote-119602');
    assert.equal(await codeOf(forged.resolver.issuerServices(forged.url)), 'signature_invalid');
    const tampered = (await signLote(list, lotlSigner)).split('.');
    tampered[1] = Buffer.from(
      Buffer.from(tampered[1]!, 'base64url').toString().replace(pid.ca.der, stranger.ca.der),
    ).toString('base64url');
    server.put('/lote-tampered.jwt', tampered.join('.'));
    const t = resolverFor('/lote-tampered.jwt', [lotlSigner], 'lote-119602');
    assert.equal(await codeOf(t.resolver.issuerServices(t.url)), 'signature_invalid');
    server.put(
      '/lote-expired.jwt',
      await signLote({ ...list, nextUpdate: new Date(Date.now() - 1000) }, lotlSigner),
    );
    const e = resolverFor('/lote-expired.jwt', [lotlSigner], 'lote-119602');
    assert.equal(await codeOf(e.resolver.issuerServices(e.url)), 'list_expired');
  });
});
