import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { logInUser } from '../credentials/helpers.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { holderJwkOf } from '../helpers/issuers/holder.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { issueSdJwtVc, PID_CLAIMS, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import {
  logInWithSiweInConsent,
  startConsent,
  startWalletWorld,
  type WalletWorld,
} from '../oid4vp/wallet-helpers.ts';
import { interactionView } from '../oidc/flow-helpers.ts';
import { openWallet, walletJson } from '../wallet/wallet-helpers.ts';
import { type ListServer, startListServer, tokenStatusListJwt } from './status-lists.ts';

const pidQuery = {
  id: 'pid',
  format: 'dc+sd-jwt',
  meta: { vct_values: [PID_VCT] },
  claims: [{ path: ['given_name'] }],
};
const FORMATS = { 'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['EdDSA', 'ES256'] } };

/**
 * The issue's end-to-end status check: an SD-JWT VC whose issuer publishes a Token Status List
 * over HTTPS (built with @sd-jwt/jwt-status-list). Revoking it there shows on the wallet page and
 * takes it out of OpenID4VP within the list's ttl; a list that cannot be fetched gives "status
 * unknown" and blocks nothing.
 */
for (const kind of DATABASE_KINDS) {
  describe(`credential status from the issuer's list, page and presentations, on ${kind}`, () => {
    let lists: ListServer;
    let world: WalletWorld;
    let identity: IssuerIdentity;
    before(async () => {
      lists = await startListServer();
      identity = await makeIssuerIdentity('Status Issuer');
      world = await startWalletWorld(kind, {}, [lists.ca]);
    });
    after(async () => {
      await world?.close();
      await lists?.close();
    });

    /** A person holding one SD-JWT VC with status entry idx 3 on the list at `path`. */
    async function holderOfListedCredential(path: string) {
      const account = privateKeyToAccount(generatePrivateKey());
      const { did } = await logInUser(world.server, world.rp, account);
      const uri = `${lists.origin}${path}`;
      const vc = await issueSdJwtVc(identity, {
        holderJwk: holderJwkOf(did),
        claims: { ...PID_CLAIMS, status: { status_list: { idx: 3, uri } } },
      });
      const stored = await world.server.request('POST', '/v1/vc/issuer/store', {
        headers: { 'x-api-token': world.issuerToken },
        body: { vc },
      });
      assert.equal(stored.status, 201, stored.text);
      return { account, uri, cookie: await openWallet(world.server, account) };
    }

    const serveList = async (path: string, uri: string, statuses: number[], ttl: number) =>
      lists.serve(path, {
        body: await tokenStatusListJwt({ uri, statuses, bits: 2, key: identity.signer.keys.privateKey, ttl }),
        headers: { 'content-type': 'application/statuslist+jwt' },
      });

    async function candidates(account: ReturnType<typeof privateKeyToAccount>) {
      const transaction = await world.verifier.createRequest({
        by: 'reference',
        responseMode: 'direct_post.jwt',
        dcql: { credentials: [pidQuery] },
        formats: FORMATS,
      });
      const path = await startConsent(world.server, transaction.query);
      await logInWithSiweInConsent(world.server, path, account);
      const consent = (await interactionView(world.server, path)).body.consent;
      return { count: consent.requests[0].candidates.length as number, satisfiable: consent.satisfiable };
    }

    test('revoked on the list: the page marks it and verifiers are no longer offered it, within the ttl', async () => {
      const path = '/lists/revocable';
      const { account, uri, cookie } = await holderOfListedCredential(path);
      await serveList(path, uri, [0, 0, 0, 0], 1);

      const before = (await walletJson(world.server, cookie)).credentials[0];
      assert.deepEqual(before.status, { state: 'valid' });
      assert.match(lists.acceptOf(path) ?? '', /application\/statuslist\+jwt/);
      assert.deepEqual(await candidates(account), { count: 1, satisfiable: true });

      await serveList(path, uri, [0, 0, 0, 1], 1);
      await sleep(1100);
      const after = (await walletJson(world.server, cookie)).credentials[0];
      assert.deepEqual(after.status, { state: 'revoked' });
      const html = await (await fetch(`${world.server.url}/wallet`, { headers: { cookie } })).text();
      assert.match(html, /badge-revoked">Revoked by its issuer/);
      assert.deepEqual(await candidates(account), { count: 0, satisfiable: false });

      // Suspension (status 2) is shown and withheld the same way; reinstated, it is offered again.
      await serveList(path, uri, [0, 0, 0, 2], 1);
      await sleep(1100);
      assert.equal((await walletJson(world.server, cookie)).credentials[0].status.state, 'suspended');
      assert.equal((await candidates(account)).count, 0);
      await serveList(path, uri, [0, 0, 0, 0], 1);
      await sleep(1100);
      assert.equal((await candidates(account)).count, 1);
    });

    test('a list that cannot be fetched or is signed by another key: "status unknown", still offered', async () => {
      const missing = await holderOfListedCredential('/lists/missing');
      lists.serve('/lists/missing', { status: 404, body: 'no such list' });
      const unknown = (await walletJson(world.server, missing.cookie)).credentials[0].status;
      assert.equal(unknown.state, 'unknown');
      assert.equal(typeof unknown.reason, 'string');
      const html = await (
        await fetch(`${world.server.url}/wallet`, { headers: { cookie: missing.cookie } })
      ).text();
      assert.match(html, /Status unknown<\/span> <span>\(.*the verifier checks the status itself\)/);
      assert.equal((await candidates(missing.account)).count, 1);

      const forged = await holderOfListedCredential('/lists/forged');
      const other = await makeIssuerIdentity('Someone Else');
      lists.serve('/lists/forged', {
        body: await tokenStatusListJwt({
          uri: forged.uri,
          statuses: [1, 1, 1, 1],
          bits: 1,
          key: other.signer.keys.privateKey,
        }),
      });
      assert.equal((await walletJson(world.server, forged.cookie)).credentials[0].status.state, 'unknown');
      assert.equal((await candidates(forged.account)).count, 1, 'a list by another key revokes nothing');
    });
  });
}
