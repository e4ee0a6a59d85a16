import assert from 'node:assert/strict';
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestIssuer } from '../helpers/issuers/openid4vci-issuer.ts';
import { PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { startTestServer } from '../helpers/server.ts';
import { walletJson } from '../wallet/wallet-helpers.ts';
import {
  decideIssuance,
  eventually,
  fetchWithCa,
  followAuthorization,
  type IssuanceWorld,
  issuanceView,
  listed,
  openOffer,
  presentToVerifier,
  startIssuance,
  startIssuanceWorld,
} from './issuance-helpers.ts';

const pidQuery = {
  id: 'pid',
  format: 'dc+sd-jwt',
  meta: { vct_values: [PID_VCT] },
  claims: [{ path: ['family_name'] }],
};

/** The cnf.jwk of the SD-JWT in a presentation (which key the wallet signed with). */
function cnfOf(presentation: string): JsonWebKey {
  const payload = decodeJwt(presentation.split('~')[0]!);
  return (payload['cnf'] as { jwk: JsonWebKey }).jwk;
}

for (const kind of DATABASE_KINDS) {
  describe(`OpenID4VCI 1.0, authorization code with PAR, PKCE and DPoP required, on ${kind}`, () => {
    let world: IssuanceWorld;
    before(async () => {
      world = await startIssuanceWorld(kind, { requirePar: true, requireDpop: true });
    });
    after(async () => {
      await world?.close();
    });

    test('approve sends the person to the authorization server; the callback exchanges the code and stores the credential', async () => {
      const { byReferenceQuery, issuerState } = await world.issuer.createOffer({
        configurationIds: ['pid-sd-jwt'],
        grant: 'authorization_code',
      });
      const interactionPath = await startIssuance(world, byReferenceQuery);
      const answer = await decideIssuance(world, interactionPath, { decision: 'approve' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const authorizationUrl = new URL(answer.body.redirect_to);
      assert.equal(
        authorizationUrl.searchParams.get('request_uri')?.startsWith('urn:ietf:params:oauth:request_uri:'),
        true,
      );
      assert.equal(world.issuer.events.parRequests, 1, 'the request was pushed');

      const callback = await followAuthorization(world, authorizationUrl.href);
      const [authorization] = world.issuer.events.authorizationRequests;
      assert.equal(authorization!.viaPar, true);
      assert.equal(authorization!.codeChallengeMethod, 'S256');
      assert.equal(authorization!.issuerState, issuerState);
      assert.equal(authorization!.redirectUri, `${world.server.url}/v1/oid4vci/callback`);
      assert.equal(authorization!.clientId, world.server.env['PUBLIC_URL']);

      const tokenRequests = world.issuer.events.tokenRequests.length;
      const foreign = await fetch(callback, { headers: { accept: 'application/json' } });
      assert.equal(foreign.status, 403, 'without the session that started it, the callback is refused');
      const forged = new URL(callback);
      forged.searchParams.set('state', `${forged.searchParams.get('state')!.split('.')[0]}.forged`);
      const forgedAnswer = await fetch(forged, {
        headers: { accept: 'application/json', cookie: world.cookie! },
      });
      assert.equal(forgedAnswer.status, 403);
      assert.equal(world.issuer.events.tokenRequests.length, tokenRequests, 'no token was asked for');

      const done = await fetch(callback, { headers: { cookie: world.cookie! } });
      const html = await done.text();
      assert.equal(done.status, 200, html);
      assert.match(html, /Added 1 credential to your wallet/);
      const token = world.issuer.events.tokenRequests.at(-1)!;
      assert.equal(token.ok, true, token.error);
      assert.equal(token.grantType, 'authorization_code');
      assert.equal(token.dpop, true);
      assert.equal(world.issuer.events.credentialRequests.at(-1)!.dpop, true);
      const entries = await listed(world);
      assert.equal(entries.length, 1);
      assert.equal(entries[0].format, 'dc+sd-jwt');

      const replay = await fetch(callback, {
        headers: { cookie: world.cookie!, accept: 'application/json' },
      });
      assert.equal(replay.status, 403, 'a callback is used once');
    });

    test('the issuer refusing authorization is shown to the person and stores nothing', async () => {
      const before = (await listed(world)).length;
      const { byReferenceQuery } = await world.issuer.createOffer({
        configurationIds: ['pid-sd-jwt'],
        grant: 'authorization_code',
      });
      const interactionPath = await startIssuance(world, byReferenceQuery);
      const answer = await decideIssuance(world, interactionPath, { decision: 'approve' });
      const callback = new URL(await followAuthorization(world, answer.body.redirect_to));
      callback.searchParams.delete('code');
      callback.searchParams.set('error', 'access_denied');
      callback.searchParams.set('error_description', 'The person cancelled');
      const refused = await fetch(callback, {
        headers: { cookie: world.cookie!, accept: 'application/json' },
      });
      assert.equal(refused.status, 400);
      assert.match(
        ((await refused.json()) as { error_description: string }).error_description,
        /did not authorize the issuance: The person cancelled/,
      );
      assert.equal((await listed(world)).length, before);
    });
  });
}

describe('OpenID4VCI 1.0: deferred and batch issuance, on sqlite', () => {
  let world: IssuanceWorld;
  before(async () => {
    world = await startIssuanceWorld('sqlite', { deferred: { pendingPolls: 1, interval: 1 }, batchSize: 3 });
  });
  after(async () => {
    await world?.close();
  });

  test('deferred: the wallet polls in the background, honouring the interval, then stores every copy and notifies the issuer', async () => {
    const { byReferenceQuery } = await world.issuer.createOffer({
      configurationIds: ['pid-sd-jwt'],
      grant: 'pre-authorized',
    });
    const interactionPath = await startIssuance(world, byReferenceQuery);
    const answer = await decideIssuance(world, interactionPath, { decision: 'approve' });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body.received, []);
    assert.equal(answer.body.pending, 1);
    const pending = await fetch(`${world.server.url}/v1/oid4vci/issuances`, {
      headers: { cookie: world.cookie! },
    });
    assert.equal(((await pending.json()) as { data: Array<{ status: string }> }).data[0]!.status, 'pending');

    const entries = await eventually(async () => {
      const list = await listed(world);
      return list.length > 0 ? list : undefined;
    });
    assert.equal(entries.length, 1, 'one credential, however many copies');
    const [shown] = (await walletJson(world.server, world.cookie!)).credentials;
    assert.equal(
      shown.typeName,
      'Personal ID',
      "the configuration's display name, kept when it arrived late",
    );
    assert.ok(world.issuer.events.deferredPolls >= 2, 'polled until the issuer was ready');
    const done = await fetch(`${world.server.url}/v1/oid4vci/issuances`, {
      headers: { cookie: world.cookie! },
    });
    assert.equal(((await done.json()) as { data: Array<{ status: string }> }).data[0]!.status, 'done');
    await eventually(async () =>
      world.issuer.events.notifications.some((n) => n.event === 'credential_accepted') ? true : undefined,
    );
  });

  test('batch: each copy is bound to its own key; each presentation uses a copy not presented before', async () => {
    const request = world.issuer.events.credentialRequests.at(-1)!;
    assert.equal(request.proofs, 3);
    const thumbprints = new Set(request.holderKeys.map((k) => JSON.stringify(k)));
    assert.equal(thumbprints.size, 3, 'three different holder keys');

    const first = await presentToVerifier(world, { credentials: [pidQuery] });
    const second = await presentToVerifier(world, { credentials: [pidQuery] });
    const keyOne = cnfOf(first.received.vpToken!['pid']![0] as string);
    const keyTwo = cnfOf(second.received.vpToken!['pid']![0] as string);
    assert.notDeepEqual(keyOne, keyTwo, 'two verifiers cannot link the person by the holder key');
    for (const key of [keyOne, keyTwo]) {
      assert.ok(createPublicKey({ key, format: 'jwk' }), 'a valid public key');
      assert.ok(
        world.issuer.issuedHolderKeys.some((k) => k.x === key.x),
        'a key the issuer bound',
      );
    }
  });
});

describe('OpenID4VCI 1.0: encrypted requests and responses, deferred, on sqlite', () => {
  let world: IssuanceWorld;
  before(async () => {
    world = await startIssuanceWorld('sqlite', {
      encryption: true,
      deferred: { pendingPolls: 1, interval: 1 },
    });
  });
  after(async () => {
    await world?.close();
  });

  test('the issuer requires encryption: every credential request is a JWE to its key, every answer decrypted with a fresh wallet key', async () => {
    const { byReferenceQuery } = await world.issuer.createOffer({
      configurationIds: ['mdl-mdoc'],
      grant: 'pre-authorized',
    });
    const interactionPath = await startIssuance(world, byReferenceQuery);
    const answer = await decideIssuance(world, interactionPath, { decision: 'approve' });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.pending, 1);
    const entries = await eventually(async () => {
      const list = await listed(world);
      return list.length > 0 ? list : undefined;
    });
    assert.equal(entries[0].format, 'mso_mdoc');
    assert.ok(
      world.issuer.events.encryptedRequests >= 3,
      'the credential request and each poll were encrypted',
    );
    assert.equal(world.issuer.events.encryptedResponses, world.issuer.events.encryptedRequests);
    assert.deepEqual(world.issuer.events.errors, []);
  });
});

for (const signed of ['trusted', 'untrusted'] as const) {
  describe(`OpenID4VCI 1.0: signed issuer metadata, ${signed} signer`, () => {
    let world: IssuanceWorld;
    before(async () => {
      world = await startIssuanceWorld('sqlite', { signedMetadata: signed });
    });
    after(async () => {
      await world?.close();
    });

    test(
      signed === 'trusted'
        ? 'metadata signed by a certificate chaining to ISSUER_TRUST_ANCHORS: the issuer is shown verified, with its signer'
        : 'metadata signed by a certificate nobody trusts: the offer is refused before anything else',
      async () => {
        const { byReferenceQuery } = await world.issuer.createOffer({
          configurationIds: ['pid-sd-jwt'],
          grant: 'pre-authorized',
        });
        if (signed === 'untrusted') {
          const refused = await openOffer(world, byReferenceQuery, 'application/json');
          assert.equal(refused.status, 400, refused.text);
          assert.match(JSON.parse(refused.text).error_description, /signature does not verify/);
          assert.match(JSON.parse(refused.text).error_description, /verification failed/);
          assert.deepEqual(world.issuer.events.errors, [], 'the issuer served its signed metadata');
          assert.equal(world.issuer.events.tokenRequests.length, 0);
          return;
        }
        const interactionPath = await startIssuance(world, byReferenceQuery);
        const issuance = await issuanceView(world, interactionPath);
        assert.equal(issuance.issuer.verified, true);
        assert.match(issuance.issuer.certificate.subject, /Example Issuer Document Signer/);
        const html = await (await fetch(`${world.server.url}${interactionPath}`)).text();
        assert.match(html, /Verified: its metadata is signed by/);
        assert.doesNotMatch(html, /Unverified issuer/);
      },
    );
  });
}

describe('OpenID4VCI 1.0: outbound rules', () => {
  test('an offer on a private address is refused without connecting, unless ALLOW_PRIVATE_TARGETS=true', async () => {
    const issuer = await startTestIssuer();
    const server = await startTestServer('sqlite');
    try {
      const { offerUri } = await issuer.createOffer({
        configurationIds: ['pid-sd-jwt'],
        grant: 'pre-authorized',
      });
      const response = await fetch(
        `${server.url}/v1/oid4vci/offer?credential_offer_uri=${encodeURIComponent(offerUri)}`,
        { headers: { accept: 'application/json' }, redirect: 'manual' },
      );
      assert.equal(response.status, 400);
      assert.match(
        ((await response.json()) as { error_description: string }).error_description,
        /private or loopback address/,
      );
      assert.equal(issuer.events.offerFetches, 0, 'the issuer was never contacted');
      const stillThere = await fetchWithCa(issuer.tlsCaPem, offerUri);
      assert.equal(stillThere.status, 200);
    } finally {
      await server.close();
      await issuer.close();
    }
  });
});
