import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { logInUser } from '../credentials/helpers.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { holderJwkOf } from '../helpers/issuers/holder.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { interactionView } from '../oidc/flow-helpers.ts';
import {
  type ListServer,
  newListSigner,
  PID_PROVIDER,
  signEtsiList,
  startListServer,
} from '../trust/test-trusted-lists.ts';
import { checkSdJwtPresentation } from './format-checks.ts';
import type { Transaction } from './verifier.ts';
import {
  approve,
  consentView,
  logInWithSiweInConsent,
  startConsent,
  startWalletWorld,
  type WalletWorld,
} from './wallet-helpers.ts';

/**
 * The hosted wallet evaluates DCQL `trusted_authorities` of type `etsi_tl` against its own
 * TRUSTED_LISTS: of two SD-JWT VCs held, only the one whose issuer CA is a granted PID provider
 * service of the member list the configured LoTL points to is offered — whether the verifier names
 * the LoTL or the member list. A list URL the wallet does not read cannot be checked (said so),
 * and a configured list whose server is down is a 502 with the error body, never a 500.
 */

const FORMATS = { 'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['EdDSA', 'ES256'] } };
const pidQuery = (values: string[]) => ({
  credentials: [
    {
      id: 'pid',
      format: 'dc+sd-jwt',
      meta: { vct_values: [PID_VCT] },
      claims: [{ path: ['given_name'] }],
      trusted_authorities: [{ type: 'etsi_tl', values }],
    },
  ],
});

for (const kind of DATABASE_KINDS) {
  describe(`hosted wallet: DCQL trusted_authorities etsi_tl, on ${kind}`, () => {
    let world: WalletWorld;
    let server: ListServer;
    let dir: string;
    let listed: IssuerIdentity;
    let unlisted: IssuerIdentity;
    const account = privateKeyToAccount(generatePrivateKey());
    let did: string;
    let cookie: string | undefined;

    before(async () => {
      server = await startListServer();
      dir = await mkdtemp(path.join(tmpdir(), 'coffer-wallet-tl-'));
      const lotlSigner = await newListSigner('LoTL signer');
      const memberSigner = await newListSigner('Member signer');
      listed = await makeIssuerIdentity('Listed Issuer');
      unlisted = await makeIssuerIdentity('Unlisted Issuer');
      server.put(
        '/member.xml',
        await signEtsiList(
          { services: [{ type: PID_PROVIDER, name: 'PID issuance', certificates: [listed.ca] }] },
          memberSigner,
        ),
      );
      server.put(
        '/lotl.xml',
        await signEtsiList(
          { pointers: [{ url: `${server.url}/member.xml`, signers: [memberSigner] }] },
          lotlSigner,
        ),
      );
      server.put('/down.xml', null);
      await writeFile(path.join(dir, 'signers.pem'), lotlSigner.pem);
      await writeFile(path.join(dir, 'issuers.pem'), listed.ca.pem + unlisted.ca.pem);
      await writeFile(
        path.join(dir, 'lists.json'),
        JSON.stringify([
          { url: `${server.url}/lotl.xml`, signers: 'signers.pem', kind: 'etsi-119612' },
          { url: `${server.url}/down.xml`, signers: 'signers.pem', kind: 'etsi-119612' },
        ]),
      );
      world = await startWalletWorld(
        kind,
        { TRUSTED_LISTS: path.join(dir, 'lists.json'), ISSUER_TRUST_ANCHORS: path.join(dir, 'issuers.pem') },
        [server.ca.pem],
      );
      did = (await logInUser(world.server, world.rp, account)).did;
      for (const identity of [unlisted, listed]) {
        const stored = await world.server.request('POST', '/v1/vc/issuer/store', {
          headers: { 'x-api-token': world.issuerToken },
          body: { vc: await issueSdJwtVc(identity, { holderJwk: holderJwkOf(did) }) },
        });
        assert.equal(stored.status, 201, stored.text);
      }
    });
    after(async () => {
      await world?.close();
      await server?.close();
      await rm(dir, { recursive: true, force: true });
    });

    async function consentFor(transaction: Transaction): Promise<string> {
      const consentPath = await startConsent(world.server, transaction.query, cookie);
      if (!cookie) {
        const login = await logInWithSiweInConsent(world.server, consentPath, account);
        cookie = login.cookie ?? undefined;
      }
      return consentPath;
    }
    const request = (values: string[]) =>
      world.verifier.createRequest({
        by: 'reference',
        responseMode: 'direct_post.jwt',
        dcql: pidQuery(values),
        formats: FORMATS,
      });

    test('naming the LoTL or its member list selects exactly the credential whose chain reaches a listed service', async () => {
      for (const url of [`${server.url}/lotl.xml`, `${server.url}/member.xml`]) {
        const transaction = await request([url]);
        const consentPath = await consentFor(transaction);
        const consent = await consentView(world.server, consentPath);
        const candidates = consent.requests[0].candidates;
        assert.equal(candidates.length, 1, url);
        assert.match(candidates[0].issuer_certificate.subject, /Listed Issuer Document Signer/);
        const received = await approve(world.server, consentPath, transaction);
        await checkSdJwtPresentation(received.vpToken!['pid']![0], listed, holderJwkOf(did), {
          clientId: transaction.clientId,
          nonce: transaction.nonce,
          responseUri: transaction.responseUri,
          encryptionJwk: transaction.encryptionKey?.publicJwk ?? null,
        });
      }
    });

    test('a list the wallet does not read cannot be checked, and the consent says so', async () => {
      const transaction = await request(['https://lotl.elsewhere.example/tl.xml']);
      const consent = await consentView(world.server, await consentFor(transaction));
      assert.deepEqual(consent.requests[0].candidates, []);
      assert.match(
        consent.unsatisfiable_reason,
        /request pid accepts only issuers of the ETSI trusted lists it names, which this wallet cannot check/,
      );
    });

    test('a configured list whose server is down: 502 with the error body, not a 500', async () => {
      const transaction = await request([`${server.url}/down.xml`]);
      const view = await interactionView(world.server, await consentFor(transaction));
      assert.equal(view.status, 502, JSON.stringify(view.body));
      assert.equal(view.body.error, 'bad_gateway');
      assert.match(view.body.message ?? view.body.error_description ?? '', /down\.xml/);
    });
  });
}
