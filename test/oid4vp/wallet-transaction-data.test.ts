import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Openid4vpVerifier } from '@openid4vc/openid4vp';
import { decodeJwt } from 'jose';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { logInUser } from '../credentials/helpers.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { holderJwkOf } from '../helpers/issuers/holder.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { issueMdoc, MDL_DOCTYPE, MDL_NAMESPACE } from '../helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { checkSdJwtPresentation } from './format-checks.ts';
import type { Transaction } from './verifier.ts';
import {
  approve,
  authorize,
  consentView,
  errorAtVerifier,
  issueTo,
  logInWithSiweInConsent,
  startConsent,
  startWalletWorld,
  type WalletWorld,
} from './wallet-helpers.ts';

/**
 * Transaction data (OpenID4VP §5.1, §8.4, B.3.3): checked against TRANSACTION_DATA_TYPES and the
 * DCQL query, shown field by field, and bound in the SD-JWT key binding JWT. The binding is
 * checked with @sd-jwt/sd-jwt-vc and the verifier side of @openid4vc/openid4vp.
 */
const PAYMENT = 'urn:example:payment';
const SIGNING = 'qes_authorization';
const FORMATS = {
  'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['EdDSA', 'ES256'] },
  mso_mdoc: { issuerauth_alg_values: [-7, -9], deviceauth_alg_values: [-8, -7] },
  ldp_vc: { proof_type_values: ['DataIntegrityProof'], cryptosuite_values: ['bbs-2023', 'eddsa-rdfc-2022'] },
};
const pidQuery = (extra: Record<string, unknown> = {}) => ({
  id: 'pid',
  format: 'dc+sd-jwt',
  meta: { vct_values: [PID_VCT] },
  claims: [{ path: ['given_name'] }],
  ...extra,
});
const mdlQuery = {
  id: 'mdl',
  format: 'mso_mdoc',
  meta: { doctype_value: MDL_DOCTYPE },
  claims: [{ path: [MDL_NAMESPACE, 'given_name'] }],
};
const personQuery = {
  id: 'person',
  format: 'ldp_vc',
  meta: { type_values: [['https://issuer.example/vocab#PersonCredential']] },
  claims: [{ path: ['credentialSubject', 'first_name'] }],
};

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const payment = (extra: Record<string, unknown> = {}) =>
  encode({
    type: PAYMENT,
    credential_ids: ['pid'],
    amount: '42.00',
    currency: 'EUR',
    payee: 'Example Shop Ltd',
    ...extra,
  });

const verifierLibrary = new Openid4vpVerifier({
  callbacks: {
    hash: (data: Uint8Array, alg: string) =>
      createHash(alg.replace('-', '')).update(data).digest() as unknown as Uint8Array,
  } as never,
});

