import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { base58btc } from 'multiformats/bases/base58';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { type Certified, type Key, KeyUsage, makeCertificate, newKeyPair } from './certificates.ts';
import { checkVpToken } from './presentation-check.ts';
import type { KeySigner, SigningIdentity, Transaction } from './verifier.ts';
import {
  approve,
  authorize,
  consentView,
  errorPage,
  logInWithSiweInConsent,
  personWithCredential,
  startConsent,
  startWalletWorld,
  type WalletWorld,
} from './wallet-helpers.ts';

/**
 * Every verifier identity of OpenID4VP 1.0 §5.9.3 besides x509_hash and pre-registered ids
 * (wallet.test.ts): x509_san_dns, verifier_attestation and decentralized_identifier. Requests
 * are made by @openid4vc/openid4vp with keys, certificates (@peculiar/x509), attestations and
 * DIDs made here; each good case ends in a presentation the verifier checks with the stock
 * Digital Bazaar stack, each bad variant in an error page with nothing sent.
 */
const ATTESTER = 'https://attester.example';
const HOUR = 3600;

const sanDnsIdentity = (leaf: Certified, chain: Certified[] = []): SigningIdentity => ({
  leaf,
  chain,
  clientId: 'x509_san_dns:localhost',
});

async function ed25519() {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  return { privateKey: privateKey as Key, publicJwk: await exportJWK(publicKey) };
}

const didKeyOf = (jwk: JWK) =>
  `did:key:${base58btc.encode(Uint8Array.from([0xed, 0x01, ...Buffer.from(jwk.x!, 'base64url')]))}`;

const didSigner = (did: string, kid: string, key: { privateKey: Key; publicJwk: JWK }): KeySigner => ({
  clientId: `decentralized_identifier:${did}`,
  ...key,
  jwtSigner: { method: 'did', didUrl: kid, alg: 'EdDSA' },
});

