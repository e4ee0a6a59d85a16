// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { createWalletProvider, type WalletProviderFiles } from '../oid4vci/haip-helpers.ts';
import type { Certified } from '../oid4vp/certificates.ts';
import {
  type ListServer,
  newListSigner,
  PID_PROVIDER,
  signEtsiList,
  startListServer,
  WALLET_PROVIDER,
} from '../trust/test-trusted-lists.ts';
import { clientAttestation, instanceKey, withDpop } from './haip-wallet.ts';
import { type IssuerAndWallet, startIssuerAndWallet } from './hosted-wallet-world.ts';

/**
 * A HAIP issuer with no WALLET_PROVIDER_TRUST_ANCHORS accepts the Wallet Attestations of a wallet
 * provider that a trusted list (TRUSTED_LISTS, XAdES-signed here) names as a granted wallet-provider
 * service — and not of one the list names only as a PID provider, nor of one it does not name.
 */
const PRE_AUTHORIZED = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const asListed = (pem: string) => ({ der: new X509Certificate(pem).raw.toString('base64') }) as Certified;

for (const kind of DATABASE_KINDS) {
  describe(`wallet providers trusted through a trusted list, on ${kind}`, () => {
    let lists: ListServer;
    let world: IssuerAndWallet;
    let listed: WalletProviderFiles;
    let onlyIssuer: WalletProviderFiles;
    let stranger: WalletProviderFiles;

    before(async () => {
      lists = await startListServer();
      const signer = await newListSigner();
      [listed, onlyIssuer, stranger] = await Promise.all([
        createWalletProvider('Listed'),
        createWalletProvider('Only a PID provider'),
        createWalletProvider('Stranger'),
      ]);
      lists.put(
        '/tl.xml',
        await signEtsiList(
          {
            services: [
              { type: WALLET_PROVIDER, name: 'Listed wallet', certificates: [asListed(listed.rootPem)] },
              { type: PID_PROVIDER, name: 'PID issuance', certificates: [asListed(onlyIssuer.rootPem)] },
            ],
          },
          signer,
        ),
      );
      const signerFile = path.join(listed.dir, 'list-signer.pem');
      await writeFile(signerFile, signer.pem);
      const listsFile = path.join(listed.dir, 'trusted-lists.json');
      await writeFile(
        listsFile,
        JSON.stringify([{ url: `${lists.url}/tl.xml`, signers: signerFile, kind: 'etsi-119612' }]),
      );
      world = await startIssuerAndWallet(kind, {
        haip: true,
        env: { TRUSTED_LISTS: listsFile },
        trust: [lists.ca.pem],
      });
      const put = await world.api('PUT', '/v1/issuer/configurations/degree', {
        format: 'dc+sd-jwt',
        vct: 'https://university.example/degree',
        claims: [{ path: ['given_name'], mandatory: true }],
      });
      assert.equal(put.status, 201, put.text);
    });
    after(async () => {
      await world?.close();
      await lists?.close();
    });

    /** A pre-authorized token request with DPoP and a Wallet Attestation signed by `provider`. */
    async function tokenRequest(provider: WalletProviderFiles) {
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: { given_name: 'Ada' } },
      });
      const document = (await (await world.front.fetch(offer.body.data.credential_offer_uri)).json()) as any;
      const instance = await instanceKey();
      return withDpop(world, instance, `${world.front.url}/v2/openidc/token`, {
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(await clientAttestation(provider, instance, document.credential_issuer)),
        },
        body: new URLSearchParams({
          grant_type: PRE_AUTHORIZED,
          'pre-authorized_code': document.grants[PRE_AUTHORIZED]['pre-authorized_code'],
        }).toString(),
      });
    }

    test('a wallet provider the list grants is accepted', async () => {
      const answer = await tokenRequest(listed);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.token_type, 'DPoP');
    });

    test('one the list names only as a PID provider, or not at all, is refused', async () => {
      for (const provider of [onlyIssuer, stranger]) {
        const answer = await tokenRequest(provider);
        assert.equal(answer.status, 401, JSON.stringify(answer.body));
        assert.equal(answer.body.error, 'invalid_client');
        assert.match(answer.body.error_description, /trusted list/);
      }
    });
  });
}