for (const kind of DATABASE_KINDS) {
  describe(`hosted wallet: transaction data, on ${kind}`, () => {
    let world: WalletWorld;
    let identity: IssuerIdentity;
    let anchorFile: string;
    let did: string;
    let cookie: string | undefined;
    const account = privateKeyToAccount(generatePrivateKey());

    before(async () => {
      identity = await makeIssuerIdentity('Bank Issuer');
      anchorFile = path.join(tmpdir(), `coffer-issuers-${randomBytes(6).toString('hex')}.pem`);
      await writeFile(anchorFile, identity.ca.pem);
      world = await startWalletWorld(kind, {
        ISSUER_TRUST_ANCHORS: anchorFile,
        TRANSACTION_DATA_TYPES: `${PAYMENT}, ${SIGNING}`,
      });
      did = (await logInUser(world.server, world.rp, account)).did;
      for (const vc of [
        await issueSdJwtVc(identity, { holderJwk: holderJwkOf(did) }),
        await issueMdoc(identity, { deviceJwk: holderJwkOf(did) }),
      ]) {
        const stored = await world.server.request('POST', '/v1/vc/issuer/store', {
          headers: { 'x-api-token': world.issuerToken },
          body: { vc },
        });
        assert.equal(stored.status, 201, stored.text);
      }
      await issueTo(world, did);
    });
    after(async () => {
      await world?.close();
      if (anchorFile) await rm(anchorFile, { force: true });
    });

    const request = (transactionData: unknown, credentials: object[] = [pidQuery()]) =>
      world.verifier.createRequest({
        dcql: { credentials },
        formats: FORMATS,
        parameters: { transaction_data: transactionData },
      });

    async function consentFor(transaction: Transaction): Promise<string> {
      const consentPath = await startConsent(world.server, transaction.query, cookie);
      if (!cookie)
        cookie = (await logInWithSiweInConsent(world.server, consentPath, account)).cookie ?? undefined;
      return consentPath;
    }

    /** The presented SD-JWT's key binding JWT, after @sd-jwt/sd-jwt-vc verified the presentation. */
    async function keyBinding(transaction: Transaction, presentation: unknown) {
      await checkSdJwtPresentation(presentation, identity, holderJwkOf(did), {
        clientId: transaction.clientId,
        nonce: transaction.nonce,
        responseUri: transaction.responseUri,
        encryptionJwk: transaction.encryptionKey?.publicJwk ?? null,
      });
      const text = presentation as string;
      return decodeJwt(text.slice(text.lastIndexOf('~') + 1));
    }

    test('the person sees each field, confirms, and the KB-JWT binds the hash of the string as received', async () => {
      const item = payment();
      const transaction = await request([item]);
      const consentPath = await consentFor(transaction);
      const consent = await consentView(world.server, consentPath);
      assert.deepEqual(consent.transaction_data, [
        {
          type: PAYMENT,
          credential_ids: ['pid'],
          fields: { amount: '42.00', currency: 'EUR', payee: 'Example Shop Ltd' },
        },
      ]);
      assert.equal(consent.satisfiable, true);
      const html = await (await fetch(world.server.url + consentPath)).text();
      assert.match(html, /What you confirm/);
      assert.match(html, /<dt>payee<\/dt><dd>Example Shop Ltd<\/dd>/);
      assert.match(html, /<dt>amount<\/dt><dd>42\.00<\/dd>/);

      const received = await approve(world.server, consentPath, transaction);
      const kb = await keyBinding(transaction, received.vpToken!['pid']![0]);
      assert.deepEqual(kb['transaction_data_hashes'], [
        createHash('sha256').update(item).digest('base64url'),
      ]);
      assert.equal(kb['transaction_data_hashes_alg'], undefined, 'not asked for, so not sent');
      const verified = await verifierLibrary.verifyTransactionData({
        transactionData: [item],
        credentials: { pid: [{ transaction_data_hashes: kb['transaction_data_hashes'] as string[] }] },
      });
      assert.equal(verified.length, 1);
      assert.equal(verified[0]!.credentialId, 'pid');
    });

    test('transaction_data_hashes_alg: the wallet hashes with an algorithm the verifier named and says which', async () => {
      const first = payment({ transaction_data_hashes_alg: ['sha-384', 'sha-512'] });
      const second = encode({
        type: SIGNING,
        credential_ids: ['pid'],
        documentDigests: [{ label: 'Contract.pdf', hash: 'sTOgwOm+474gFj0q0x1iSNspKqbcse4IeiqlDg/HWuI=' }],
        transaction_data_hashes_alg: ['sha-384'],
      });
      const transaction = await request([first, second]);
      const consentPath = await consentFor(transaction);
      const consent = await consentView(world.server, consentPath);
      assert.equal(consent.transaction_data.length, 2);
      assert.equal(consent.transaction_data[1].fields.documentDigests[0].label, 'Contract.pdf');
      const received = await approve(world.server, consentPath, transaction);
      const kb = await keyBinding(transaction, received.vpToken!['pid']![0]);
      assert.equal(kb['transaction_data_hashes_alg'], 'sha-384');
      assert.deepEqual(
        kb['transaction_data_hashes'],
        [first, second].map((item) => createHash('sha384').update(item).digest('base64url')),
      );
      const verified = await verifierLibrary.verifyTransactionData({
        transactionData: [first, second],
        credentials: {
          pid: [
            {
              transaction_data_hashes: kb['transaction_data_hashes'] as string[],
              transaction_data_hashes_alg: 'sha-384',
            },
          ],
        },
      });
      assert.equal(verified.length, 2);
    });

    test('transaction data in an unsigned request (JSON text in the query) is read the same way', async () => {
      const item = payment();
      const transaction = await world.verifier.createRequest({
        by: 'parameters',
        redirectUriPrefix: true,
        responseMode: 'direct_post',
        dcql: { credentials: [pidQuery()] },
        formats: FORMATS,
        parameters: { transaction_data: [item] },
      });
      assert.equal(typeof new URLSearchParams(transaction.query).get('transaction_data'), 'string');
      const consentPath = await consentFor(transaction);
      assert.equal((await consentView(world.server, consentPath)).transaction_data.length, 1);
    });

    test('a query in a format that cannot carry transaction data matches nothing', async () => {
      const transaction = await request(
        [encode({ type: PAYMENT, credential_ids: ['mdl', 'person'], amount: '1.00' })],
        [mdlQuery, personQuery],
      );
      const consent = await consentView(world.server, await consentFor(transaction));
      assert.deepEqual(
        consent.requests.map((r: { candidates: unknown[] }) => r.candidates.length),
        [0, 0],
      );
      assert.equal(consent.satisfiable, false);
    });

    test('without transaction data, the same mdoc and ldp_vc queries match', async () => {
      const transaction = await world.verifier.createRequest({
        dcql: { credentials: [mdlQuery, personQuery] },
        formats: FORMATS,
      });
      const consent = await consentView(world.server, await consentFor(transaction));
      assert.deepEqual(
        consent.requests.map((r: { candidates: unknown[] }) => r.candidates.length),
        [1, 1],
      );
    });

    const invalid: Array<[string, unknown, object[]?]> = [
      ['an unknown type', [encode({ type: 'urn:example:unknown', credential_ids: ['pid'] })]],
      ['an item that is not base64url', ['not base64url!']],
      ['an item that is not JSON', [Buffer.from('{nope').toString('base64url')]],
      ['an item that is not an object', [encode(['pid'])]],
      ['an item without type', [encode({ credential_ids: ['pid'] })]],
      ['an item without credential_ids', [encode({ type: PAYMENT })]],
      ['empty credential_ids', [encode({ type: PAYMENT, credential_ids: [] })]],
      ['credential_ids naming no requested credential', [payment({ credential_ids: ['pid', 'elsewhere'] })]],
      ['only unsupported hash algorithms', [payment({ transaction_data_hashes_alg: ['md5'] })]],
      [
        'items for one credential with no common hash algorithm',
        [
          payment({ transaction_data_hashes_alg: ['sha-256'] }),
          payment({ transaction_data_hashes_alg: ['sha-512'] }),
        ],
      ],
      [
        'a query without cryptographic holder binding',
        [payment()],
        [pidQuery({ require_cryptographic_holder_binding: false })],
      ],
      ['an empty list', []],
      ['a list that is not a list', 'transaction'],
    ];
    for (const [name, transactionData, credentials] of invalid) {
      test(`invalid_transaction_data to the verifier: ${name}`, async () => {
        // In the signed request object as sent: the library would not make some of these.
        const transaction = await world.verifier.createRequest({
          dcql: { credentials: credentials ?? [pidQuery()] },
          formats: FORMATS,
          jwtClaims: { transaction_data: transactionData },
        });
        errorAtVerifier(
          await authorize(world.server, transaction.query),
          transaction,
          'invalid_transaction_data',
        );
      });
    }
  });
}
