import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { logInUser } from '../credentials/helpers.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { MDL_DOCTYPE, MDL_NAMESPACE } from '../helpers/issuers/mdoc-issuer.ts';
import { PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { leaksInternals } from '../helpers/server.ts';
import {
  checkMdocPresentation,
  checkSdJwtPresentation,
  selectivelyDisclosed,
} from '../oid4vp/format-checks.ts';
import { registerRelyingParty } from '../oidc/flow-helpers.ts';
import { walletJson } from '../wallet/wallet-helpers.ts';
import {
  decideIssuance,
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
  claims: [{ path: ['given_name'] }],
};
const mdlQuery = {
  id: 'mdl',
  format: 'mso_mdoc',
  meta: { doctype_value: MDL_DOCTYPE },
  claims: [{ path: [MDL_NAMESPACE, 'family_name'] }],
};

for (const kind of DATABASE_KINDS) {
  describe(`OpenID4VCI 1.0, pre-authorized code, from an @openid4vc/openid4vci issuer, on ${kind}`, () => {
    let world: IssuanceWorld;
    before(async () => {
      world = await startIssuanceWorld(kind);
    });
    after(async () => {
      await world?.close();
    });

    test('an offer by reference: the page shows the issuer and the credential; approve stores an SD-JWT VC bound to the key the wallet proved; it is then presentable', async () => {
      const { byReferenceQuery } = await world.issuer.createOffer({
        configurationIds: ['pid-sd-jwt'],
        grant: 'pre-authorized',
      });
      const interactionPath = await startIssuance(world, byReferenceQuery);
      assert.equal(world.issuer.events.offerFetches, 1, 'the offer was fetched by reference');
      const issuance = await issuanceView(world, interactionPath);
      assert.equal(issuance.issuer.name, 'Example Issuer');
      assert.equal(issuance.issuer.identifier, world.issuer.credentialIssuer);
      assert.equal(issuance.issuer.verified, false);
      assert.match(issuance.issuer.logo.uri, /^https:\/\//);
      assert.deepEqual(
        issuance.credentials.map((c: { id: string; format: string; name: string }) => [
          c.id,
          c.format,
          c.name,
        ]),
        [['pid-sd-jwt', 'dc+sd-jwt', 'Personal ID']],
      );
      assert.equal(issuance.tx_code, null);
      assert.equal(issuance.accounts.length, 1);

      const page = await fetch(`${world.server.url}${interactionPath}`, {
        headers: { cookie: world.cookie! },
      });
      const html = await page.text();
      assert.match(html, /Add credentials from Example Issuer/);
      assert.match(html, /Unverified issuer/);
      assert.match(
        page.headers.get('content-security-policy') ?? '',
        /img-src 'self' https:\/\/issuer\.example/,
      );

      const answer = await decideIssuance(world, interactionPath, { decision: 'approve' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.next, 'done');
      assert.equal(answer.body.received.length, 1);
      assert.equal(answer.body.received[0].format, 'dc+sd-jwt');

      const request = world.issuer.events.credentialRequests.at(-1)!;
      assert.equal(request.ok, true, request.error);
      assert.equal(request.proofs, 1);
      assert.deepEqual(
        world.issuer.events.notifications.map((n) => n.event),
        ['credential_accepted'],
      );
      const [entry] = await listed(world);
      assert.equal(entry.format, 'dc+sd-jwt');
      assert.equal(entry.type, PID_VCT);
      assert.equal(entry.claims.given_name, 'Ada');

      const { received, audience } = await presentToVerifier(world, { credentials: [pidQuery] });
      const claims = await checkSdJwtPresentation(
        received.vpToken!['pid']![0],
        world.issuer.identity,
        world.issuer.issuedHolderKeys.at(-1)!,
        audience,
      );
      assert.deepEqual(selectivelyDisclosed(claims), { given_name: 'Ada' });
    });

    test('deleting a received credential tells its issuer (credential_deleted); the wallet page shows its issuer and arrival', async () => {
      const { byReferenceQuery } = await world.issuer.createOffer({
        configurationIds: ['pid-sd-jwt'],
        grant: 'pre-authorized',
      });
      const interactionPath = await startIssuance(world, byReferenceQuery);
      const answer = await decideIssuance(world, interactionPath, { decision: 'approve' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const credentialId = answer.body.received[0].credential_id as string;
      const accepted = world.issuer.events.notifications.at(-1)!;
      assert.equal(accepted.event, 'credential_accepted');

      const wallet = await walletJson(world.server, world.cookie!);
      const shown = wallet.credentials.find((c: { id: string }) => c.id === credentialId);
      assert.equal(shown.issuer.name, 'Example Issuer');
      // The names the issuer's metadata displays, kept with the credential (issue #29).
      assert.equal(shown.typeName, 'Personal ID');
      assert.equal(shown.issuer.label, 'Example Issuer');
      assert.ok(world.issuer.credentialIssuer.includes(shown.issuer.shortIdentifier));
      assert.equal(shown.issuer.logo.uri, 'https://issuer.example/logo.png');
      assert.equal(shown.receivedFrom, 'Example Issuer');
      const arrival = wallet.history.find(
        (e: { kind: string; credential: { id: string } }) =>
          e.kind === 'arrival' && e.credential.id === credentialId,
      );
      assert.deepEqual(arrival.from, {
        name: 'Example Issuer',
        via: 'oid4vci',
        identifier: world.issuer.credentialIssuer,
      });

      const path = `/v1/openidc/credentials/${encodeURIComponent(credentialId)}`;
      const deleted = await world.server.request('DELETE', path, { headers: world.user.bearer });
      assert.equal(deleted.status, 204, deleted.text);
      const notice = world.issuer.events.notifications.at(-1)!;
      assert.deepEqual(notice, { notification_id: accepted.notification_id, event: 'credential_deleted' });
      assert.equal(
        (await listed(world)).some((c) => c.id === credentialId),
        false,
      );
    });

    test('an offer by value with a tx_code: the page asks for it; a wrong code stores nothing and can be corrected', async () => {
      const before = (await listed(world)).length;
      const { byValueQuery } = await world.issuer.createOffer({
        configurationIds: ['mdl-mdoc'],
        grant: 'pre-authorized',
        txCode: { value: '493536', length: 6, input_mode: 'numeric', description: 'The code in our e-mail' },
      });
      const offerFetches = world.issuer.events.offerFetches;
      const interactionPath = await startIssuance(world, byValueQuery);
      assert.equal(world.issuer.events.offerFetches, offerFetches, 'an offer by value is not fetched');
      const issuance = await issuanceView(world, interactionPath);
      assert.deepEqual(issuance.tx_code, {
        length: 6,
        input_mode: 'numeric',
        description: 'The code in our e-mail',
      });
      const html = await (await fetch(`${world.server.url}${interactionPath}`)).text();
      assert.match(html, /id="tx-code"[^>]*maxlength="6"[^>]*inputmode="numeric"/);
      assert.match(html, /The code in our e-mail/);

      const missing = await decideIssuance(world, interactionPath, { decision: 'approve' });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.details[0].path, '/body/tx_code');
      const wrongShape = await decideIssuance(world, interactionPath, {
        decision: 'approve',
        tx_code: '12ab56',
      });
      assert.equal(wrongShape.status, 400);
      const tokenRequests = world.issuer.events.tokenRequests.length;
      const wrong = await decideIssuance(world, interactionPath, { decision: 'approve', tx_code: '000000' });
      assert.equal(wrong.status, 400, JSON.stringify(wrong.body));
      assert.match(wrong.body.error_description, /did not accept the transaction code/);
      assert.equal(world.issuer.events.tokenRequests.length, tokenRequests + 1);
      assert.equal(world.issuer.events.tokenRequests.at(-1)!.ok, false);
      assert.equal((await listed(world)).length, before, 'nothing was stored');

      const right = await decideIssuance(world, interactionPath, { decision: 'approve', tx_code: '493536' });
      assert.equal(right.status, 200, JSON.stringify(right.body));
      assert.equal(right.body.received[0].format, 'mso_mdoc');
      assert.equal((await listed(world)).length, before + 1);

      const { received, audience } = await presentToVerifier(world, { credentials: [mdlQuery] });
      assert.deepEqual(
        await checkMdocPresentation(received.vpToken!['mdl']![0], world.issuer.identity, audience),
        {
          [MDL_NAMESPACE]: ['family_name'],
        },
      );
    });

    test('a jwt_vc_json credential is bound to the account DID, its proof signed by the account key', async () => {
      const { byReferenceQuery } = await world.issuer.createOffer({
        configurationIds: ['degree-jwt-vc'],
        grant: 'pre-authorized',
      });
      const interactionPath = await startIssuance(world, byReferenceQuery);
      const answer = await decideIssuance(world, interactionPath, { decision: 'approve' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.received[0].format, 'jwt_vc_json');
      const request = world.issuer.events.credentialRequests.at(-1)!;
      assert.deepEqual(request.holderKeys, [world.user.did]);
      const entry = (await listed(world)).find((e) => e.format === 'jwt_vc_json');
      assert.equal(entry.claims.credentialSubject.id, world.user.did);
    });

    test('decline: nothing is stored and the issuer sees no token request', async () => {
      const before = (await listed(world)).length;
      const tokenRequests = world.issuer.events.tokenRequests.length;
      const { byReferenceQuery } = await world.issuer.createOffer({
        configurationIds: ['pid-sd-jwt'],
        grant: 'pre-authorized',
      });
      const interactionPath = await startIssuance(world, byReferenceQuery);
      const answer = await decideIssuance(world, interactionPath, { decision: 'decline' });
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body, { next: 'done', received: [], pending: 0 });
      assert.equal(world.issuer.events.tokenRequests.length, tokenRequests);
      assert.equal((await listed(world)).length, before);
      const again = await decideIssuance(world, interactionPath, { decision: 'approve' });
      assert.equal(again.status, 404, 'a decided interaction is gone');
    });

    test('an offer is taken once', async () => {
      const { byReferenceQuery } = await world.issuer.createOffer({
        configurationIds: ['pid-sd-jwt'],
        grant: 'pre-authorized',
      });
      await startIssuance(world, byReferenceQuery);
      const second = await openOffer(world, byReferenceQuery, 'application/json');
      assert.equal(second.status, 400);
      assert.match(JSON.parse(second.text).error_description, /opened before/);
    });

    test('an identity with accounts in two tenants chooses the receiving account; only that account gets the credential', async () => {
      const otherTenant = await registerRelyingParty(world.server);
      const other = await logInUser(world.server, otherTenant, world.account);
      assert.notEqual(other.did, world.user.did);
      const { byReferenceQuery } = await world.issuer.createOffer({
        configurationIds: ['pid-sd-jwt'],
        grant: 'pre-authorized',
      });
      const interactionPath = await startIssuance(world, byReferenceQuery);
      const issuance = await issuanceView(world, interactionPath);
      assert.deepEqual(
        issuance.accounts.map((a: { account: string }) => a.account).sort(),
        [world.user.did, other.did].sort(),
      );
      const html = await (
        await fetch(`${world.server.url}${interactionPath}`, { headers: { cookie: world.cookie! } })
      ).text();
      assert.match(html, /Which account receives them\?/);

      const unchosen = await decideIssuance(world, interactionPath, { decision: 'approve' });
      assert.equal(unchosen.status, 400);
      assert.equal(unchosen.body.details[0].path, '/body/account');
      const foreign = await decideIssuance(world, interactionPath, {
        decision: 'approve',
        account: 'did:key:z6MkNotYours',
      });
      assert.equal(foreign.status, 400);
      const before = (await listed(world)).length;
      const chosen = await decideIssuance(world, interactionPath, {
        decision: 'approve',
        account: other.did,
      });
      assert.equal(chosen.status, 200, JSON.stringify(chosen.body));
      const otherList = await world.server.request('GET', '/v1/openidc/credentials', {
        headers: other.bearer,
      });
      assert.equal((otherList.body as { data: unknown[] }).data.length, 1);
      assert.equal((await listed(world)).length, before, 'the other account received nothing');
    });

    test('bad offers get a 400 (JSON or page) naming the problem, never a 500', async () => {
      const issuerUrl = world.issuer.credentialIssuer;
      const cases: Array<[string, number, RegExp]> = [
        ['', 400, /exactly one of credential_offer and credential_offer_uri/],
        [
          `credential_offer=%7B%7D&credential_offer_uri=${encodeURIComponent(`${issuerUrl}/x`)}`,
          400,
          /exactly one/,
        ],
        ['credential_offer=not-json', 400, /not a valid OpenID4VCI credential offer/],
        [
          `credential_offer=${encodeURIComponent(JSON.stringify({ credential_issuer: issuerUrl }))}`,
          400,
          /not a valid/,
        ],
        [
          `credential_offer=${encodeURIComponent(JSON.stringify({ credential_issuer: issuerUrl, credential_configuration_ids: ['nope'] }))}`,
          400,
          /no credential configuration nope/,
        ],
        [
          `credential_offer_uri=${encodeURIComponent('http://issuer.example/offer')}`,
          400,
          /not an https: address/,
        ],
        [`credential_offer_uri=${encodeURIComponent(`${issuerUrl}/offers/unknown`)}`, 400, /not a valid/],
        [
          `credential_offer_uri=${encodeURIComponent('https://127.0.0.1:1/offer')}`,
          502,
          /could not be reached/,
        ],
      ];
      for (const [query, status, message] of cases) {
        const json = await openOffer(world, query, 'application/json');
        assert.equal(json.status, status, `${query}: ${json.text}`);
        const body = JSON.parse(json.text);
        assert.match(body.error_description, message, query);
        assert.equal(leaksInternals(json.text), false, json.text);
        const page = await openOffer(world, query);
        assert.equal(page.status, status);
        assert.match(page.text, /<h1>This credential offer cannot be used<\/h1>/);
      }
    });
  });
}
