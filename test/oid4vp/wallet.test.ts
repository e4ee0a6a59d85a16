import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createClient } from '../../src/clients/client-admin.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { postInteraction } from '../oidc/flow-helpers.ts';
import { type Certified, fingerprintOf, makeCertificate } from './certificates.ts';
import { checkVpToken } from './presentation-check.ts';
import { newEncryptionKey, type Transaction, type Verifier, x509HashIdentity } from './verifier.ts';
import {
  approve,
  consentView,
  decide,
  logInWithSiweInConsent,
  personWithCredential,
  registerVerifierWithKeys,
  startConsent,
  startWalletWorld,
  type WalletWorld,
} from './wallet-helpers.ts';

/** The hosted wallet answering an independent OpenID4VP 1.0 verifier, from request to checked presentation. */
for (const kind of DATABASE_KINDS) {
  describe(`hosted wallet: presentations to an independent verifier, on ${kind}`, () => {
    let verifier: Verifier;
    let world: WalletWorld;
    let ada: Awaited<ReturnType<typeof personWithCredential>>;
    let anchor: Certified;
    let anchorFile: string | undefined;

    before(async () => {
      anchor = await makeCertificate({ subject: 'CN=Verifier Trust Anchor', ca: true });
      anchorFile = path.join(tmpdir(), `coffer-anchor-${randomBytes(6).toString('hex')}.pem`);
      await writeFile(anchorFile, anchor.pem);
      world = await startWalletWorld(kind, { VERIFIER_TRUST_ANCHORS: anchorFile });
      verifier = world.verifier;
      ada = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
    });
    // Optional chaining: when `before` failed, there may be nothing to close.
    after(async () => {
      await world?.close();
      if (anchorFile) await rm(anchorFile, { force: true });
    });

    /** The verifier's own check of what it received: signatures, binding, and exactly first_name. */
    const checkFirstName = async (transaction: Transaction, vpToken: Record<string, unknown[]> | null) => {
      const [checked] = await checkVpToken(vpToken, {
        nonce: transaction.nonce,
        clientId: transaction.clientId,
        claims: { person: [['first_name']] },
      });
      assert.equal(checked!.holder, ada.did);
      assert.equal(checked!.credentialId, ada.credentialId);
      assert.deepEqual(checked!.subject, { id: ada.did, first_name: 'Ada' });
    };

    const encryptedTo = (transaction: Transaction, received: Transaction['received'][number]) => {
      assert.deepEqual(Object.keys(received.form), ['response'], 'direct_post.jwt sends only `response`');
      assert.equal(received.jweHeader?.alg, 'ECDH-ES');
      assert.equal(received.jweHeader?.enc, 'A256GCM');
      assert.equal(received.jweHeader?.kid, transaction.encryptionKey!.publicJwk.kid);
      assert.equal(received.state, transaction.state);
    };

    test('x509_hash by reference (GET), direct_post.jwt: the verifier decrypts and verifies exactly the requested claim', async () => {
      const transaction = await verifier.createRequest({ by: 'reference' });
      const path = await startConsent(world.server, transaction.query);
      assert.equal(transaction.requestFetches.length, 1);
      assert.equal(transaction.requestFetches[0]!.method, 'GET');
      assert.equal(transaction.requestFetches[0]!.accept, 'application/oauth-authz-req+jwt');

      const anonymous = await consentView(world.server, path);
      assert.equal(anonymous.verifier.client_id, transaction.clientId);
      assert.equal(anonymous.verifier.kind, 'x509_hash');
      assert.deepEqual(anonymous.requests[0].claims, [['credentialSubject', 'first_name']]);
      assert.deepEqual(anonymous.requests[0].candidates, [], 'nothing is shown before the person logs in');

      await logInWithSiweInConsent(world.server, path, ada.account);
      const consent = await consentView(world.server, path);
      assert.equal(consent.satisfiable, true);
      assert.deepEqual(
        consent.requests[0].candidates.map((c: { credential_id: string }) => c.credential_id),
        [ada.credentialId],
      );
      assert.deepEqual(consent.requests[0].candidates[0].claims, [
        { path: ['credentialSubject', 'first_name'], values: ['Ada'] },
      ]);

      const received = await approve(world.server, path, transaction);
      encryptedTo(transaction, received);
      await checkFirstName(transaction, received.vpToken);

      const again = await decide(world.server, path, { decision: 'approve' });
      assert.equal(again.status, 404, 'an interaction answers once');
      assert.equal(transaction.received.length, 1);
    });

    test('x509_hash by reference with request_uri_method=post: the wallet sends wallet_nonce and metadata and checks the nonce comes back', async () => {
      const transaction = await verifier.createRequest({ by: 'reference-post' });
      const path = await startConsent(world.server, transaction.query);
      const [fetched] = transaction.requestFetches;
      assert.equal(fetched?.method, 'POST');
      assert.equal(fetched.contentType, 'application/x-www-form-urlencoded');
      assert.equal(fetched.accept, 'application/oauth-authz-req+jwt');
      assert.match(fetched.form['wallet_nonce'] ?? '', /^[A-Za-z0-9_-]{16,}$/);
      const metadata = JSON.parse(fetched.form['wallet_metadata']!);
      assert.ok(metadata.vp_formats_supported.ldp_vc, 'the wallet says it presents ldp_vc');

      await logInWithSiweInConsent(world.server, path, ada.account);
      const received = await approve(world.server, path, transaction);
      encryptedTo(transaction, received);
      await checkFirstName(transaction, received.vpToken);
    });

    test('request_uri_method=post: a request object without the wallet_nonce sent is refused', async () => {
      const transaction = await verifier.createRequest({ by: 'reference-post', ignoreWalletNonce: true });
      const answer = await fetch(`${world.server.url}/v1/oid4vp/authorize?${transaction.query}`, {
        redirect: 'manual',
      });
      assert.equal(answer.status, 400);
      assert.match(await answer.text(), /wallet_nonce/);
      assert.equal(transaction.requestFetches.length, 1);
      assert.equal(transaction.received.length, 0);
    });

    test('x509_hash by value (request), direct_post.jwt', async () => {
      const transaction = await verifier.createRequest({ by: 'value' });
      const path = await startConsent(world.server, transaction.query);
      assert.equal(transaction.requestFetches.length, 0, 'nothing is fetched for a request by value');
      await logInWithSiweInConsent(world.server, path, ada.account);
      const received = await approve(world.server, path, transaction);
      encryptedTo(transaction, received);
      await checkFirstName(transaction, received.vpToken);
    });

    test('a pre-registered verifier with response_mode fragment', async () => {
      const registered = await createClient(world.server.database.db, {
        name: 'Bar Verifier',
        verifier: true,
        redirectUris: ['https://verifier.example/cb'],
      });
      const transaction = verifier.createRegisteredRequest(String(registered.client_id), 'fragment');
      const path = await startConsent(world.server, transaction.query);
      await logInWithSiweInConsent(world.server, path, ada.account);
      const consent = await consentView(world.server, path);
      assert.equal(consent.verifier.name, 'Bar Verifier');
      assert.equal(consent.verifier.registered, true);
      assert.equal(consent.verifier.certificate, null);

      const answer = await decide(world.server, path, { decision: 'approve' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.ok(answer.body.redirect_to.startsWith('https://verifier.example/cb#'));
      const received = verifier.receiveFragment(transaction, answer.body.redirect_to);
      assert.equal(received.refusal, null, received.refusal ?? '');
      assert.equal(received.state, transaction.state);
      await checkFirstName(transaction, received.vpToken);
    });

    test('a pre-registered verifier with direct_post to its registered response URI', async () => {
      const id = randomBytes(9).toString('base64url');
      const registered = await createClient(world.server.database.db, {
        name: 'Baz Verifier',
        verifier: true,
        redirectUris: [verifier.responseUriOf(id)],
      });
      const transaction = verifier.createRegisteredRequest(String(registered.client_id), 'direct_post', {
        id,
      });
      const path = await startConsent(world.server, transaction.query);
      await logInWithSiweInConsent(world.server, path, ada.account);
      const received = await approve(world.server, path, transaction);
      assert.equal(received.jweHeader, null);
      assert.deepEqual(Object.keys(received.form).sort(), ['state', 'vp_token']);
      assert.equal(received.state, transaction.state);
      await checkFirstName(transaction, received.vpToken);
    });

    test('a redirect_uri: verifier (unsigned, direct_post.jwt) is answered at that URI and shown as unverified', async () => {
      const transaction = await verifier.createRequest({ by: 'parameters', redirectUriPrefix: true });
      assert.equal(transaction.clientId, `redirect_uri:${transaction.responseUri}`);
      const path = await startConsent(world.server, transaction.query);
      const html = await (await fetch(world.server.url + path)).text();
      assert.match(html, /Unverified: this verifier is known only by its address/);
      await logInWithSiweInConsent(world.server, path, ada.account);
      const consent = await consentView(world.server, path);
      assert.equal(consent.verifier.kind, 'redirect_uri');
      assert.equal(consent.verifier.name, new URL(verifier.url).host);
      const received = await approve(world.server, path, transaction);
      encryptedTo(transaction, received);
      await checkFirstName(transaction, received.vpToken);
    });

    test('a pre-registered verifier with registered keys: a signed request object, direct_post.jwt', async () => {
      const id = randomBytes(9).toString('base64url');
      const encryptionKey = await newEncryptionKey();
      const clientId = await registerVerifierWithKeys(world, id, encryptionKey);
      const transaction = await verifier.createRequest({
        by: 'reference',
        id,
        clientId,
        encryptionKey,
        // Registered metadata is not sent again (§5.1, invalid_client otherwise); the key is found by kid.
        parameters: { client_metadata: undefined },
        jwtHeader: { kid: 'sig-1', x5c: undefined },
      });
      const path = await startConsent(world.server, transaction.query);
      await logInWithSiweInConsent(world.server, path, ada.account);
      const consent = await consentView(world.server, path);
      assert.equal(consent.verifier.name, 'Keyed Verifier');
      assert.equal(consent.verifier.registered, true);
      const received = await approve(world.server, path, transaction);
      encryptedTo(transaction, received);
      await checkFirstName(transaction, received.vpToken);
    });

    test('declining sends access_denied with the state, and nothing else', async () => {
      const transaction = await verifier.createRequest();
      const path = await startConsent(world.server, transaction.query);
      await logInWithSiweInConsent(world.server, path, ada.account);
      const answer = await decide(world.server, path, { decision: 'decline' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const [received] = transaction.received;
      assert.equal(transaction.received.length, 1);
      assert.equal(received!.refusal, null, received!.refusal ?? '');
      assert.equal(received!.error, 'access_denied');
      assert.equal(received!.state, transaction.state);
      assert.equal(received!.parameters['vp_token'], undefined);
      assert.equal(answer.body.redirect_to, received!.redirectUri);
    });

    describe('trust in x509 verifiers (VERIFIER_TRUST_ANCHORS)', () => {
      const verifierSeen = async (transaction: Transaction) => {
        const path = await startConsent(world.server, transaction.query);
        const html = await (await fetch(world.server.url + path)).text();
        return { verifier: (await consentView(world.server, path)).verifier, html };
      };

      test('a certificate issued by a trust anchor is trusted; subject and fingerprint are shown', async () => {
        const leaf = await makeCertificate({ subject: 'CN=Trusted Verifier, O=Example', issuer: anchor });
        const seen = await verifierSeen(
          await verifier.createRequest({ identity: await x509HashIdentity(leaf) }),
        );
        assert.equal(seen.verifier.certificate.trusted, true);
        assert.equal(seen.verifier.certificate.subject, 'CN=Trusted Verifier, O=Example');
        assert.equal(seen.verifier.certificate.fingerprint, fingerprintOf(leaf));
        assert.match(seen.html, /CN=Trusted Verifier/);
        assert.ok(seen.html.includes(fingerprintOf(leaf)));
        assert.doesNotMatch(seen.html, /Unverified/);
      });

      test('through an intermediate in x5c, the chain is trusted', async () => {
        const intermediate = await makeCertificate({ subject: 'CN=Intermediate', issuer: anchor, ca: true });
        const leaf = await makeCertificate({ subject: 'CN=Chained Verifier', issuer: intermediate });
        const identity = await x509HashIdentity(leaf, [intermediate]);
        const seen = await verifierSeen(await verifier.createRequest({ identity }));
        assert.equal(seen.verifier.certificate.trusted, true);
      });

      test('a certificate issued by an end-entity certificate under the anchor is not trusted', async () => {
        // Any verifier holding a trusted certificate could otherwise mint one for any name.
        const endEntity = await makeCertificate({ subject: 'CN=Honest Verifier', issuer: anchor });
        const minted = await makeCertificate({ subject: 'CN=Some Bank', issuer: endEntity });
        const identity = await x509HashIdentity(minted, [endEntity]);
        const seen = await verifierSeen(await verifier.createRequest({ identity }));
        assert.equal(seen.verifier.certificate.subject, 'CN=Some Bank');
        assert.equal(seen.verifier.certificate.trusted, false);
      });

      test('a self-signed certificate, or one that only names the anchor as issuer, is not trusted', async () => {
        const selfSigned = await verifierSeen(await verifier.createRequest());
        assert.equal(selfSigned.verifier.certificate.trusted, false);
        assert.equal(selfSigned.verifier.certificate.subject, 'CN=Test Verifier, O=Verifier Example');
        assert.equal(selfSigned.verifier.certificate.fingerprint, fingerprintOf(verifier.identity.leaf));
        assert.match(selfSigned.html, /Unverified/);

        const impostor = await makeCertificate({ subject: 'CN=Verifier Trust Anchor', ca: true });
        const leaf = await makeCertificate({ subject: 'CN=Impostor', issuer: impostor });
        const seen = await verifierSeen(
          await verifier.createRequest({ identity: await x509HashIdentity(leaf) }),
        );
        assert.equal(seen.verifier.certificate.trusted, false);
      });
    });

    test('a consent page refuses cross-site posts', async () => {
      const transaction = await verifier.createRequest();
      const path = await startConsent(world.server, transaction.query);
      await logInWithSiweInConsent(world.server, path, ada.account);
      const forged = await postInteraction(
        world.server,
        path,
        'consent',
        { decision: 'approve' },
        { origin: 'https://evil.example' },
      );
      assert.equal(forged.status, 403);
      assert.equal(transaction.received.length, 0);
    });
  });
}
