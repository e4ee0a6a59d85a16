import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createClient } from '../../src/clients/client-admin.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startSecondInstance, startTestServer, type TestServer } from '../helpers/server.ts';
import { makeCertificate, newKeyPair } from './certificates.ts';
import {
  LDP_VC_FORMATS,
  newEncryptionKey,
  startVerifier,
  type Transaction,
  type Verifier,
  x509HashIdentity,
} from './verifier.ts';
import {
  authorize,
  decide,
  errorAtVerifier,
  errorPage,
  registerVerifierWithKeys,
  startConsent,
  startWalletWorld,
  type WalletWorld,
} from './wallet-helpers.ts';

/**
 * Requests the wallet must refuse (OpenID4VP §5, §5.9.3, §5.10, §8.5). None yields a
 * presentation; an authenticated verifier is told why by its response mode, anyone else gets a
 * 400 error page and nothing is sent anywhere.
 */
for (const kind of DATABASE_KINDS) {
  describe(`hosted wallet refusals, on ${kind}`, () => {
    let verifier: Verifier;
    let world: WalletWorld;

    before(async () => {
      world = await startWalletWorld(kind);
      verifier = world.verifier;
    });
    // Optional chaining: when `before` failed, there may be nothing to close.
    after(async () => {
      await world?.close();
    });

    const refusedOnPage = async (transaction: Transaction, pattern: RegExp) =>
      errorPage(await authorize(world.server, transaction.query), transaction, pattern);

    test('a request object signed by another key than the x5c leaf', async () => {
      const other = await newKeyPair();
      const transaction = await verifier.createRequest({ by: 'value', signingKey: other.privateKey });
      await refusedOnPage(transaction, /signature does not verify/);
    });

    test("a pre-registered verifier's request object signed by a key it did not register", async () => {
      const id = randomBytes(9).toString('base64url');
      const encryptionKey = await newEncryptionKey();
      const clientId = await registerVerifierWithKeys(world, id, encryptionKey);
      const transaction = await verifier.createRequest({
        by: 'value',
        id,
        clientId,
        encryptionKey,
        parameters: { client_metadata: undefined },
        jwtHeader: { kid: 'sig-1', x5c: undefined },
        signingKey: (await newKeyPair()).privateKey,
      });
      await refusedOnPage(transaction, /signature does not verify/);
    });

    test('an x509_hash that is not the hash of the leaf', async () => {
      const other = await x509HashIdentity(await makeCertificate({ subject: 'CN=Other' }));
      const identity = { ...verifier.identity, clientId: other.clientId };
      await refusedOnPage(await verifier.createRequest({ identity }), /not the SHA-256 hash/);
    });

    test('an unsigned x509_hash request: plain parameters, or a request object with alg none', async () => {
      await refusedOnPage(await verifier.createRequest({ by: 'parameters' }), /signed request object/);

      const signed = await verifier.createRequest({ by: 'value' });
      const query = new URLSearchParams(signed.query);
      const [header, payload] = query.get('request')!.split('.');
      const unsignedHeader = { ...JSON.parse(Buffer.from(header!, 'base64url').toString()), alg: 'none' };
      query.set(
        'request',
        `${Buffer.from(JSON.stringify(unsignedHeader)).toString('base64url')}.${payload}.`,
      );
      errorPage(await authorize(world.server, query.toString()), signed, /algorithm none is not accepted/);
    });

    test('the error page names the OAuth error code; asked for JSON, the same refusal is the error JSON', async () => {
      const transaction = await verifier.createRequest({ by: 'parameters' });
      const page = await authorize(world.server, transaction.query);
      errorPage(page, transaction, /signed request object/);
      assert.match(page.text, /Error code: <code>invalid_request<\/code>/);

      const response = await fetch(`${world.server.url}/v1/oid4vp/authorize?${transaction.query}`, {
        redirect: 'manual',
        headers: { accept: 'application/json' },
      });
      assert.equal(response.status, 400);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      const body = (await response.json()) as { error: string; error_description: string };
      assert.equal(body.error, 'invalid_request');
      assert.match(body.error_description, /signed request object/);
      assert.equal(transaction.received.length, 0);
    });

    test('a nonce is accepted once per verifier: the second request with it is refused to the verifier', async () => {
      const first = await verifier.createRequest({ by: 'value' });
      await startConsent(world.server, first.query);
      const replay = await verifier.createRequest({ by: 'value', nonce: first.nonce });
      const received = errorAtVerifier(
        await authorize(world.server, replay.query),
        replay,
        'invalid_request',
      );
      assert.match(String(received.parameters['error_description']), /nonce/);
      assert.equal(received.jweHeader?.kid, replay.encryptionKey!.publicJwk.kid, 'errors are encrypted too');

      const elsewhere = await x509HashIdentity(await makeCertificate({ subject: 'CN=Another Verifier' }));
      const otherVerifier = await verifier.createRequest({ identity: elsewhere, nonce: first.nonce });
      await startConsent(world.server, otherVerifier.query);
    });

    test('one nonce sent at once to two instances: one consent starts, every other request is refused', async () => {
      const second = await startSecondInstance(world.server);
      try {
        const first = await verifier.createRequest({ by: 'value' });
        const replays = await Promise.all(
          Array.from({ length: 5 }, () => verifier.createRequest({ by: 'value', nonce: first.nonce })),
        );
        const all = [first, ...replays];
        const answers = await Promise.all(
          all.map((transaction, i) => authorize(i % 2 ? second : world.server, transaction.query)),
        );
        const started = answers.filter((a) => a.status === 303 && /^\/interaction\//.test(a.location ?? ''));
        assert.equal(started.length, 1, 'exactly one request with the nonce starts a consent');
        all.forEach((transaction, i) => {
          if (answers[i] !== started[0]) errorAtVerifier(answers[i]!, transaction, 'invalid_request');
        });
      } finally {
        await second.close();
      }
    });

    test('redirect_uri together with direct_post.jwt', async () => {
      const transaction = await verifier.createRequest({
        parameters: { redirect_uri: 'https://verifier.example/cb' },
      });
      errorAtVerifier(await authorize(world.server, transaction.query), transaction, 'invalid_request');
    });

    test('client_metadata from a pre-registered verifier → invalid_client in the fragment', async () => {
      const registered = await createClient(world.server.database.db, {
        name: 'Registered Verifier',
        verifier: true,
        redirectUris: ['https://verifier.example/cb'],
      });
      const transaction = verifier.createRegisteredRequest(String(registered.client_id), 'fragment', {
        parameters: { client_metadata: { vp_formats_supported: LDP_VC_FORMATS } },
      });
      const answer = await authorize(world.server, transaction.query);
      assert.equal(answer.status, 303, answer.text);
      const received = verifier.receiveFragment(transaction, answer.location!);
      assert.equal(received.refusal, null, received.refusal ?? '');
      assert.equal(received.error, 'invalid_client');
      assert.equal(received.state, transaction.state);
      assert.equal(received.vpToken, null);
    });

    test('encryption keys the wallet cannot use are passed over; with none left, invalid_request in clear', async () => {
      const unusable = [
        { kty: 'EC', crv: 'P-256', alg: 'ECDH-ES', use: 'enc', kid: 'short', x: 'AAAA', y: 'AAAA' },
        {
          kty: 'OKP',
          crv: 'Ed25519',
          alg: 'ECDH-ES',
          kid: 'signing-curve',
          x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
        },
      ];
      const metadata = (keys: object[]) => ({
        client_metadata: {
          vp_formats_supported: LDP_VC_FORMATS,
          jwks: { keys },
          encrypted_response_enc_values_supported: ['A256GCM'],
        },
      });
      const refused = await verifier.createRequest({ parameters: metadata(unusable) });
      const received = errorAtVerifier(
        await authorize(world.server, refused.query),
        refused,
        'invalid_request',
      );
      assert.equal(received.jweHeader, null);
      assert.match(String(received.parameters['error_description']), /client_metadata\.jwks/);

      const mixed = await verifier.createRequest({ encryptionKeysBefore: unusable });
      const path = await startConsent(world.server, mixed.query);
      const declined = await decide(world.server, path, { decision: 'decline' });
      assert.equal(declined.status, 200, JSON.stringify(declined.body));
      const [answer] = mixed.received;
      assert.equal(answer?.refusal, null, answer?.refusal ?? '');
      assert.equal(answer?.jweHeader?.kid, mixed.encryptionKey!.publicJwk.kid, 'the usable key was chosen');
      assert.equal(answer?.error, 'access_denied');
    });

    test('a pre-registered verifier asking for an unregistered redirect_uri gets a page, not a redirect', async () => {
      const registered = await createClient(world.server.database.db, {
        name: 'Careful Verifier',
        verifier: true,
        redirectUris: ['https://verifier.example/cb'],
      });
      const transaction = verifier.createRegisteredRequest(String(registered.client_id), 'fragment', {
        parameters: { redirect_uri: 'https://attacker.example/cb' },
      });
      await refusedOnPage(transaction, /not registered for this verifier/);
    });

    test('a verifier that takes no ldp_vc → vp_formats_not_supported', async () => {
      const transaction = await verifier.createRequest({
        by: 'value',
        responseMode: 'direct_post',
        parameters: { client_metadata: { vp_formats_supported: { 'dc+sd-jwt': {} } } },
      });
      errorAtVerifier(
        await authorize(world.server, transaction.query),
        transaction,
        'vp_formats_not_supported',
      );
    });

    test('an expired request object', async () => {
      const now = Math.floor(Date.now() / 1000);
      const transaction = await verifier.createRequest({ jwtClaims: { iat: now - 900, exp: now - 300 } });
      await refusedOnPage(transaction, /expired/);
      assert.equal(transaction.requestFetches.length, 1);
    });

    test('a request object with another typ', async () => {
      const transaction = await verifier.createRequest({ by: 'value', jwtHeader: { typ: 'JWT' } });
      await refusedOnPage(transaction, /typ oauth-authz-req\+jwt/);
    });

    test('a certificate outside its validity dates', async () => {
      const day = 24 * 3600_000;
      for (const [notBefore, notAfter] of [
        [Date.now() - 3 * day, Date.now() - day],
        [Date.now() + day, Date.now() + 3 * day],
      ] as const) {
        const leaf = await makeCertificate({
          subject: 'CN=Out Of Time',
          notBefore: new Date(notBefore),
          notAfter: new Date(notAfter),
        });
        const identity = await x509HashIdentity(leaf);
        await refusedOnPage(await verifier.createRequest({ identity }), /not valid at this time/);
      }
    });

    test('the redirect_uri: prefix with a signed request', async () => {
      const responseUri = 'https://verifier.example/post';
      const transaction = await verifier.createRequest({
        by: 'value',
        responseMode: 'direct_post',
        parameters: { client_id: `redirect_uri:${responseUri}`, response_uri: responseUri },
      });
      assert.equal(new URLSearchParams(transaction.query).get('client_id'), `redirect_uri:${responseUri}`);
      await refusedOnPage(transaction, /redirect_uri verifier cannot send signed requests/);
    });

    test('transaction_data → invalid_transaction_data to the verifier', async () => {
      const entry = Buffer.from(JSON.stringify({ type: 'payment', credential_ids: ['person'] })).toString(
        'base64url',
      );
      const transaction = await verifier.createRequest({ parameters: { transaction_data: [entry] } });
      errorAtVerifier(
        await authorize(world.server, transaction.query),
        transaction,
        'invalid_transaction_data',
      );
    });

    test('an unknown response_mode: nowhere to answer, so a page', async () => {
      const transaction = await verifier.createRequest({ jwtClaims: { response_mode: 'form_post' } });
      await refusedOnPage(transaction, /response_mode must be/);
    });
  });

  describe(`hosted wallet without ALLOW_PRIVATE_TARGETS, on ${kind}`, () => {
    let verifier: Verifier;
    let server: TestServer;
    before(async () => {
      verifier = await startVerifier();
      // The default outbound client and configuration, as in production.
      server = await startTestServer(kind);
    });
    after(async () => {
      await server?.close();
      await verifier?.close();
    });

    test('a request_uri on a private address is refused without connecting', async () => {
      const transaction = await verifier.createRequest({ by: 'reference' });
      const before = verifier.connections();
      errorPage(await authorize(server, transaction.query), transaction, /private or loopback/);

      const byName = new URLSearchParams(transaction.query);
      byName.set('request_uri', transaction.requestUri.replace('127.0.0.1', 'localhost'));
      errorPage(await authorize(server, byName.toString()), transaction, /private or loopback/);

      assert.equal(verifier.connections(), before, 'the verifier saw no connection');
      assert.equal(transaction.requestFetches.length, 0);
    });

    test('a response_uri on a private address is refused before anything is sent', async () => {
      const transaction = await verifier.createRequest({ by: 'value' });
      const before = verifier.connections();
      errorPage(await authorize(server, transaction.query), transaction, /private or loopback/);
      assert.equal(verifier.connections(), before, 'the verifier saw no connection');
    });
  });
}
