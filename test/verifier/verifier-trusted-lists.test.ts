import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import type { Certified } from '../oid4vp/certificates.ts';
import {
  type ListServer,
  newListSigner,
  PID_PROVIDER,
  signEtsiList,
  startListServer,
  WALLET_PROVIDER,
} from '../trust/test-trusted-lists.ts';
import { answer, resolveRequest } from './test-wallet.ts';
import { presentSdJwt, sdJwtQuery, startVerifierWorld, type VerifierWorld } from './verifier-helpers.ts';

/**
 * A tenant's verifier trusts an issuer through TRUSTED_LISTS: a LoTL (XAdES-signed in the test
 * with xadesjs) points to a member list whose granted PID provider service is the issuer's CA, so
 * an SD-JWT VC whose x5c chains to it is trusted and the result names the member list. The CA is
 * in no ISSUER_TRUST_ANCHORS. An unlisted issuer, one named only by a tampered list, one listed
 * as a wallet provider, and one whose only list's server is down all stay untrusted (no 500).
 */

for (const kind of DATABASE_KINDS) {
  describe(`verifier: issuers trusted through ETSI trusted lists, on ${kind}`, () => {
    let world: VerifierWorld;
    let server: ListServer;
    let dir: string;
    let listed: IssuerIdentity;
    let walletProvider: IssuerIdentity;
    let swappedIn: IssuerIdentity;
    let holder: Awaited<ReturnType<typeof generateKeyPair>>;

    before(async () => {
      server = await startListServer();
      dir = await mkdtemp(path.join(tmpdir(), 'coffer-trusted-lists-'));
      const lotlSigner: Certified = await newListSigner('LoTL signer');
      const memberSigner: Certified = await newListSigner('Member signer');
      listed = await makeIssuerIdentity('Listed PID Provider');
      walletProvider = await makeIssuerIdentity('Wallet Provider');
      swappedIn = await makeIssuerIdentity('Swapped In');
      const tamperedOut = await makeIssuerIdentity('Tampered Out');
      server.put(
        '/member.xml',
        await signEtsiList(
          {
            territory: 'IT',
            services: [
              { type: PID_PROVIDER, name: 'Listed PID issuance', certificates: [listed.ca] },
              { type: WALLET_PROVIDER, name: 'Wallet provider', certificates: [walletProvider.ca] },
            ],
          },
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
      const tampered = await signEtsiList(
        { services: [{ type: PID_PROVIDER, name: 'Swapped', certificates: [tamperedOut.ca] }] },
        lotlSigner,
      );
      server.put('/tampered.xml', tampered.replace(tamperedOut.ca.der, swappedIn.ca.der));
      server.put('/down.jwt', null);
      await writeFile(path.join(dir, 'lotl-signers.pem'), lotlSigner.pem);
      const listsFile = path.join(dir, 'trusted-lists.json');
      await writeFile(
        listsFile,
        JSON.stringify([
          { url: `${server.url}/down.jwt`, signers: 'lotl-signers.pem', kind: 'lote-119602' },
          { url: `${server.url}/tampered.xml`, signers: 'lotl-signers.pem', kind: 'etsi-119612' },
          { url: `${server.url}/lotl.xml`, signers: 'lotl-signers.pem', kind: 'etsi-119612' },
        ]),
      );
      world = await startVerifierWorld(kind, { TRUSTED_LISTS: listsFile }, { trust: [server.ca.pem] });
      holder = await generateKeyPair('ES256', { extractable: true });
    });
    after(async () => {
      await world?.close();
      await server?.close();
      await rm(dir, { recursive: true, force: true });
    });

    async function present(identity: IssuerIdentity) {
      const credential = await issueSdJwtVc(identity, {
        holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
      });
      const created = await world.createRequest({ dcql_query: sdJwtQuery(PID_VCT, [['given_name']]) });
      assert.equal(created.status, 201, created.text);
      const request = await resolveRequest(created.body.data.authorization_request);
      const presentation = await presentSdJwt(credential, { given_name: true }, holder, {
        aud: request.clientId,
        nonce: request.payload.nonce,
      });
      await answer(request, { pid: [presentation] });
      const result = await world.readResult(created.body.data.id);
      assert.equal(result.status, 200, result.text);
      return result.body.data;
    }

    test('an issuer whose CA is a granted PID provider service of a member list: trusted_by etsi_tl, the list named', async () => {
      const data = await present(listed);
      assert.equal(data.status, 'verified', JSON.stringify(data));
      const [entry] = data.credentials.pid;
      assert.deepEqual(
        { trusted: entry.issuer.trusted, by: entry.issuer.trusted_by, anchor: entry.issuer.trust_anchor },
        { trusted: true, by: 'etsi_tl', anchor: `${server.url}/member.xml` },
      );
    });

    for (const [name, identity] of [
      ['in no list', () => makeIssuerIdentity('Unlisted')],
      ['listed only as a wallet provider', async () => walletProvider],
      ['named only by a list whose certificate was swapped after signing', async () => swappedIn],
    ] as const) {
      test(`an issuer ${name} stays untrusted (and the list server that is down makes no 500)`, async () => {
        const data = await present(await identity());
        assert.equal(data.status, 'rejected');
        const failed = data.credentials.pid[0].checks.find((check: { ok: boolean }) => !check.ok);
        assert.equal(failed?.name, 'issuer_trusted');
        assert.match(failed?.detail ?? '', /trusted list/);
        assert.equal(data.credentials.pid[0].issuer.trusted_by, undefined);
      });
    }
  });
}
