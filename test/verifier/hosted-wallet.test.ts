import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createOutboundClient } from '../../src/http/outbound.ts';
import { logInUser, registerPersonContext } from '../credentials/helpers.ts';
import { createStockIssuer, personCredential, type StockIssuer } from '../credentials/stock-issuer.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { holderJwkOf } from '../helpers/issuers/holder.ts';
import { createJwtVcIssuer } from '../helpers/issuers/jwt-vc-issuer.ts';
import { issueMdoc, MDL_DOCTYPE, MDL_NAMESPACE } from '../helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { personQuery } from '../oid4vp/verifier.ts';
import { consentView, decide, logInWithSiweInConsent, startConsent } from '../oid4vp/wallet-helpers.ts';
import { codeFromOutbox, postInteraction, registerRelyingParty } from '../oidc/flow-helpers.ts';
import { sdJwtQuery, startVerifierWorld, type VerifierWorld } from './verifier-helpers.ts';

/**
 * Coffer's own hosted wallet answers Coffer's verifier end to end (issue #30): a tenant asks, the
 * person opens the openid4vp:// request at the wallet (GET /v1/oid4vp/authorize with client_id,
 * request_uri and request_uri_method=post), logs in, approves, and the tenant reads verified
 * claims. Both over real HTTP: the wallet fetches the signed request object and posts its
 * encrypted answer through the verifier's TLS front, as between two deployments.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

const PAYMENT = 'urn:example:payment';
const pidQuery = sdJwtQuery(PID_VCT, [['given_name'], ['family_name']]).credentials[0]!;
const mdlQuery = {
  id: 'mdl',
  format: 'mso_mdoc',
  meta: { doctype_value: MDL_DOCTYPE },
  claims: [{ path: [MDL_NAMESPACE, 'given_name'] }, { path: [MDL_NAMESPACE, 'age_over_18'] }],
};
const personLdpQuery = personQuery('person', ['first_name']);
const degreeQuery = {
  id: 'degree',
  format: 'jwt_vc_json',
  meta: { type_values: [['https://www.w3.org/2018/credentials#VerifiableCredential']] },
  claims: [{ path: ['credentialSubject', 'given_name'] }],
};

/** The issuers of the person's credentials: the world's X.509 issuer, a bbs-2023 one and a VC-JWT one. */
interface Issuers {
  ldp: StockIssuer;
  jwt: Awaited<ReturnType<typeof createJwtVcIssuer>>;
}

/** Stores an SD-JWT VC and an mdoc bound to the holder's hosted key, a PersonCredential and a VC-JWT. */
async function storeCredentials(
  wallet: TestServer,
  world: VerifierWorld,
  issuers: Issuers,
  did: string,
): Promise<void> {
  const { token } = await wallet.createMaster('Issuer');
  const values = [
    await issueSdJwtVc(world.issuer, { holderJwk: holderJwkOf(did) }),
    await issueMdoc(world.issuer, { deviceJwk: holderJwkOf(did) }),
    await issuers.ldp.issue(personCredential(issuers.ldp.did, did)),
    await issuers.jwt.issue({ subject: did }),
  ];
  for (const vc of values) {
    const stored = await wallet.request('POST', '/v1/vc/issuer/store', {
      headers: { 'x-api-token': token },
      body: { vc },
    });
    assert.equal(stored.status, 201, stored.text);
  }
}

/** The verifier's tenant asks; the DIDs of the bbs-2023 and VC-JWT issuers are trusted for this request. */
async function ask(
  world: VerifierWorld,
  issuers: Issuers,
  credentials: object[],
  body: Record<string, unknown> = {},
) {
  const created = await world.createRequest({
    dcql_query: { credentials },
    trusted_issuers: [issuers.ldp.did, issuers.jwt.did],
    ...body,
  });
  assert.equal(created.status, 201, created.text);
  return created.body.data;
}

/** The wallet query a phone would open: the openid4vp:// request's parameters, as they are. */
const walletQuery = (authorizationRequest: string) => new URL(authorizationRequest).search.slice(1);

/** The verifier's result once the wallet has answered, expected verified; the entry of each query. */
async function verifiedResult(world: VerifierWorld, id: string): Promise<Record<string, Json>> {
  const result = await world.readResult(id);
  assert.equal(result.status, 200, result.text);
  assert.equal(result.body.data.status, 'verified', JSON.stringify(result.body.data));
  const entries: Record<string, Json> = {};
  for (const [query, list] of Object.entries(result.body.data.credentials as Record<string, Json[]>)) {
    assert.equal(list.length, 1, `one presentation for ${query}`);
    const [entry] = list;
    assert.equal(entry.issuer.trusted, true, `${query}: the issuer is trusted`);
    assert.ok(
      entry.checks.every((check: { ok: boolean }) => check.ok),
      JSON.stringify(entry.checks),
    );
    entries[query] = entry;
  }
  return entries;
}

