import assert from 'node:assert/strict';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { leaksInternals, startTestServer, type TestServer } from '../helpers/server.ts';
import { type RelyingParty, registerRelyingParty } from '../oidc/flow-helpers.ts';
import { type LoggedInUser, logInUser, registerPersonContext } from './helpers.ts';
import {
  createStockIssuer,
  personCredential,
  type StockIssuer,
  verifyPresentedWithStock,
  verifyWithStock,
} from './stock-issuer.ts';

const STORE = '/v1/vc/issuer/store';
const LIST = '/v1/openidc/credentials';
const PROOF = '/v1/openidc/credentials/proof';

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

for (const kind of DATABASE_KINDS) {
  describe(`credentials: store, list and present, on ${kind}`, () => {
    let server: TestServer;
    let rp: RelyingParty;
    let issuerToken: string;
    let issuer: StockIssuer;
    let ada: LoggedInUser;
    let grace: LoggedInUser;
    const adaWallet = privateKeyToAccount(generatePrivateKey());

    before(async () => {
      server = await startTestServer(kind);
      rp = await registerRelyingParty(server);
      issuerToken = (await server.createMaster('Issuer')).token;
      await registerPersonContext(server);
      issuer = await createStockIssuer();
      ada = await logInUser(server, rp, adaWallet);
      grace = await logInUser(server, rp, privateKeyToAccount(generatePrivateKey()));
    });
    after(() => server.close());

    const store = (vc: unknown, token = issuerToken) =>
      server.request('POST', STORE, { headers: { 'x-api-token': token }, body: { vc } });

    test('an issuer stores a credential; the user lists it and presents chosen fields that the stock verifier accepts', async () => {
      const signed = await issuer.issue(personCredential(issuer.did, ada.did), ['/issuer', '/validFrom']);
      const stored = await store(signed);
      assert.equal(stored.status, 201, stored.text);
      assert.match(stored.body.data.cid, /^bafy/);
      assert.deepEqual(stored.body.data.vc, { ...signed, credentialStatus: null });

      const again = await store(signed);
      assert.equal(again.status, 200);
      assert.equal(again.body.data.cid, stored.body.data.cid, 'the same credential keeps its CID');

      const listed = await server.request('GET', LIST, { headers: ada.bearer });
      assert.equal(listed.status, 200);
      assert.deepEqual(listed.body.data, [{ ...signed, credentialStatus: null }]);

      const presented = await server.request('POST', PROOF, {
        headers: ada.bearer,
        body: {
          vcIdFields: { [signed['id'] as string]: ['/credentialSubject/first_name'] },
          options: { presentationHeader: 'verifier-nonce-123' },
        },
      });
      assert.equal(presented.status, 200, presented.text);
      assert.equal(presented.body.data.holder, ada.did);
      const [derived] = presented.body.data.credentials;
      assert.deepEqual(derived.credentialSubject, { id: ada.did, first_name: 'Ada' });
      assert.deepEqual(derived.proof.revealedPointers, [
        '/issuer',
        '/validFrom',
        '/credentialSubject/id',
        '/credentialSubject/first_name',
      ]);
      assert.ok(derived.proof.revealedIndices.every(Number.isInteger));
      assert.ok(derived.proof.revealedIndices.length >= 4);

      const { revealedPointers: _p, revealedIndices: _i, ...proof } = derived.proof;
      const plain = { ...derived, proof };
      const header = new TextEncoder().encode('verifier-nonce-123');
      const verdict = await verifyWithStock(plain, header);
      assert.equal(verdict.verified, true, JSON.stringify(verdict.error ?? verdict));
      const otherHeader = await verifyWithStock(plain, new TextEncoder().encode('another verifier'));
      assert.equal(otherHeader.verified, false, 'the presentation header is bound into the proof');
    });

    test('the store keeps the prepared statements in an encrypted block beside the credential; deletion removes both', async () => {
      const someone = await logInUser(server, rp, privateKeyToAccount(generatePrivateKey()));
      const signed = await issuer.issue(personCredential(issuer.did, someone.did, { first_name: 'Kept' }));
      assert.equal((await store(signed)).status, 201);
      const row = await server.database.db
        .selectFrom('credentials')
        .select(['cid', 'prepared_cid'])
        .where('credential_id', '=', signed['id'] as string)
        .executeTakeFirstOrThrow();
      assert.match(row.prepared_cid ?? '', /^bafy/);
      assert.notEqual(row.prepared_cid, row.cid);
      const blockFiles = async () =>
        (await filesUnder(server.testDatabase.dataDir)).filter((f) =>
          f.includes(`${path.sep}blocks${path.sep}`),
        );
      const before = await blockFiles();

      const presented = await server.request('POST', PROOF, {
        headers: someone.bearer,
        body: { vcIdFields: { [signed['id'] as string]: ['/credentialSubject/first_name'] } },
      });
      assert.equal(presented.status, 200, presented.text);
      const verdict = await verifyPresentedWithStock(presented.body.data.credentials[0], new Uint8Array());
      assert.equal(verdict.verified, true, JSON.stringify(verdict.error ?? verdict));

      const path_ = `/v1/openidc/credentials/${encodeURIComponent(signed['id'] as string)}`;
      assert.equal((await server.request('DELETE', path_, { headers: someone.bearer })).status, 204);
      const after = await blockFiles();
      assert.equal(before.length - after.length, 2, 'the credential block and its prepared block are gone');
    });

    test('a credential is stored with its arrival in the wallet history or not at all', async () => {
      const someone = await logInUser(server, rp, privateKeyToAccount(generatePrivateKey()));
      const { user_id } = await server.database.db
        .selectFrom('users')
        .select('user_id')
        .where('did', '=', someone.did)
        .executeTakeFirstOrThrow();
      // The history write fails for this person alone, as a full disk or a lost connection would.
      const refuse =
        kind === 'sqlite'
          ? [
              `create trigger refuse_history before insert on wallet_history when new.user_id = ${user_id}
               begin select raise(abort, 'history refused'); end`,
            ]
          : [
              `create function refuse_history() returns trigger language plpgsql as
               $$ begin raise exception 'history refused'; end $$`,
              `create trigger refuse_history before insert on wallet_history for each row
               when (new.user_id = ${user_id}) execute function refuse_history()`,
            ];
      for (const statement of refuse) await sql.raw(statement).execute(server.database.db);
      const signed = await issuer.issue(personCredential(issuer.did, someone.did, { first_name: 'Atomic' }));
      const refused = await store(signed);
      assert.ok(refused.status >= 500, refused.text);
      assert.equal(leaksInternals(refused.text), false);
      const listed = await server.request('GET', LIST, { headers: someone.bearer });
      assert.deepEqual(listed.body.data, [], 'no credential without its arrival');

      await sql
        .raw('drop trigger refuse_history' + (kind === 'sqlite' ? '' : ' on wallet_history'))
        .execute(server.database.db);
      if (kind === 'postgres') await sql.raw('drop function refuse_history').execute(server.database.db);
      const stored = await store(signed);
      assert.equal(stored.status, 201, 'stored anew, not found from the failed attempt');
      const history = await server.database.db
        .selectFrom('wallet_history')
        .select('kind')
        .where('user_id', '=', user_id)
        .execute();
      assert.deepEqual(history, [{ kind: 'arrival' }]);
    });

    test('a prepared block lost or torn by an OS crash (written without fsync) leaves the proof computed in full', async () => {
      const someone = await logInUser(server, rp, privateKeyToAccount(generatePrivateKey()));
      const signed = [
        await issuer.issue(personCredential(issuer.did, someone.did, { first_name: 'Lost' })),
        await issuer.issue(personCredential(issuer.did, someone.did, { first_name: 'Torn' })),
      ];
      for (const vc of signed) assert.equal((await store(vc)).status, 201);
      const rows = await server.database.db
        .selectFrom('credentials')
        .select(['credential_id', 'prepared_cid'])
        .where(
          'credential_id',
          'in',
          signed.map((vc) => vc['id'] as string),
        )
        .orderBy('credential_id')
        .execute();
      const fileOf = (cid: string) =>
        path.join(server.testDatabase.dataDir, 'blocks', cid.slice(-3, -1), cid);
      const [lost, torn] = signed.map(
        (vc) => rows.find((row) => row.credential_id === vc['id'])!.prepared_cid!,
      );
      await rm(fileOf(lost!));
      await writeFile(fileOf(torn!), 'torn');
      for (const vc of signed) {
        const presented = await server.request('POST', PROOF, {
          headers: someone.bearer,
          body: { vcIdFields: { [vc['id'] as string]: ['/credentialSubject/first_name'] } },
        });
        assert.equal(presented.status, 200, presented.text);
        const verdict = await verifyPresentedWithStock(presented.body.data.credentials[0], new Uint8Array());
        assert.equal(verdict.verified, true, JSON.stringify(verdict.error ?? verdict));
      }
    });

    test("a credential for the did:pkh of the user's wallet belongs to them, when stored by their tenant", async () => {
      const pkh = `did:pkh:eip155:1:${adaWallet.address}`;
      const signed = await issuer.issue(personCredential(issuer.did, pkh, { first_name: 'Ada' }));
      const rpToken = (await server.request('GET', '/healthz')) && (await tenantToken(server, rp.clientId));
      const stored = await store(signed, rpToken);
      assert.equal(stored.status, 201, stored.text);
      const byOutsider = await store(
        await issuer.issue(personCredential(issuer.did, pkh, { first_name: 'A' })),
      );
      assert.equal(byOutsider.status, 422, 'another organisation cannot reach the wallet');
      assert.match(byOutsider.body.error_description, /not the wallet of a user in your tenants/);
      const listed = await server.request('GET', LIST, { headers: ada.bearer });
      assert.ok(listed.body.data.some((vc: { id: string }) => vc.id === signed['id']));
    });

    test("the list is newest first and holds only the token user's credentials", async () => {
      const first = await issuer.issue(personCredential(issuer.did, grace.did, { first_name: 'Grace' }));
      const second = await issuer.issue(personCredential(issuer.did, grace.did, { last_name: 'Hopper' }));
      assert.equal((await store(first)).status, 201);
      assert.equal((await store(second)).status, 201);
      const listed = await server.request('GET', LIST, { headers: grace.bearer });
      assert.deepEqual(
        listed.body.data.map((vc: { id: string }) => vc.id),
        [second['id'], first['id']],
      );
    });

    test('forged, foreign or unacceptable credentials are refused with 422 saying why', async () => {
      const good = await issuer.issue(personCredential(issuer.did, ada.did));
      const other = await createStockIssuer();
      const cases: Array<[string, unknown, RegExp]> = [
        [
          'tampered claim',
          { ...good, credentialSubject: { ...(good['credentialSubject'] as object), last_name: 'Byron' } },
          /BBS signature does not verify/,
        ],
        ['swapped issuer', { ...good, issuer: other.did }, /not of its issuer/],
        [
          "another key named as the issuer's",
          {
            ...good,
            issuer: other.did,
            proof: { ...(good['proof'] as object), verificationMethod: other.verificationMethod },
          },
          /public key inside the proof value is not the issuer's key/,
        ],
        [
          'unknown subject',
          await issuer.issue(
            personCredential(issuer.did, 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK'),
          ),
          /is not a user of this service/,
        ],
        [
          'expired',
          await issuer.issue(
            personCredential(issuer.did, ada.did, undefined, { validUntil: '2024-06-01T00:00:00Z' }),
          ),
          /expired at 2024-06-01T00:00:00Z/,
        ],
        [
          'unregistered context',
          await issuer
            .issue({
              ...personCredential(issuer.did, ada.did, { first_name: 'Ada' }),
              '@context': ['https://www.w3.org/ns/credentials/v2', 'https://unknown.example/ctx/v1'],
            })
            .catch(() => ({
              ...good,
              '@context': ['https://www.w3.org/ns/credentials/v2', 'https://unknown.example/ctx/v1'],
            })),
          /https:\/\/unknown\.example\/ctx\/v1, which this service does not know/,
        ],
        [
          'unsupported cryptosuite',
          { ...good, proof: { ...(good['proof'] as object), cryptosuite: 'ecdsa-sd-2023' } },
          /cryptosuite "ecdsa-sd-2023" is not supported/,
        ],
        [
          'VC Data Model 1.1',
          { ...good, '@context': ['https://www.w3.org/2018/credentials/v1'] },
          /VC Data Model 2\.0/,
        ],
        [
          'a proof that is not base64url',
          { ...good, proof: { ...(good['proof'] as object), proofValue: 'not a proof' } },
          /base proof is malformed/,
        ],
      ];
      for (const [name, vc, reason] of cases) {
        const response = await store(vc);
        assert.equal(response.status, 422, `${name}: ${response.text}`);
        assert.equal(response.body.error, 'invalid_credential', name);
        assert.match(response.body.error_description, reason, name);
      }
      const listed = await server.request('GET', LIST, { headers: ada.bearer });
      assert.ok(
        !listed.body.data.some(
          (vc: { credentialSubject: { last_name?: string } }) => vc.credentialSubject.last_name === 'Byron',
        ),
      );
    });

    test('the same id with other content is 409; malformed requests are 400, 401 or 415', async () => {
      const first = await issuer.issue(personCredential(issuer.did, ada.did, { first_name: 'Ada' }));
      assert.equal((await store(first)).status, 201);
      const sameId = await issuer.issue({
        ...personCredential(issuer.did, ada.did, { first_name: 'Augusta' }),
        id: first['id'],
      });
      const conflict = await store(sameId);
      assert.equal(conflict.status, 409);
      assert.equal(conflict.body.error, 'conflict');

      const { proof: _proof, ...unsigned } = first;
      const noProof = await store(unsigned);
      assert.equal(noProof.status, 400);
      assert.deepEqual(noProof.body.details[0], { path: '/body/vc/proof', message: 'is required' });
      assert.equal((await store({ ...first, id: 'not a uri' })).status, 400);
      assert.equal((await store('a string')).status, 400);
      const extra = await server.request('POST', STORE, {
        headers: { 'x-api-token': issuerToken },
        body: { vc: first, more: 1 },
      });
      assert.equal(extra.status, 400);
      assert.equal((await store(first, 'cfr_at_unknown')).status, 401);
      const text = await server.request('POST', STORE, {
        headers: { 'x-api-token': issuerToken, 'content-type': 'text/plain' },
        body: 'vc',
      });
      assert.equal(text.status, 415);
    });

    test('presentations: foreign credentials are 404, pointers that name nothing are 400, bearer tokens are required', async () => {
      const adas = await issuer.issue(personCredential(issuer.did, ada.did));
      assert.equal((await store(adas)).status, 201);
      const id = adas['id'] as string;
      const present = (body: unknown, headers: Record<string, string> = ada.bearer) =>
        server.request('POST', PROOF, { headers, body });

      const foreign = await present(
        { vcIdFields: { [id]: ['/credentialSubject/first_name'] } },
        grace.bearer,
      );
      assert.equal(foreign.status, 404);
      assert.equal((await present({ vcIdFields: { 'urn:uuid:nothing': [] } })).status, 404);

      const missing = await present({
        vcIdFields: { [id]: ['/credentialSubject/first_name', '/credentialSubject/height'] },
      });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.details[0].path, `/body/vcIdFields/${id}/1`);
      for (const pointer of [
        'credentialSubject/first_name',
        '/proof/proofValue',
        '/credentialSubject/first_name/0',
        '/a~2b',
        '',
      ]) {
        const response = await present({ vcIdFields: { [id]: [pointer] } });
        assert.equal(response.status, 400, `pointer ${JSON.stringify(pointer)}: ${response.text}`);
      }
      assert.equal((await present({ vcIdFields: {} })).status, 400);
      assert.equal((await present({ vcIdFields: { [id]: [] }, options: { nonce: 'x' } })).status, 400);
      assert.equal((await present({ vcIdFields: { [id]: 'x' } })).status, 400);
      assert.equal((await present({ vcIdFields: { [id]: [] } }, {})).status, 401);
      assert.equal(
        (await present({ vcIdFields: { [id]: [] } }, { authorization: 'Bearer abc.def.ghi' })).status,
        401,
      );
      assert.equal((await server.request('GET', LIST, {})).status, 401);

      const onlyMandatory = await present({ vcIdFields: { [id]: [] } });
      assert.equal(
        onlyMandatory.status,
        200,
        'with no chosen field the mandatory statements are still presented',
      );
      assert.deepEqual(onlyMandatory.body.data.credentials[0].credentialSubject, { id: ada.did });
    });

    test('concurrent stores of one credential give one CID; of one id with two contents, one wins and the other is 409', async () => {
      const arrivals = async () =>
        (
          await server.database.db
            .selectFrom('wallet_history as h')
            .innerJoin('users as u', 'u.user_id', 'h.user_id')
            .select('h.kind')
            .where('u.did', '=', grace.did)
            .where('h.kind', '=', 'arrival')
            .execute()
        ).length;
      const arrivedBefore = await arrivals();
      const signed = await issuer.issue(personCredential(issuer.did, grace.did, { first_name: 'G' }));
      const answers = await Promise.all(Array.from({ length: 8 }, () => store(signed)));
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
      assert.equal(new Set(answers.map((a) => a.body.data.cid)).size, 1);

      const id = 'urn:uuid:11111111-2222-4333-8444-555555555555';
      const [one, two] = await Promise.all([
        issuer.issue({ ...personCredential(issuer.did, grace.did, { first_name: 'One' }), id }),
        issuer.issue({ ...personCredential(issuer.did, grace.did, { first_name: 'Two' }), id }),
      ]);
      const raced = await Promise.all([store(one), store(two)]);
      assert.deepEqual(raced.map((a) => a.status).sort(), [201, 409]);
      assert.equal(
        await arrivals(),
        arrivedBefore + 2,
        'one arrival per credential stored, none for the losers',
      );
    });

    test('no claim value is readable in the block store or the database', async () => {
      const files = await filesUnder(server.testDatabase.dataDir);
      assert.ok(files.some((f) => f.includes(`${path.sep}blocks${path.sep}`)));
      for (const file of files) {
        const bytes = await readFile(file);
        for (const secret of ['Lovelace', '1815-12-10', 'Hopper']) {
          assert.equal(bytes.includes(secret), false, `${secret} in plaintext in ${file}`);
        }
      }
    });

    test('no response leaked internals', () => {
      for (const body of server.bodies) assert.equal(leaksInternals(body), false, body.slice(0, 300));
    });
  });
}

/** A fresh API token of a client, as `coffer token create` makes it. */
async function tenantToken(server: TestServer, clientId: number): Promise<string> {
  const { createApiToken } = await import('../../src/clients/client-admin.ts');
  return (await createApiToken(server.database.db, clientId)).api_token;
}
