// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { type JsonWebKey, randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { resolveOpenid4vpAuthorizationRequest } from '@openid4vc/openid4vp';
import {
  calculateJwkThumbprint,
  compactVerify,
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  jwtVerify,
  SignJWT,
} from 'jose';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { holderJwkOf } from '../helpers/issuers/holder.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { startSecondInstance } from '../helpers/server.ts';
import { consentView, decide, startConsent } from '../oid4vp/wallet-helpers.ts';
import { codeFromOutbox, postInteraction } from '../oidc/flow-helpers.ts';
import { startTestFederation, type TestEntity, type TestFederation } from '../trust/test-federation.ts';
import { answer, callbacks } from '../verifier/test-wallet.ts';
import {
  presentSdJwt,
  sdJwtQuery,
  startVerifierWorld,
  type VerifierWorld,
} from '../verifier/verifier-helpers.ts';
import { fetchTrusting, resolveWithCore } from './federation-test-helpers.ts';

/**
 * Tenant verifiers as federation entities (issue #41): after `coffer federation enable` under a
 * test anchor, a tenant verifier's Entity Configuration publishes its request-signing key and a
 * static encryption key; @openid-federation/core resolves its chain through Coffer. A request
 * with client_id_prefix openid_federation is answered by Coffer's own hosted wallet (which trusts
 * the anchor through FEDERATION_TRUST_ANCHORS), encrypted to the static key, and the tenant reads
 * a verified result. Attacks: another tenant's key, another tenant's statement, the prefix
 * without federation, hostile resolve queries; two instances racing to make the keys.
 */

const pidQuery = sdJwtQuery(PID_VCT, [['given_name']]);