/**
 * What each format hands the tenant: only the claims asked for (and, for the whole-credential
 * jwt_vc_json, the credential's claims).
 */
function assertDisclosed(entries: Record<string, Json>): void {
  if (entries['pid']) {
    assert.equal(entries['pid'].format, 'dc+sd-jwt');
    assert.equal(entries['pid'].claims.given_name, 'Ada');
    assert.equal(entries['pid'].claims.family_name, 'Lovelace');
    assert.equal(entries['pid'].claims.birthdate, undefined, 'only what was asked for is disclosed');
  }
  if (entries['mdl']) {
    assert.equal(entries['mdl'].format, 'mso_mdoc');
    assert.deepEqual(entries['mdl'].claims, { [MDL_NAMESPACE]: { given_name: 'Ada', age_over_18: true } });
  }
  if (entries['person']) {
    assert.equal(entries['person'].format, 'ldp_vc');
    assert.equal(entries['person'].claims.credentialSubject.first_name, 'Ada');
    assert.equal(entries['person'].claims.credentialSubject.last_name, undefined);
  }
  if (entries['degree']) {
    assert.equal(entries['degree'].format, 'jwt_vc_json');
    assert.equal(entries['degree'].claims.credentialSubject.given_name, 'Ada');
  }
}

for (const kind of DATABASE_KINDS) {
  describe(`Coffer's hosted wallet answers Coffer's verifier on the same instance, on ${kind}`, () => {
    let world: VerifierWorld;
    let issuers: Issuers;
    const email = `ada.${Date.now()}@example.org`;
    let cookie: string | undefined;
    let userId: number;
    let bankToken: string;

    before(async () => {
      world = await startVerifierWorld(kind, { TRANSACTION_DATA_TYPES: PAYMENT }, { hostedWallet: true });
      await registerPersonContext(world.server);
      issuers = { ldp: await createStockIssuer(), jwt: await createJwtVcIssuer() };
      // A person of another tenant of the same Coffer, made through the contract's user API.
      const bank = await world.server.createMaster('Bank');
      const created = await world.server.request('POST', '/v1/user/create', {
        headers: { 'x-api-token': bank.token },
        body: { profile: { email_address: email, first_name: 'Ada', last_name: 'Lovelace' } },
      });
      assert.equal(created.status, 201, created.text);
      userId = created.body.data.user_id;
      bankToken = bank.token;
      const { did } = await world.server.database.db
        .selectFrom('users')
        .select('did')
        .where('user_id', '=', created.body.data.user_id)
        .executeTakeFirstOrThrow();
      await storeCredentials(world.server, world, issuers, did);
    });
    after(() => world?.close());

    /** Opens the request at the wallet; the first time, the person logs in there with an e-mail code. */
    async function openAtWallet(authorizationRequest: string): Promise<string> {
      const path = await startConsent(world.server, walletQuery(authorizationRequest), cookie);
      if (!cookie) {
        // The outbox names messages by the millisecond; the consent's code must be the newest.
        await sleep(5);
        const sent = await postInteraction(world.server, path, 'login/email', { email });
        assert.equal(sent.status, 202, JSON.stringify(sent.body));
        const code = await codeFromOutbox(world.server, email);
        const verified = await postInteraction(world.server, path, 'login/email/verify', { code });
        assert.equal(verified.status, 200, JSON.stringify(verified.body));
        assert.deepEqual(verified.body, { next: 'consent' });
        cookie = verified.cookie ?? undefined;
      }
      return path;
    }

    test('dc+sd-jwt over x509_san_dns: the wallet trusts the verifier by VERIFIER_TRUST_ANCHORS, the tenant reads the disclosed claims', async () => {
      const created = await ask(world, issuers, [pidQuery]);
      assert.match(created.authorization_request, /client_id=x509_san_dns%3A127\.0\.0\.1/);
      const path = await openAtWallet(created.authorization_request);
      assert.equal((await world.readResult(created.id)).body.data.status, 'retrieved');

      const consent = await consentView(world.server, path);
      assert.equal(consent.verifier.client_id, 'x509_san_dns:127.0.0.1');
      assert.equal(consent.verifier.prefix, 'x509_san_dns');
      assert.equal(consent.verifier.verified, true);
      assert.equal(consent.verifier.certificate.anchor, 'CN=Test Verifier CA Shop, O=Test');
      assert.equal(consent.response_mode, 'direct_post.jwt');
      assert.equal(consent.requests[0].candidates.length, 1);

      const answer = await decide(world.server, path, { decision: 'approve' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(answer.body, { next: 'done' }, 'a cross-device request sends the browser nowhere');
      const entries = await verifiedResult(world, created.id);
      assertDisclosed(entries);
    });

    for (const [format, query] of [
      ['mso_mdoc', mdlQuery],
      ['ldp_vc', personLdpQuery],
      ['jwt_vc_json', degreeQuery],
    ] as const) {
      test(`${format}: presented by the wallet, verified by the verifier`, async () => {
        const created = await ask(world, issuers, [query]);
        const path = await openAtWallet(created.authorization_request);
        const answer = await decide(world.server, path, { decision: 'approve' });
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assertDisclosed(await verifiedResult(world, created.id));
      });
    }

    test('one request for all four formats is answered with one vp_token', async () => {
      const created = await ask(world, issuers, [pidQuery, mdlQuery, personLdpQuery, degreeQuery]);
      const path = await openAtWallet(created.authorization_request);
      const answer = await decide(world.server, path, { decision: 'approve' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const entries = await verifiedResult(world, created.id);
      assert.deepEqual(Object.keys(entries).sort(), ['degree', 'mdl', 'person', 'pid']);
      assertDisclosed(entries);
      const consent = await consentEvent(path);
      assert.deepEqual(
        [consent.actor, consent.client_id, consent.targets.decision, consent.targets.credentials],
        [`person:${userId}`, null, 'approve', 4],
      );
      assert.ok(consent.targets.verifier.length > 0);
      assert.ok(!JSON.stringify(consent).includes('Ada'), 'no claim reaches the trail');
    });

    test('the person declines: the verifier records declined, with no claims', async () => {
      const created = await ask(world, issuers, [pidQuery]);
      const path = await openAtWallet(created.authorization_request);
      const answer = await decide(world.server, path, { decision: 'decline' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const result = (await world.readResult(created.id)).body.data;
      assert.equal(result.status, 'declined');
      assert.equal(result.error.error, 'access_denied');
      assert.deepEqual(result.credentials, {});
      const consent = await consentEvent(path);
      assert.deepEqual(
        [consent.actor, consent.client_id, consent.targets.decision, consent.targets.credentials],
        [`person:${userId}`, null, 'decline', 0],
      );
    });

    /**
     * Consent is the person's act in their own wallet (issue #42): recorded for the service, never
     * in a tenant's trail, so the tenant that issued a credential cannot follow it to its verifiers.
     */
    async function consentEvent(path: string) {
      const interactionId = path.split('/').filter(Boolean).at(-1);
      const rows = await world.server.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('event_type', '=', 'wallet.consent')
        .execute();
      const mine = rows.filter((row) => JSON.parse(row.targets).interaction_id === interactionId);
      assert.equal(mine.length, 1, `one wallet.consent event for ${interactionId}`);
      return { ...mine[0]!, targets: JSON.parse(mine[0]!.targets) as Json };
    }

    test('transaction data: the person confirms it, the key binding JWT carries its hash, the verifier checks it', async () => {
      const item = { type: PAYMENT, credential_ids: ['pid'], amount: '42.00 EUR', payee: 'Shop' };
      const created = await ask(world, issuers, [pidQuery], {
        transaction_data: [{ ...item, transaction_data_hashes_alg: ['sha-384', 'sha-256'] }],
      });
      const path = await openAtWallet(created.authorization_request);
      const consent = await consentView(world.server, path);
      assert.deepEqual(consent.transaction_data, [
        { type: PAYMENT, credential_ids: ['pid'], fields: { amount: '42.00 EUR', payee: 'Shop' } },
      ]);
      const answer = await decide(world.server, path, { decision: 'approve' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const entries = await verifiedResult(world, created.id);
      assert.ok(
        entries['pid'].checks.some((check: { name: string }) => check.name === 'transaction_data_hashes'),
      );
      const result = (await world.readResult(created.id)).body.data;
      assert.equal(result.transaction_data[0].amount, '42.00 EUR');
    });

    // Last: the person's account goes.
    test("erasing the account deletes the claims its hosted wallet gave this Coffer's verifier, not the tenant's record", async () => {
      const unread = await ask(world, issuers, [pidQuery]);
      assert.equal(
        (
          await decide(world.server, await openAtWallet(unread.authorization_request), {
            decision: 'approve',
          })
        ).status,
        200,
      );
      const before = await world.server.database.db
        .selectFrom('verifier_requests')
        .select('claims_sealed')
        .where('id', '=', unread.id)
        .executeTakeFirstOrThrow();
      assert.notEqual(before.claims_sealed, null, 'the claims wait for the tenant to read them');
      const erased = await world.server.request('DELETE', `/v1/user/${userId}`, {
        headers: { 'x-api-token': bankToken },
      });
      assert.equal(erased.status, 204, erased.text);
      const result = (await world.readResult(unread.id)).body.data;
      assert.equal(result.status, 'verified', 'the tenant still learns the outcome and its checks');
      assert.equal(result.claims_deleted, true);
      assert.equal(JSON.stringify(result).includes('Lovelace'), false, 'no claim is left');
    });
  });

  describe(`Coffer's hosted wallet answers Coffer's verifier on another instance, on ${kind}`, () => {
    let world: VerifierWorld;
    let wallet: TestServer;
    let issuers: Issuers;
    const account = privateKeyToAccount(generatePrivateKey());
    let cookie: string | undefined;

    before(async () => {
      world = await startVerifierWorld(kind);
      await registerPersonContext(world.server);
      // The wallet's deployment: it reaches the verifier over TLS and trusts no verifier CA.
      wallet = await startTestServer(
        kind,
        { ALLOW_PRIVATE_TARGETS: 'true' },
        { outbound: createOutboundClient({ allowPrivateTargets: true, ca: [world.front.ca.pem] }) },
      );
      await registerPersonContext(wallet);
      issuers = { ldp: await createStockIssuer(), jwt: await createJwtVcIssuer() };
      const { did } = await logInUser(wallet, await registerRelyingParty(wallet), account);
      await storeCredentials(wallet, world, issuers, did);
    });
    after(async () => {
      await wallet?.close();
      await world?.close();
    });

    /** Opens the request at the wallet; the first time, the person logs in there with their Ethereum wallet. */
    async function openAtWallet(authorizationRequest: string): Promise<string> {
      const path = await startConsent(wallet, walletQuery(authorizationRequest), cookie);
      if (!cookie) cookie = (await logInWithSiweInConsent(wallet, path, account)).cookie ?? undefined;
      return path;
    }

    test('x509_hash needs no trust anchor: the consent marks the verifier unverified, and the tenant reads verified claims', async () => {
      const created = await ask(world, issuers, [pidQuery, mdlQuery, personLdpQuery, degreeQuery], {
        client_id_prefix: 'x509_hash',
      });
      assert.match(created.authorization_request, /client_id=x509_hash%3A[A-Za-z0-9_-]{43}&/);
      const path = await openAtWallet(created.authorization_request);
      const consent = await consentView(wallet, path);
      assert.equal(consent.verifier.prefix, 'x509_hash');
      assert.equal(consent.verifier.verified, false);
      assert.match(consent.verifier.certificate.subject, /CN=Verifier Shop/);
      const answer = await decide(wallet, path, { decision: 'approve' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const entries = await verifiedResult(world, created.id);
      assert.deepEqual(Object.keys(entries).sort(), ['degree', 'mdl', 'person', 'pid']);
      assertDisclosed(entries);
    });

    test('x509_san_dns without the verifier CA in VERIFIER_TRUST_ANCHORS is refused by the wallet (invalid_client), and the request stays open', async () => {
      const created = await ask(world, issuers, [pidQuery]);
      const response = await fetch(
        `${wallet.url}/v1/oid4vp/authorize?${walletQuery(created.authorization_request)}`,
        {
          redirect: 'manual',
          headers: { accept: 'application/json' },
        },
      );
      assert.equal(response.status, 400);
      const body = (await response.json()) as Json;
      assert.equal(body.error, 'invalid_client', JSON.stringify(body));
      assert.equal((await world.readResult(created.id)).body.data.status, 'retrieved');
    });

    test('direct_post, unencrypted: the mdoc SessionTranscript names no key thumbprint on either side', async () => {
      const created = await ask(world, issuers, [pidQuery, mdlQuery], {
        client_id_prefix: 'x509_hash',
        response_mode: 'direct_post',
      });
      const path = await openAtWallet(created.authorization_request);
      assert.equal((await consentView(wallet, path)).response_mode, 'direct_post');
      const answer = await decide(wallet, path, { decision: 'approve' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assertDisclosed(await verifiedResult(world, created.id));
    });

    test('same-device: the wallet follows the redirect the verifier returns, whose response_code reads the result', async () => {
      const created = await ask(world, issuers, [pidQuery], {
        client_id_prefix: 'x509_hash',
        redirect_uri: 'https://shop.example/done',
      });
      const path = await openAtWallet(created.authorization_request);
      const answer = await decide(wallet, path, { decision: 'approve' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const redirect = new URL(answer.body.redirect_to);
      assert.equal(`${redirect.origin}${redirect.pathname}`, 'https://shop.example/done');
      const code = new URLSearchParams(redirect.hash.slice(1)).get('response_code')!;
      const result = await world.readResult(created.id, `?response_code=${encodeURIComponent(code)}`);
      assert.equal(result.body.data.status, 'verified', JSON.stringify(result.body.data));
      assert.equal(result.body.data.credentials.pid[0].claims.given_name, 'Ada');
    });
  });
}
