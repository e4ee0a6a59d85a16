import assert from 'node:assert/strict';
import { createHash, type JsonWebKey } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { issueSdJwtVc, PID_CLAIMS, PID_VCT, type SdJwtOptions } from '../helpers/issuers/sd-jwt-issuer.ts';
import { type ListServer, startListServer, tokenStatusListJwt } from '../status/status-lists.ts';
import { answer, type ResolvedRequest } from './test-wallet.ts';
import {
  assertRejectedAt,
  discloseSdJwt,
  keyBindingJwt,
  openRequest,
  presentSdJwt,
  resultOf,
  sdJwtQuery,
  startVerifierWorld,
  type VerifierWorld,
} from './verifier-helpers.ts';

/**
 * What a wallet (or someone in between) can do wrong with a dc+sd-jwt beyond the basics of
 * verifier-sd-jwt.test.ts: a key binding JWT of another presentation, a disclosure the issuer
 * never signed, an issuer under another CA, an expired credential, a credential revoked on its
 * issuer's Token Status List (made with @sd-jwt/jwt-status-list, served over HTTPS here), and
 * transaction data left unconfirmed. Each is rejected by its check's name.
 */

const FRAME = { given_name: true, family_name: true };
const query = sdJwtQuery(PID_VCT, [['given_name'], ['family_name']]);