for (const kind of DATABASE_KINDS) {
  describe(`tenant verifiers as federation entities, on ${kind}`, () => {
    let world: VerifierWorld;
    let federation: TestFederation;
    let anchor: TestEntity;
    let anchorsFile: string;
    let trustedFetch: typeof fetch;
    let verifierId: string;
    let cofferId: string;
    const email = `ada.${Date.now()}@example.org`;
    let cookie: string | undefined;

    before(async () => {
      federation = await startTestFederation();
      anchor = await federation.entity('anchor');
      anchorsFile = path.join(tmpdir(), `coffer-federation-${randomBytes(6).toString('hex')}.json`);
      const { entityId, jwks } = federation.anchorOf(anchor);
      await writeFile(anchorsFile, JSON.stringify([{ entity_id: entityId, jwks }]));
      world = await startVerifierWorld(
        kind,
        { FEDERATION_TRUST_ANCHORS: anchorsFile },
        { hostedWallet: true, trust: [federation.ca.pem] },
      );
      trustedFetch = fetchTrusting([world.front.ca.pem, federation.ca.pem]);
      verifierId = `${world.front.url}/verifiers/${world.clientId}`;
      cofferId = world.front.url;
      // A person of another tenant holding a PID bound to their hosted key.
      const bank = await world.server.createMaster('Bank');
      const created = await world.server.request('POST', '/v1/user/create', {
        headers: { 'x-api-token': bank.token },
        body: { profile: { email_address: email, first_name: 'Ada', last_name: 'Lovelace' } },
      });
      assert.equal(created.status, 201, created.text);
      const { did } = await world.server.database.db
        .selectFrom('users')
        .select('did')
        .where('user_id', '=', created.body.data.user_id)
        .executeTakeFirstOrThrow();
      const { token } = await world.server.createMaster('Issuer');
      const stored = await world.server.request('POST', '/v1/vc/issuer/store', {
        headers: { 'x-api-token': token },
        body: { vc: await issueSdJwtVc(world.issuer, { holderJwk: holderJwkOf(did) }) },
      });
      assert.equal(stored.status, 201, stored.text);
    });
    after(async () => {
      await world?.close();
      await federation?.close();
      await rm(anchorsFile, { force: true });
    });

    const get = (pathAndQuery: string) => world.front.fetch(`${world.front.url}${pathAndQuery}`);
    const configurationOf = async (entityId: string) =>
      decodeJwt(await (await world.front.fetch(`${entityId}/.well-known/openid-federation`)).text()) as any;

    /** The request object, fetched as a wallet does (POST, form-encoded). */
    const requestObjectAt = async (requestUri: string) => {
      const fetched = await world.front.fetch(requestUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: '',
      });
      assert.equal(fetched.status, 200);
      return fetched.text();
    };

    /** Opens the request at the wallet; the first time, the person logs in with an e-mail code. */
    async function openAtWallet(authorizationRequest: string): Promise<string> {
      const consentPath = await startConsent(
        world.server,
        new URL(authorizationRequest).search.slice(1),
        cookie,
      );
      if (!cookie) {
        await sleep(5);
        const sent = await postInteraction(world.server, consentPath, 'login/email', { email });
        assert.equal(sent.status, 202, JSON.stringify(sent.body));
        const code = await codeFromOutbox(world.server, email);
        const verified = await postInteraction(world.server, consentPath, 'login/email/verify', { code });
        assert.equal(verified.status, 200, JSON.stringify(verified.body));
        cookie = verified.cookie ?? undefined;
      }
      return consentPath;
    }

    test('before enable: no verifier entity, and the openid_federation prefix is refused (400)', async () => {
      const ec = await get(`/verifiers/${world.clientId}/.well-known/openid-federation`);
      assert.equal(ec.status, 404);
      assert.equal(((await ec.json()) as any).error, 'not_found');
      const refused = await world.createRequest({
        dcql_query: pidQuery,
        client_id_prefix: 'openid_federation',
      });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.error, 'invalid_request');
      assert.match(refused.body.error_description, /coffer federation enable/);
      const resolve = await get(`/federation/resolve?sub=${encodeURIComponent(verifierId)}&trust_anchor=x`);
      assert.equal(resolve.status, 404);
    });

    test("a tenant verifier's chain resolves through Coffer to the anchor (@openid-federation/core), with the verifier's keys", async () => {
      const enabled = await coffer(
        world.server,
        'federation',
        'enable',
        '--authority-hint',
        anchor.id,
        '--name',
        'Coffer Test',
        '--json',
      );
      assert.equal(enabled.code, 0, enabled.stderr);
      const { jwks } = JSON.parse(enabled.stdout);
      federation.external(cofferId, jwks.keys, [anchor]);

      assert.deepEqual(await (await get('/federation/list')).json(), [verifierId]);
      assert.deepEqual(await (await get('/federation/list?entity_type=openid_credential_verifier')).json(), [
        verifierId,
      ]);
      assert.deepEqual(await (await get('/federation/list?entity_type=openid_credential_issuer')).json(), []);

      const chains = await resolveWithCore(verifierId, anchor.id, trustedFetch);
      assert.equal(chains.length, 1, 'one chain');
      const [chain] = chains as any[];
      const links = chain.chain.map((statement: any) => `${statement.iss} > ${statement.sub}`);
      assert.ok(links.includes(`${cofferId} > ${verifierId}`), 'Coffer vouches for its tenant verifier');
      assert.ok(links.includes(`${anchor.id} > ${cofferId}`), 'the anchor vouches for Coffer');
      const metadata = chain.resolvedLeafMetadata.openid_credential_verifier;
      assert.equal(metadata.client_name, 'Shop');
      const signing = await calculateJwkThumbprint(await exportJWK(world.verifier.leaf.keys.publicKey));
      const keys = metadata.jwks.keys as JWK[];
      const sig = keys.find((key) => key.use === 'sig')!;
      assert.equal(await calculateJwkThumbprint(sig), signing, "the key that signs the verifier's requests");
      assert.equal(sig.kid, signing);
      const enc = keys.find((key) => key.use === 'enc')!;
      assert.deepEqual([enc.kty, enc.crv, enc.alg], ['EC', 'P-256', 'ECDH-ES']);
      assert.equal('d' in enc, false, 'no private part is published');
      assert.ok(metadata.vp_formats_supported['dc+sd-jwt']);
      assert.deepEqual(metadata.encrypted_response_enc_values_supported, ['A128GCM', 'A256GCM']);
    });

    test("openid_federation end to end: Coffer's hosted wallet trusts the verifier through the anchor, answers encrypted to the static key", async () => {
      const created = await world.createRequest({
        dcql_query: pidQuery,
        client_id_prefix: 'openid_federation',
      });
      assert.equal(created.status, 201, created.text);
      const { authorization_request: authorizationRequest, request_uri: requestUri, id } = created.body.data;
      assert.equal(
        new URL(authorizationRequest).searchParams.get('client_id'),
        `openid_federation:${verifierId}`,
      );

      const consentPath = await openAtWallet(authorizationRequest);
      const consent = await consentView(world.server, consentPath);
      assert.equal(consent.verifier.prefix, 'openid_federation');
      assert.equal(consent.verifier.client_id, `openid_federation:${verifierId}`);
      assert.equal(consent.verifier.verified, true);
      assert.equal(consent.verifier.name, 'Shop');
      assert.deepEqual(consent.verifier.federation, { entity_id: verifierId, trust_anchor: anchor.id });
      const answer = await decide(world.server, consentPath, { decision: 'approve' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const result = await world.readResult(id);
      assert.equal(result.body.data.status, 'verified', JSON.stringify(result.body.data));
      assert.equal(result.body.data.credentials.pid[0].claims.given_name, 'Ada');

      // The request object: kid (no x5c), and the encryption key is the published static one.
      const again = await world.createRequest({
        dcql_query: pidQuery,
        client_id_prefix: 'openid_federation',
      });
      const jwt = await requestObjectAt(again.body.data.request_uri);
      const header = decodeProtectedHeader(jwt);
      const published = (await configurationOf(verifierId)).metadata.openid_credential_verifier.jwks.keys;
      assert.equal(header.x5c, undefined);
      assert.equal(header.kid, published.find((key: JWK) => key.use === 'sig').kid);
      const requestKey = (decodeJwt(jwt) as any).client_metadata.jwks.keys[0];
      assert.equal(requestKey.kid, published.find((key: JWK) => key.use === 'enc').kid);
      assert.notEqual(requestUri, again.body.data.request_uri);
    });

    test('@openid4vc/openid4vp as the wallet: the request verifies with the federation metadata, the answer is encrypted to its static key', async () => {
      const holder = await generateKeyPair('ES256', { extractable: true });
      const credential = await issueSdJwtVc(world.issuer, {
        holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
      });
      const created = await world.createRequest({
        dcql_query: pidQuery,
        client_id_prefix: 'openid_federation',
      });
      assert.equal(created.status, 201, created.text);
      const clientId = new URL(created.body.data.authorization_request).searchParams.get('client_id')!;
      const jwt = await requestObjectAt(created.body.data.request_uri);
      // The wallet's view of the verifier: its metadata resolved through the federation, not the request.
      const [chain] = (await resolveWithCore(verifierId, anchor.id, trustedFetch)) as any[];
      const published = chain.resolvedLeafMetadata.openid_credential_verifier.jwks.keys as JWK[];
      const resolution = await resolveOpenid4vpAuthorizationRequest({
        authorizationRequestPayload: { client_id: clientId, request: jwt },
        callbacks: {
          ...callbacks,
          verifyJwt: async (signer: any, { compact }: { compact: string }) => {
            const key = published.find((k) => k.use === 'sig' && k.kid === signer.kid);
            if (signer.method !== 'federation' || !key) return { verified: false as const };
            try {
              await compactVerify(compact, await importJWK(key, signer.alg));
              return { verified: true as const, signerJwk: key };
            } catch {
              return { verified: false as const };
            }
          },
        },
      } as any);
      assert.equal((resolution.client as any).prefix, 'openid_federation');
      const payload = resolution.authorizationRequestPayload as any;
      const presentation = await presentSdJwt(credential, { given_name: true }, holder, {
        aud: clientId,
        nonce: payload.nonce,
      });
      const encryption = published.find((k) => k.use === 'enc')!;
      const posted = await answer(
        { payload: { ...payload, client_metadata: { jwks: { keys: [encryption] } } }, clientId, jwt } as any,
        { pid: [presentation] },
      );
      assert.equal(posted.status, 200, JSON.stringify(posted.body));
      const result = await world.readResult(created.body.data.id);
      assert.equal(result.body.data.status, 'verified', JSON.stringify(result.body.data));
      assert.equal(result.body.data.credentials.pid[0].claims.given_name, 'Ada');
    });

    test("a request object for tenant A signed with tenant B's key is refused by the wallet", async () => {
      const b = await world.addTenant('Other Shop', { dnsNames: [] });
      const bId = `${world.front.url}/verifiers/${b.clientId}`;
      const ofB = await world.createRequest(
        { dcql_query: pidQuery, client_id_prefix: 'openid_federation' },
        b.token,
      );
      assert.equal(ofB.status, 201, ofB.text);
      const bJwt = await requestObjectAt(ofB.body.data.request_uri);
      // B takes its own request and claims to be A, signing with its own (federation-published) key,
      // named by its own kid and then by A's.
      const aKid = (await configurationOf(verifierId)).metadata.openid_credential_verifier.jwks.keys[0].kid;
      for (const kid of [decodeProtectedHeader(bJwt).kid!, aKid]) {
        const forged = await new SignJWT({ ...decodeJwt(bJwt), client_id: `openid_federation:${verifierId}` })
          .setProtectedHeader({ alg: 'ES256', typ: 'oauth-authz-req+jwt', kid })
          .sign(b.verifier!.leaf.keys.privateKey);
        const query = new URLSearchParams({ client_id: `openid_federation:${verifierId}`, request: forged });
        const response = await fetch(`${world.server.url}/v1/oid4vp/authorize?${query}`, {
          redirect: 'manual',
          headers: { accept: 'application/json' },
        });
        assert.equal(response.status, 400);
        const body = (await response.json()) as any;
        assert.equal(body.error, 'invalid_request_object', JSON.stringify(body));
        assert.match(body.error_description, /no single registered key|signature does not verify/);
      }

      // Coffer's statements: about A, A's key only; about B, B's.
      const statementAbout = async (sub: string) =>
        decodeJwt(await (await get(`/federation/fetch?sub=${encodeURIComponent(sub)}`)).text()) as any;
      const aboutA = await statementAbout(verifierId);
      const aboutB = await statementAbout(bId);
      assert.deepEqual(aboutA.jwks, (await configurationOf(verifierId)).jwks);
      assert.deepEqual(aboutB.jwks, (await configurationOf(bId)).jwks);
      assert.notDeepEqual(aboutA.jwks.keys[0].kid, aboutB.jwks.keys[0].kid);
      assert.notEqual(
        (await configurationOf(bId)).metadata.openid_credential_verifier.jwks.keys[1].kid,
        (await configurationOf(verifierId)).metadata.openid_credential_verifier.jwks.keys[1].kid,
        'each tenant has its own encryption key',
      );
    });

    test('resolve: a signed resolve-response+jwt, verifiable with Coffer’s published key, to the anchor or to Coffer', async () => {
      const cofferEc = await (await get('/.well-known/openid-federation')).text();
      const cofferClaims = decodeJwt(cofferEc) as any;
      assert.equal(
        cofferClaims.metadata.federation_entity.federation_resolve_endpoint,
        `${cofferId}/federation/resolve`,
      );
      const keys = createLocalJWKSet(cofferClaims.jwks);
      for (const trustAnchor of [anchor.id, cofferId]) {
        const answer = await get(
          `/federation/resolve?sub=${encodeURIComponent(verifierId)}&trust_anchor=${encodeURIComponent(trustAnchor)}&entity_type=openid_credential_verifier`,
        );
        assert.equal(answer.status, 200, await answer.clone().text());
        assert.equal(answer.headers.get('content-type'), 'application/resolve-response+jwt');
        const { payload, protectedHeader } = await jwtVerify(await answer.text(), keys, {
          typ: 'resolve-response+jwt',
        });
        const claims = payload as any;
        assert.equal(protectedHeader.typ, 'resolve-response+jwt');
        assert.equal(claims.iss, cofferId);
        assert.equal(claims.sub, verifierId);
        assert.deepEqual(Object.keys(claims.metadata), ['openid_credential_verifier']);
        assert.equal(claims.metadata.openid_credential_verifier.jwks.keys.length, 2);
        const chainExp = Math.min(...claims.trust_chain.map((s: string) => decodeJwt(s).exp!));
        assert.ok(claims.exp <= chainExp, 'never valid beyond its chain');
        assert.equal(decodeJwt(claims.trust_chain.at(-1)).iss, trustAnchor);
        assert.equal(decodeJwt(claims.trust_chain[0]).sub, verifierId);
      }
    });

    test('resolve refuses with the spec’s errors, never a 500: unknown anchor, malformed or foreign subject', async () => {
      const resolve = (query: string) => get(`/federation/resolve?${query}`);
      const cases: [string, number, string][] = [
        [
          `sub=${encodeURIComponent(verifierId)}&trust_anchor=${encodeURIComponent('https://unknown.example')}`,
          404,
          'invalid_trust_anchor',
        ],
        [`sub=not%20a%20url&trust_anchor=${encodeURIComponent(anchor.id)}`, 404, 'invalid_subject'],
        [
          `sub=${encodeURIComponent(anchor.id)}&trust_anchor=${encodeURIComponent(anchor.id)}`,
          404,
          'invalid_subject',
        ],
        [
          `sub=${encodeURIComponent(`${cofferId}/verifiers/999999`)}&trust_anchor=${encodeURIComponent(cofferId)}`,
          404,
          'invalid_subject',
        ],
        [
          `sub=${encodeURIComponent(`${cofferId}/issuers/1/../verifiers/1`)}&trust_anchor=${encodeURIComponent(cofferId)}`,
          404,
          'invalid_subject',
        ],
        [`trust_anchor=${encodeURIComponent(anchor.id)}`, 400, 'invalid_request'],
        [`sub=${encodeURIComponent(verifierId)}`, 400, 'invalid_request'],
      ];
      for (const [query, status, error] of cases) {
        const answer = await resolve(query);
        assert.equal(answer.status, status, query);
        assert.equal(((await answer.json()) as any).error, error, query);
      }
    });

    test('two instances racing to make a verifier’s entity and encryption keys end with one of each', async () => {
      const c = await world.addTenant('Racing Shop', { dnsNames: [] });
      const second = await startSecondInstance(world.server);
      try {
        const wellKnown = `/verifiers/${c.clientId}/.well-known/openid-federation`;
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            i % 2 ? second.request('GET', wellKnown) : world.server.request('GET', wellKnown),
          ),
        );
        const kids = new Set<string>();
        const encKids = new Set<string>();
        for (const answer of answers) {
          assert.equal(answer.status, 200, answer.text);
          kids.add(decodeProtectedHeader(answer.text).kid!);
          encKids.add((decodeJwt(answer.text) as any).metadata.openid_credential_verifier.jwks.keys[1].kid);
        }
        assert.equal(kids.size, 1, 'one entity key');
        assert.equal(encKids.size, 1, 'one encryption key');
        const db = world.server.database.db;
        const count = async (table: 'federation_entity_keys' | 'federation_encryption_keys') =>
          (await db.selectFrom(table).select('kid').where('client_id', '=', c.clientId).execute()).length;
        assert.equal(await count('federation_entity_keys'), 1);
        assert.equal(await count('federation_encryption_keys'), 1);
      } finally {
        await second.close();
      }
    });

    // Last: Coffer's superiors change.
    test('resolve: a superior that cannot be reached is a 502, not a 500', async () => {
      const enabled = await coffer(
        world.server,
        'federation',
        'enable',
        '--authority-hint',
        `${federation.url}/nowhere`,
        '--name',
        'Coffer Test',
        '--json',
      );
      assert.equal(enabled.code, 0, enabled.stderr);
      // A tenant never resolved before, so no cached chain answers for it.
      const d = await world.addTenant('Unreached Shop', { dnsNames: [] });
      const sub = `${world.front.url}/verifiers/${d.clientId}`;
      const answer = await get(
        `/federation/resolve?sub=${encodeURIComponent(sub)}&trust_anchor=${encodeURIComponent(anchor.id)}`,
      );
      assert.equal(answer.status, 502);
      const body = (await answer.json()) as any;
      assert.equal(body.error, 'bad_gateway');
      assert.match(body.error_description, /could not be reached/);
    });
  });
}
