import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import {
  type IssuerWorld,
  preAuthorizedCodeOf,
  redeemPreAuthorizedCode,
  requestCredential,
  startIssuerWorld,
} from '../issuer/issuer-helpers.ts';
import { addAdmin, consoleLogin, formToken, getPage, postForm } from './console-helpers.ts';

const CONFIGURATION = {
  form: 'fields',
  id: 'diploma',
  format: 'dc+sd-jwt',
  type_value: 'https://credentials.example.com/diploma',
  claims: 'given_name | Given name\ndegree | Degree',
  status: 'on',
};

for (const kind of DATABASE_KINDS) {
  describe(`the console's issuer pages on ${kind}`, () => {
    let world: IssuerWorld;
    let other: { clientId: number; token: string };
    let ownerId: number;
    let operatorId: number;
    let owner: string;
    let operator: string;
    let auditor: string;
    let csrf: { owner: string; operator: string; auditor: string };
    let base: string;
    before(async () => {
      world = await startIssuerWorld(kind);
      const { server } = world;
      base = `/console/clients/${world.clientId}/issuer`;
      other = await server.createMaster('Shop B');
      ownerId = await addAdmin(server, world.clientId, { email: 'owner@a.example' }, 'owner');
      operatorId = await addAdmin(server, world.clientId, { email: 'operator@a.example' }, 'operator');
      await addAdmin(server, world.clientId, { email: 'auditor@a.example' }, 'auditor');
      await addAdmin(server, other.clientId, { email: 'owner@b.example' }, 'owner');
      owner = (await consoleLogin(server, 'owner@a.example')).cookie;
      operator = (await consoleLogin(server, 'operator@a.example')).cookie;
      auditor = (await consoleLogin(server, 'auditor@a.example')).cookie;
      csrf = {
        owner: await formToken(server, owner, world.clientId),
        operator: await formToken(server, operator, world.clientId),
        auditor: await formToken(server, auditor, world.clientId),
      };
    });
    after(async () => {
      await world?.close();
    });

    const lastEvent = async (type: string) => {
      const audit = await world.api('GET', `/v1/audit?type=${type}`);
      assert.equal(audit.status, 200);
      return audit.body.data[0];
    };

    test('a client that is not an issuer gets the command its operator runs', async () => {
      const cookie = (await consoleLogin(world.server, 'owner@b.example')).cookie;
      const response = await getPage(world.server, cookie, `/console/clients/${other.clientId}/issuer`);
      assert.equal(response.status, 200);
      const html = await response.text();
      assert.match(html, new RegExp(`npx coffer issuer enable --client ${other.clientId}`));
      assert.match(html, /no way for a client to do it itself/);
    });

    test('an owner writes a configuration with the form and the JSON editor; mistakes come back in the form', async () => {
      const created = await postForm(world.server, owner, `${base}/configurations`, {
        ...CONFIGURATION,
        csrf_token: csrf.owner,
      });
      assert.equal(created.status, 303, await created.text());
      assert.equal(created.headers.get('location'), `${base}/configurations/diploma?done=saved`);
      const listed = await world.api('GET', '/v1/issuer/configurations');
      const diploma = listed.body.data.find((c: { id: string }) => c.id === 'diploma');
      assert.equal(diploma.vct, CONFIGURATION.type_value);
      assert.deepEqual(diploma.claims[0], { path: ['given_name'], display: [{ name: 'Given name' }] });
      assert.equal(diploma.status, true);
      assert.equal((await lastEvent('issuer.configuration_put')).actor, `admin:${ownerId}`);

      const bad = await postForm(world.server, owner, `${base}/configurations`, {
        ...CONFIGURATION,
        id: 'no spaces',
        csrf_token: csrf.owner,
      });
      assert.equal(bad.status, 400);
      const badHtml = await bad.text();
      assert.match(badHtml, /id="id" name="id" aria-describedby="id-hint id-error" aria-invalid="true"/);
      assert.match(badHtml, /Degree/, 'what was typed comes back');

      const json = JSON.stringify({ ...diploma, id: undefined, display: [{ name: 'Diploma' }] });
      const saved = await postForm(world.server, owner, `${base}/configurations/diploma`, {
        form: 'json',
        json,
        csrf_token: csrf.owner,
      });
      assert.equal(saved.status, 303);
      const page = await (await getPage(world.server, owner, `${base}/configurations/diploma`)).text();
      assert.match(page, /&quot;Diploma&quot;/);
      // The fields form keeps what only the JSON sets.
      await postForm(world.server, owner, `${base}/configurations/diploma`, {
        ...CONFIGURATION,
        csrf_token: csrf.owner,
      });
      const kept = (await world.api('GET', '/v1/issuer/configurations')).body.data.find(
        (c: { id: string }) => c.id === 'diploma',
      );
      assert.deepEqual(kept.display, [{ name: 'Diploma' }]);

      for (const [body, pattern] of [
        ['{', /is not JSON/],
        ['{"format":"dc+sd-jwt","claims":[],"colour":1}', /does not fit the schema/],
      ] as const) {
        const refused = await postForm(world.server, owner, `${base}/configurations/diploma`, {
          form: 'json',
          json: body,
          csrf_token: csrf.owner,
        });
        assert.equal(refused.status, 400);
        assert.match(await refused.text(), pattern);
      }
    });

    test('an operator makes an offer; a wallet takes it; the operator revokes the credential', async () => {
      const form = await getPage(world.server, operator, `${base}/offers/new?configuration=diploma`);
      assert.equal(form.status, 200);
      assert.match(await form.text(), /<label for="claim_0">Given name<\/label>/);
      const made = await postForm(world.server, operator, `${base}/offers`, {
        configuration: 'diploma',
        claim_0: 'Ada',
        claim_1: 'Mathematics',
        expires_in_minutes: '30',
        tx_code: 'on',
        csrf_token: csrf.operator,
      });
      assert.equal(made.status, 200);
      const html = await made.text();
      assert.match(html, /<svg class="qr" role="img"/);
      const link = html.match(/href="(openid-credential-offer:\/\/[^"]+)"/)![1]!.replaceAll('&amp;', '&');
      const txCode = html.match(/Transaction code: <strong>(\d{6})<\/strong>/)![1]!;
      assert.equal((await lastEvent('issuer.offer_create')).actor, `admin:${operatorId}`);
      const offerUri = new URL(link).searchParams.get('credential_offer_uri')!;
      const code = await preAuthorizedCodeOf({ credential_offer_uri: offerUri });
      const token = await redeemPreAuthorizedCode(world, code, txCode);
      assert.equal(token.status, 200, JSON.stringify(token.body));
      const issued = await requestCredential(world, token.body.access_token, 'diploma');
      assert.equal(issued.status, 200, JSON.stringify(issued.body));

      const offers = await (await getPage(world.server, operator, `${base}/offers`)).text();
      assert.match(offers, /<td data-label="Status">issued<\/td>/);
      const list = await (await getPage(world.server, operator, `${base}/credentials`)).text();
      const credentialId = list.match(/action="[^"]+\/credentials\/([^/"]+)\/status"/)![1]!;
      const revoked = await postForm(world.server, operator, `${base}/credentials/${credentialId}/status`, {
        status: 'revoked',
        csrf_token: csrf.operator,
      });
      assert.equal(revoked.status, 303);
      const event = await lastEvent('issuer.status_change');
      assert.equal(event.actor, `admin:${operatorId}`);
      const view = (await world.api('GET', '/v1/issuer/credentials')).body.data.find(
        (c: { id: string }) => c.id === decodeURIComponent(credentialId),
      );
      assert.equal(view.status, 'revoked');
    });

    test('offer mistakes come back in the form', async () => {
      const refused = await postForm(world.server, owner, `${base}/offers`, {
        configuration: 'diploma',
        claim_0: 'Ada',
        expires_in_minutes: 'soon',
        csrf_token: csrf.owner,
      });
      assert.equal(refused.status, 400);
      assert.match(await refused.text(), /id="expires_in_minutes-error"/);
    });

    test('a claim path through __proto__ is refused in the configuration form and changes no other object', async () => {
      // Claim paths are the owner's to choose, and the console builds an offer's claims from them,
      // so a step must not reach a prototype: such a configuration is refused before it is saved
      // (src/issuer/configurations.ts), as PUT /v1/issuer/configurations refuses it.
      const saved = await postForm(world.server, owner, `${base}/configurations`, {
        ...CONFIGURATION,
        id: 'proto',
        claims: '__proto__/polluted | Polluted',
        csrf_token: csrf.owner,
      });
      assert.equal(saved.status, 400);
      assert.match(await saved.text(), /__proto__ cannot be offered/);
      const made = await postForm(world.server, operator, `${base}/offers`, {
        configuration: 'proto',
        claim_0: 'yes',
        csrf_token: csrf.operator,
      });
      assert.equal(made.status, 404, 'no such configuration to offer');
      assert.equal(({} as Record<string, unknown>)['polluted'], undefined, 'every object of the server');
    });

    test('an auditor is refused every write; an operator writes no configuration', async () => {
      const writes: Array<[string, Record<string, string>]> = [
        [`${base}/configurations`, { ...CONFIGURATION, id: 'other' }],
        [`${base}/configurations/diploma`, CONFIGURATION],
        [`${base}/configurations/diploma/delete`, {}],
        [`${base}/offers`, { configuration: 'diploma', claim_0: 'Ada' }],
        [`${base}/credentials/whatever/status`, { status: 'revoked' }],
      ];
      for (const [path, fields] of writes) {
        const response = await postForm(world.server, auditor, path, { ...fields, csrf_token: csrf.auditor });
        assert.equal(response.status, 403, path);
      }
      for (const [path, fields] of writes.slice(0, 3)) {
        const response = await postForm(world.server, operator, path, {
          ...fields,
          csrf_token: csrf.operator,
        });
        assert.equal(response.status, 403, path);
      }
      const page = await (await getPage(world.server, auditor, base)).text();
      assert.match(page, /an owner writes them/);
      assert.doesNotMatch(page, /configurations\/new/);
    });

    test('a missing or forged page token is refused', async () => {
      for (const token of [undefined, 'forged']) {
        const response = await postForm(world.server, owner, `${base}/configurations`, {
          ...CONFIGURATION,
          id: 'forged',
          ...(token ? { csrf_token: token } : {}),
        });
        assert.equal(response.status, 403);
      }
    });

    test("another tenant's client, configuration or credential is not found", async () => {
      const otherWorld = `/console/clients/${other.clientId}/issuer`;
      assert.equal((await getPage(world.server, owner, otherWorld)).status, 404);
      const foreign = await postForm(world.server, owner, `${otherWorld}/configurations`, {
        ...CONFIGURATION,
        csrf_token: csrf.owner,
      });
      assert.equal(foreign.status, 404);
      assert.equal((await getPage(world.server, owner, `${base}/configurations/nothing-here`)).status, 404);
      const credential = await postForm(world.server, owner, `${base}/credentials/not-ours/status`, {
        status: 'revoked',
        csrf_token: csrf.owner,
      });
      assert.equal(credential.status, 404);
    });

    test("another issuing tenant's configuration and credential, by their real ids, are not found and stay as they were", async () => {
      // Tenant C issues too; its ids are real, so a missing client_id scope would find them.
      const shop = await world.server.createMaster('Shop C');
      const enabled = await coffer(
        world.server,
        'issuer',
        'enable',
        '--client',
        String(shop.clientId),
        '--json',
      );
      assert.equal(enabled.code, 0, enabled.stderr);
      const c: IssuerWorld = {
        ...world,
        clientId: shop.clientId,
        token: shop.token,
        issuerId: JSON.parse(enabled.stdout).credential_issuer,
        api: (method, p, body) =>
          world.server.request(method, p, {
            headers: { 'x-api-token': shop.token },
            ...(body === undefined ? {} : { body }),
          }),
      };
      const put = await c.api('PUT', '/v1/issuer/configurations/c-only', {
        format: 'dc+sd-jwt',
        vct: 'https://credentials.example.com/c',
        claims: [{ path: ['given_name'] }],
        status: true,
      });
      assert.ok(put.status < 300, put.text);
      const offer = await c.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['c-only'],
        claims: { 'c-only': { given_name: 'Bea' } },
      });
      assert.equal(offer.status, 201, offer.text);
      const token = await redeemPreAuthorizedCode(c, await preAuthorizedCodeOf(offer.body.data));
      assert.equal((await requestCredential(c, token.body.access_token, 'c-only')).status, 200);
      const credentialOfC = (await c.api('GET', '/v1/issuer/credentials')).body.data[0];

      assert.equal((await getPage(world.server, owner, `${base}/configurations/c-only`)).status, 404);
      assert.equal((await getPage(world.server, owner, `${base}/configurations/c-only/delete`)).status, 404);
      assert.equal(
        (await getPage(world.server, owner, `${base}/offers/new?configuration=c-only`)).status,
        404,
      );
      const attempts: Array<[string, Record<string, string>]> = [
        [`${base}/configurations/c-only`, { ...CONFIGURATION, claims: 'stolen | Stolen' }],
        [`${base}/configurations/c-only`, { form: 'json', json: '{"format":"dc+sd-jwt","claims":[]}' }],
        [`${base}/configurations/c-only/delete`, {}],
        [`${base}/offers`, { configuration: 'c-only', claim_0: 'Mallory' }],
        [`${base}/credentials/${encodeURIComponent(credentialOfC.id)}/status`, { status: 'revoked' }],
      ];
      for (const [path, fields] of attempts) {
        const response = await postForm(world.server, owner, path, { ...fields, csrf_token: csrf.owner });
        assert.equal(response.status, 404, path);
      }
      const configurations = (await c.api('GET', '/v1/issuer/configurations')).body.data;
      assert.deepEqual(
        configurations.map((x: { id: string; claims: unknown }) => [x.id, x.claims]),
        [['c-only', [{ path: ['given_name'] }]]],
      );
      const after = (await c.api('GET', '/v1/issuer/credentials')).body.data[0];
      assert.equal(after.status, 'valid');
      const offers = (await c.api('GET', '/v1/audit?type=issuer.offer_create')).body.data;
      assert.equal(offers.length, 1, "no offer was made in C's name");
    });

    test('an owner deletes a configuration after confirming', async () => {
      await postForm(world.server, owner, `${base}/configurations`, {
        ...CONFIGURATION,
        id: 'badge',
        csrf_token: csrf.owner,
      });
      const confirm = await getPage(world.server, owner, `${base}/configurations/badge/delete`);
      assert.equal(confirm.status, 200);
      assert.match(await confirm.text(), /Delete badge/);
      const deleted = await postForm(world.server, owner, `${base}/configurations/badge/delete`, {
        csrf_token: csrf.owner,
      });
      assert.equal(deleted.status, 303);
      assert.equal(deleted.headers.get('location'), `${base}?done=deleted`);
      assert.equal((await lastEvent('issuer.configuration_delete')).actor, `admin:${ownerId}`);
      assert.equal((await getPage(world.server, owner, `${base}/configurations/badge`)).status, 404);
    });
  });
}