for (const kind of DATABASE_KINDS) {
  describe(`verifier: dc+sd-jwt tampering, status and transaction data, on ${kind}`, () => {
    let lists: ListServer;
    let world: VerifierWorld;
    let holder: Awaited<ReturnType<typeof generateKeyPair>>;
    let holderJwk: JsonWebKey;
    let credential: string;

    before(async () => {
      lists = await startListServer();
      world = await startVerifierWorld(kind, {}, { trust: [lists.ca] });
      holder = await generateKeyPair('ES256', { extractable: true });
      holderJwk = (await exportJWK(holder.publicKey)) as JsonWebKey;
      credential = await issueSdJwtVc(world.issuer, { holderJwk });
    });
    after(async () => {
      await world?.close();
      await lists?.close();
    });

    const bindingOf = (request: ResolvedRequest) => ({ aud: request.clientId, nonce: request.payload.nonce });

    /** A fresh request answered with what `present` makes of it; the tenant's result. */
    async function answered(
      present: (request: ResolvedRequest) => Promise<string>,
      body: Record<string, unknown> = {},
    ) {
      const { created, request } = await openRequest(world, { dcql_query: query, ...body });
      assert.equal((await answer(request, { pid: [await present(request)] })).status, 200);
      return resultOf(world, created.id);
    }

    const presentationOf = (value: string) => (request: ResolvedRequest) =>
      presentSdJwt(value, FRAME, holder, bindingOf(request));

    test("a key binding JWT of another presentation (its sd_hash is another's) is rejected at sd_hash", async () => {
      const result = await answered(async (request) => {
        const other = await presentSdJwt(
          credential,
          { ...FRAME, birthdate: true },
          holder,
          bindingOf(request),
        );
        const foreignKb = other.slice(other.lastIndexOf('~') + 1);
        return (await discloseSdJwt(credential, FRAME)) + foreignKb;
      });
      assertRejectedAt(result, 'pid', 'sd_hash');
    });

    test('a disclosure no digest references, appended and covered by a fresh sd_hash, is rejected at digests', async () => {
      const another = await issueSdJwtVc(world.issuer, {
        holderJwk,
        claims: { ...PID_CLAIMS, given_name: 'Grace' },
      });
      const stray = another.split('~')[1]!;
      const result = await answered(async (request) => {
        const tampered = `${await discloseSdJwt(credential, FRAME)}${stray}~`;
        return tampered + (await keyBindingJwt(tampered, holder, bindingOf(request)));
      });
      const entry = assertRejectedAt(result, 'pid', 'digests');
      assert.deepEqual(
        entry.checks.map((check: { name: string }) => check.name),
        ['format', 'issuer_signature', 'issuer_named', 'issuer_trusted', 'digests'],
      );
    });

    test('an issuer under another CA is untrusted and rejected at issuer_trusted', async () => {
      const stranger = await makeIssuerIdentity('Another Issuer');
      const result = await answered(presentationOf(await issueSdJwtVc(stranger, { holderJwk })));
      const entry = assertRejectedAt(result, 'pid', 'issuer_trusted');
      assert.equal(entry.issuer.trusted, false);
      assert.equal(entry.issuer.certificate.trusted, false);
      assert.match(entry.issuer.certificate.subject, /Another Issuer Document Signer/);
    });

    test('an expired credential is rejected at validity', async () => {
      const expired = await issueSdJwtVc(world.issuer, {
        holderJwk,
        exp: Math.floor(Date.now() / 1000) - 3600,
      });
      const entry = assertRejectedAt(await answered(presentationOf(expired)), 'pid', 'validity');
      assert.match(entry.checks.at(-1).detail, /expired/);
    });

    describe("the issuer's Token Status List", () => {
      const path = '/lists/pid';
      let listed: (idx: number) => Promise<string>;
      before(async () => {
        const uri = `${lists.origin}${path}`;
        lists.serve(path, {
          body: await tokenStatusListJwt({
            uri,
            statuses: [0, 0, 0, 1],
            bits: 2,
            key: world.issuer.signer.keys.privateKey,
          }),
          headers: { 'content-type': 'application/statuslist+jwt' },
        });
        const options = (idx: number): SdJwtOptions => ({
          holderJwk,
          claims: { ...PID_CLAIMS, status: { status_list: { idx, uri } } },
        });
        listed = (idx) => issueSdJwtVc(world.issuer, options(idx));
      });

      test('valid on the list: verified, status valid', async () => {
        const result = await answered(presentationOf(await listed(2)));
        assert.equal(result.status, 'verified', JSON.stringify(result));
        const [entry] = result.credentials.pid;
        assert.equal(entry.status, 'valid');
        assert.deepEqual(entry.checks.at(-1), { name: 'status', ok: true });
        assert.ok(lists.fetches(path) >= 1);
      });

      test('revoked on the list: rejected at status, status revoked', async () => {
        const entry = assertRejectedAt(await answered(presentationOf(await listed(3))), 'pid', 'status');
        assert.equal(entry.status, 'revoked');
      });

      test('check_status false: the status is not checked, the revoked credential is verified, status unchecked', async () => {
        const result = await answered(presentationOf(await listed(3)), { check_status: false });
        assert.equal(result.status, 'verified', JSON.stringify(result));
        const [entry] = result.credentials.pid;
        assert.equal(entry.status, 'unchecked');
        assert.ok(!entry.checks.some((check: { name: string }) => check.name === 'status'));
      });
    });

    describe('transaction data for the pid query', () => {
      const item = {
        type: 'payment_confirmation',
        credential_ids: ['pid'],
        transaction_data_hashes_alg: ['sha-256'],
        payee: 'Shop',
        amount: '42.00',
      };
      const hashesOf = (request: ResolvedRequest) =>
        (request.payload.transaction_data as string[]).map((encoded) =>
          createHash('sha256').update(encoded).digest('base64url'),
        );

      test('a key binding JWT without transaction_data_hashes is rejected at transaction_data_hashes', async () => {
        const result = await answered(presentationOf(credential), { transaction_data: [item] });
        assertRejectedAt(result, 'pid', 'transaction_data_hashes');
      });

      test('with the hashes of the items as received: verified, and the result carries the transaction data', async () => {
        const result = await answered(
          async (request) => {
            assert.equal(request.payload.transaction_data.length, 1);
            return presentSdJwt(credential, FRAME, holder, {
              ...bindingOf(request),
              transaction_data_hashes: hashesOf(request),
              transaction_data_hashes_alg: 'sha-256',
            });
          },
          { transaction_data: [item] },
        );
        assert.equal(result.status, 'verified', JSON.stringify(result));
        assert.deepEqual(result.transaction_data, [item]);
        assert.ok(
          result.credentials.pid[0].checks.some(
            (check: { name: string; ok: boolean }) => check.name === 'transaction_data_hashes' && check.ok,
          ),
        );
      });
    });
  });
}