for (const kind of DATABASE_KINDS) {
  describe(`hosted wallet: verifier identities x509_san_dns, verifier_attestation, decentralized_identifier, on ${kind}`, () => {
    let world: WalletWorld;
    let ada: Awaited<ReturnType<typeof personWithCredential>>;
    let anchor: Certified;
    let attester: Awaited<ReturnType<typeof newKeyPair>>;
    let cookie: string | undefined;
    const files: string[] = [];

    before(async () => {
      anchor = await makeCertificate({ subject: 'CN=Verifier Trust Anchor', ca: true });
      attester = await newKeyPair();
      const anchorFile = path.join(tmpdir(), `coffer-anchor-${randomBytes(6).toString('hex')}.pem`);
      const attestersFile = path.join(tmpdir(), `coffer-attesters-${randomBytes(6).toString('hex')}.json`);
      files.push(anchorFile, attestersFile);
      await writeFile(anchorFile, anchor.pem);
      const attesterJwk = { ...(await exportJWK(attester.publicKey)), kid: 'attester-1', iss: ATTESTER };
      await writeFile(attestersFile, JSON.stringify({ keys: [attesterJwk] }));
      world = await startWalletWorld(kind, {
        VERIFIER_TRUST_ANCHORS: anchorFile,
        VERIFIER_ATTESTATION_ISSUERS: attestersFile,
      });
      ada = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
    });
    after(async () => {
      await world?.close();
      for (const file of files) await rm(file, { force: true });
    });

    /** The person consents (logging in inside the first consent); the verifier checks exactly first_name. */
    async function presentation(transaction: Transaction) {
      const consentPath = await startConsent(world.server, transaction.query, cookie);
      if (!cookie)
        cookie = (await logInWithSiweInConsent(world.server, consentPath, ada.account)).cookie ?? undefined;
      const consent = await consentView(world.server, consentPath);
      const html = await (await fetch(world.server.url + consentPath)).text();
      const received = await approve(world.server, consentPath, transaction);
      const [checked] = await checkVpToken(received.vpToken, {
        nonce: transaction.nonce,
        clientId: transaction.clientId,
        claims: { person: [['first_name']] },
      });
      assert.equal(checked!.holder, ada.did);
      assert.deepEqual(checked!.subject, { id: ada.did, first_name: 'Ada' });
      return { verifier: consent.verifier, html };
    }

    const refused = async (transaction: Transaction, pattern: RegExp) =>
      errorPage(await authorize(world.server, transaction.query), transaction, pattern);

    describe('x509_san_dns', () => {
      const request = (identity: SigningIdentity, host = 'localhost') =>
        world.verifier.createRequest({ identity, host });

      test('a certificate for the DNS name under a trust anchor, answer to that host: a verified presentation', async () => {
        const intermediate = await makeCertificate({ subject: 'CN=Verifier CA', issuer: anchor, ca: true });
        const leaf = await makeCertificate({
          subject: 'CN=Localhost Verifier, O=Example',
          issuer: intermediate,
          dnsNames: ['localhost'],
          keyUsage: KeyUsage.digitalSignature,
        });
        const seen = await presentation(await request(sanDnsIdentity(leaf, [intermediate])));
        assert.equal(seen.verifier.prefix, 'x509_san_dns');
        assert.equal(seen.verifier.client_id, 'x509_san_dns:localhost');
        assert.equal(seen.verifier.verified, true);
        assert.equal(seen.verifier.name, 'localhost');
        assert.equal(seen.verifier.certificate.subject, 'CN=Localhost Verifier, O=Example');
        assert.equal(seen.verifier.certificate.anchor, 'CN=Verifier Trust Anchor');
        assert.match(seen.html, /Certified by CN=Verifier Trust Anchor/);
        assert.doesNotMatch(seen.html, /Unverified/);
      });

      test('a self-signed or untrusted chain is refused', async () => {
        const other = await makeCertificate({ subject: 'CN=Other CA', ca: true });
        const leaf = await makeCertificate({ subject: 'CN=V', issuer: other, dnsNames: ['localhost'] });
        await refused(await request(sanDnsIdentity(leaf, [other])), /does not chain to an authority/);
        const selfSigned = await makeCertificate({ subject: 'CN=V', dnsNames: ['localhost'] });
        await refused(await request(sanDnsIdentity(selfSigned)), /does not chain to an authority/);
      });

      test('an expired intermediate, or an intermediate that is no CA, breaks the chain', async () => {
        const expired = await makeCertificate({
          subject: 'CN=Old CA',
          issuer: anchor,
          ca: true,
          notBefore: new Date(Date.now() - 48 * HOUR * 1000),
          notAfter: new Date(Date.now() - HOUR * 1000),
        });
        const leaf = await makeCertificate({ subject: 'CN=V', issuer: expired, dnsNames: ['localhost'] });
        await refused(await request(sanDnsIdentity(leaf, [expired])), /does not chain to an authority/);

        const endEntity = await makeCertificate({ subject: 'CN=Not A CA', issuer: anchor });
        const minted = await makeCertificate({ subject: 'CN=V', issuer: endEntity, dnsNames: ['localhost'] });
        await refused(await request(sanDnsIdentity(minted, [endEntity])), /does not chain to an authority/);
      });

      test('an expired leaf, or one whose key usage forbids signing, is refused', async () => {
        const expired = await makeCertificate({
          subject: 'CN=V',
          issuer: anchor,
          dnsNames: ['localhost'],
          notBefore: new Date(Date.now() - 48 * HOUR * 1000),
          notAfter: new Date(Date.now() - HOUR * 1000),
        });
        await refused(await request(sanDnsIdentity(expired)), /not valid at this time/);
        const encipherOnly = await makeCertificate({
          subject: 'CN=V',
          issuer: anchor,
          dnsNames: ['localhost'],
          keyUsage: KeyUsage.keyEncipherment,
        });
        await refused(await request(sanDnsIdentity(encipherOnly)), /may not sign/);
      });

      test('a certificate for another name (SAN mismatch, or a wildcard) is refused', async () => {
        const other = await makeCertificate({
          subject: 'CN=V',
          issuer: anchor,
          dnsNames: ['verifier.example'],
        });
        await refused(await request(sanDnsIdentity(other)), /does not name localhost/);
        const wildcard = await makeCertificate({
          subject: 'CN=V',
          issuer: anchor,
          dnsNames: ['*.localhost'],
        });
        await refused(
          await request({ ...sanDnsIdentity(wildcard), clientId: 'x509_san_dns:a.localhost' }),
          /does not name a\.localhost/,
        );
      });

      test('an answer to another host than the DNS name is refused', async () => {
        const leaf = await makeCertificate({ subject: 'CN=V', issuer: anchor, dnsNames: ['localhost'] });
        await refused(await request(sanDnsIdentity(leaf), '127.0.0.1'), /must be on localhost/);
      });

      test('a request signed by another key than the leaf', async () => {
        const leaf = await makeCertificate({ subject: 'CN=V', issuer: anchor, dnsNames: ['localhost'] });
        const other = await newKeyPair();
        const transaction = await world.verifier.createRequest({
          identity: sanDnsIdentity(leaf),
          host: 'localhost',
          signingKey: other.privateKey,
        });
        await refused(transaction, /signature does not verify/);
      });

      test('an unsigned request is refused', async () => {
        const leaf = await makeCertificate({ subject: 'CN=V', issuer: anchor, dnsNames: ['localhost'] });
        const transaction = await world.verifier.createRequest({
          identity: sanDnsIdentity(leaf),
          host: 'localhost',
          by: 'parameters',
        });
        await refused(transaction, /must send a signed request object/);
      });
    });

    describe('verifier_attestation', () => {
      interface AttestationOptions {
        signer?: Key;
        sub?: string;
        exp?: number;
        cnf?: JWK;
        redirectUris?: string[];
        typ?: string;
      }
      async function attestedSigner(options: AttestationOptions = {}): Promise<KeySigner> {
        const { privateKey, publicKey } = await newKeyPair();
        const publicJwk = await exportJWK(publicKey);
        const now = Math.floor(Date.now() / 1000);
        const attestation = await new SignJWT({
          sub: options.sub ?? 'verifier.example',
          cnf: { jwk: options.cnf ?? publicJwk },
          ...(options.redirectUris ? { redirect_uris: options.redirectUris } : {}),
        })
          .setProtectedHeader({
            alg: 'ES256',
            typ: options.typ ?? 'verifier-attestation+jwt',
            kid: 'attester-1',
          })
          .setIssuer(ATTESTER)
          .setIssuedAt(now - 60)
          .setExpirationTime(options.exp ?? now + HOUR)
          .sign(options.signer ?? attester.privateKey);
        return {
          clientId: 'verifier_attestation:verifier.example',
          privateKey,
          publicJwk,
          jwtSigner: { method: 'custom', alg: 'ES256' },
          header: { jwt: attestation },
        };
      }
      const request = async (options: AttestationOptions = {}) =>
        world.verifier.createRequest({ keySigner: await attestedSigner(options) });

      test('an attestation of a trusted issuer, the request signed with its cnf key: a verified presentation', async () => {
        const seen = await presentation(await request());
        assert.equal(seen.verifier.prefix, 'verifier_attestation');
        assert.equal(seen.verifier.verified, true);
        assert.equal(seen.verifier.name, 'verifier.example');
        assert.equal(seen.verifier.attestation_issuer, ATTESTER);
        assert.match(seen.html, /Attested by <strong>https:\/\/attester\.example<\/strong>/);
        assert.doesNotMatch(seen.html, /Unverified/);
      });

      test('redirect_uris in the attestation do not constrain a response_uri', async () => {
        await presentation(await request({ redirectUris: ['https://verifier.example/cb'] }));
      });

      test('an attestation of an untrusted issuer, an expired one, or one of another type is refused', async () => {
        const stranger = await newKeyPair();
        await refused(
          await request({ signer: stranger.privateKey }),
          /not signed by an issuer this wallet trusts/,
        );
        await refused(await request({ exp: Math.floor(Date.now() / 1000) - HOUR }), /has expired/);
        await refused(await request({ typ: 'JWT' }), /must have typ verifier-attestation\+jwt/);
      });

      test('an attestation for another client identifier (sub) is refused', async () => {
        await refused(await request({ sub: 'other.example' }), /another client identifier/);
      });

      test('a request not signed with the cnf key is refused', async () => {
        const other = await newKeyPair();
        const transaction = await world.verifier.createRequest({
          keySigner: await attestedSigner({ cnf: await exportJWK(other.publicKey) }),
        });
        await refused(transaction, /signature does not verify/);
      });

      test('a request without the attestation in the jwt header is refused', async () => {
        const signer = await attestedSigner();
        const transaction = await world.verifier.createRequest({ keySigner: { ...signer, header: {} } });
        await refused(transaction, /carries its Verifier Attestation JWT in the jwt header/);
      });

      test('a redirect_uri outside the attestation redirect_uris is refused', async () => {
        const transaction = await world.verifier.createRequest({
          keySigner: await attestedSigner({ redirectUris: ['https://verifier.example/cb'] }),
          responseMode: 'direct_post',
          jwtClaims: {
            response_mode: 'fragment',
            response_uri: undefined,
            redirect_uri: 'https://elsewhere.example/cb',
          },
        });
        await refused(transaction, /not one of the redirect_uris of the verifier attestation/);
      });
    });

    describe('decentralized_identifier', () => {
      test('did:key and did:jwk, resolved locally: a presentation, marked unverified', async () => {
        const key = await ed25519();
        const didKey = didKeyOf(key.publicJwk);
        const seen = await presentation(
          await world.verifier.createRequest({
            keySigner: didSigner(didKey, `${didKey}#${didKey.slice('did:key:'.length)}`, key),
          }),
        );
        assert.equal(seen.verifier.prefix, 'decentralized_identifier');
        assert.equal(seen.verifier.did, didKey);
        assert.equal(seen.verifier.verified, false);
        assert.match(seen.html, /Unverified: a DID proves only that the request was signed with its key/);

        const didJwk = `did:jwk:${Buffer.from(JSON.stringify(key.publicJwk)).toString('base64url')}`;
        await presentation(
          await world.verifier.createRequest({ keySigner: didSigner(didJwk, `${didJwk}#0`, key) }),
        );
      });

      test('did:web: the document is fetched, and the kid names one of its methods (absolute or relative id)', async () => {
        const did = world.verifier.didWeb;
        const first = await ed25519();
        const second = await ed25519();
        world.verifier.didDocument = {
          '@context': ['https://www.w3.org/ns/did/v1'],
          id: did,
          verificationMethod: [
            { id: `${did}#key-1`, type: 'JsonWebKey2020', controller: did, publicKeyJwk: first.publicJwk },
            { id: '#key-2', type: 'JsonWebKey2020', controller: did, publicKeyJwk: second.publicJwk },
          ],
        };
        const before = world.verifier.didDocumentFetches();
        const seen = await presentation(
          await world.verifier.createRequest({ keySigner: didSigner(did, `${did}#key-1`, first) }),
        );
        assert.equal(seen.verifier.did, did);
        assert.ok(world.verifier.didDocumentFetches() > before);
        await presentation(
          await world.verifier.createRequest({ keySigner: didSigner(did, `${did}#key-2`, second) }),
        );
        await refused(
          await world.verifier.createRequest({ keySigner: didSigner(did, `${did}#key-3`, second) }),
          /is not a verification method/,
        );
        await refused(
          await world.verifier.createRequest({ keySigner: didSigner(did, `${did}#key-1`, second) }),
          /signature does not verify/,
        );
        world.verifier.didDocument = null;
        await refused(
          await world.verifier.createRequest({ keySigner: didSigner(did, `${did}#key-1`, first) }),
          /answered HTTP 404/,
        );
      });

      test('a kid of another DID, or no DID URL at all, is refused', async () => {
        const mine = await ed25519();
        const theirs = await ed25519();
        const myDid = didKeyOf(mine.publicJwk);
        const theirDid = didKeyOf(theirs.publicJwk);
        const signedByOther = await world.verifier.createRequest({
          keySigner: {
            ...didSigner(theirDid, `${theirDid}#${theirDid.slice(8)}`, theirs),
            clientId: `decentralized_identifier:${myDid}`,
          },
        });
        await refused(signedByOther, /kid must be a DID URL of did:key/);
        const wrongFragment = await world.verifier.createRequest({
          keySigner: didSigner(myDid, `${myDid}#other`, mine),
        });
        await refused(wrongFragment, /names no key/);
      });

      test('a DID method the wallet does not resolve is refused', async () => {
        const key = await ed25519();
        await refused(
          await world.verifier.createRequest({
            keySigner: didSigner('did:example:123', 'did:example:123#k', key),
          }),
          /must be a did:key, did:jwk or did:web/,
        );
      });
    });

    test('wallet metadata sent with request_uri_method=post lists every supported prefix', async () => {
      const transaction = await world.verifier.createRequest({ by: 'reference-post' });
      await startConsent(world.server, transaction.query);
      const metadata = JSON.parse(transaction.requestFetches[0]!.form['wallet_metadata']!);
      assert.deepEqual(metadata.client_id_prefixes_supported, [
        'pre-registered',
        'x509_hash',
        'x509_san_dns',
        'verifier_attestation',
        'decentralized_identifier',
        'redirect_uri',
      ]);
    });
  });
}
