import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type JWK, SignJWT } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { createWalletProvider, type WalletProviderFiles } from '../oid4vci/haip-helpers.ts';
import { decideIssuance, listed, startIssuance } from '../oid4vci/issuance-helpers.ts';
import { clientAttestation, instanceKey, type Keys, withDpop } from './haip-wallet.ts';
import { type IssuerAndWallet, offerQuery, startIssuerAndWallet } from './hosted-wallet-world.ts';

/**
 * An issuer enabled with --haip (HAIP 1.0 §4) on the pre-authorized code grant: the token
 * endpoint wants DPoP and a Wallet Attestation from a trusted wallet provider, the Credential
 * Endpoint a key attestation with every jwt proof. A raw wallet made here with jose is refused
 * where it falls short; Coffer's own hosted wallet, its own wallet provider
 * (`coffer wallet-provider create`) trusted by WALLET_PROVIDER_TRUST_ANCHORS, gets the credential.
 */

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

const PRE_AUTHORIZED = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const seconds = () => Math.floor(Date.now() / 1000);

for (const kind of DATABASE_KINDS) {
  describe(`a HAIP issuer on the pre-authorized grant, on ${kind}`, () => {
    let world: IssuerAndWallet;
    let provider: WalletProviderFiles;
    let stranger: WalletProviderFiles;
    before(async () => {
      provider = await createWalletProvider('Coffer');
      stranger = await createWalletProvider('Stranger');
      world = await startIssuerAndWallet(kind, {
        haip: true,
        env: { ...provider.env, WALLET_PROVIDER_TRUST_ANCHORS: provider.chainFile },
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
    });

    const tokenEndpoint = () => `${world.front.url}/v2/openidc/token`;

    async function preAuthorizedCode(): Promise<string> {
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: { given_name: 'Ada' } },
      });
      assert.equal(offer.status, 201, offer.text);
      const document = (await (await world.front.fetch(offer.body.data.credential_offer_uri)).json()) as Json;
      return document.grants[PRE_AUTHORIZED]['pre-authorized_code'];
    }

    const tokenRequest = (
      key: { keys: Keys; jwk: JWK },
      code: string,
      headers: Record<string, string> = {},
    ) =>
      withDpop(world, key, tokenEndpoint(), {
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ grant_type: PRE_AUTHORIZED, 'pre-authorized_code': code }).toString(),
      });

    test('an offer opens HAIP wallets by haip:// (HAIP 1.0, Credential Offer), in the API and on its page', async () => {
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: { given_name: 'Ada' } },
      });
      const { haip_offer_link: haip, offer_link: common, page } = offer.body.data;
      assert.equal(haip, common.replace('openid-credential-offer://', 'haip://'));
      const html = await (await world.front.fetch(page)).text();
      assert.ok(
        html.includes(`<a class="open" href="${haip.replaceAll('&', '&amp;')}">Add to your wallet</a>`),
      );
      assert.ok(html.includes(common.replaceAll('&', '&amp;')), 'the common scheme for other wallets');
    });

    test("the issuer's authorization server names attest_jwt_client_auth, so wallets know to send an attestation", async () => {
      const response = await world.front.fetch(`${world.front.url}/.well-known/openid-configuration`);
      const metadata = (await response.json()) as Json;
      assert.ok(metadata.token_endpoint_auth_methods_supported.includes('attest_jwt_client_auth'));
    });

    test('the token endpoint refuses a wallet without a Wallet Attestation, or with one from an untrusted provider (invalid_client); the code stays usable', async () => {
      const code = await preAuthorizedCode();
      const key = await instanceKey();
      const bare = await tokenRequest(key, code);
      assert.equal(bare.status, 401, JSON.stringify(bare.body));
      assert.equal(bare.body.error, 'invalid_client');
      const untrusted = await tokenRequest(
        key,
        code,
        await clientAttestation(stranger, key, world.front.url),
      );
      assert.equal(untrusted.status, 401, JSON.stringify(untrusted.body));
      assert.equal(untrusted.body.error, 'invalid_client');
      const trusted = await tokenRequest(key, code, await clientAttestation(provider, key, world.front.url));
      assert.equal(trusted.status, 200, JSON.stringify(trusted.body));
      assert.equal(trusted.body.token_type, 'DPoP');
    });

    test('the credential endpoint refuses a jwt proof without a key attestation (invalid_proof)', async () => {
      const code = await preAuthorizedCode();
      const key = await instanceKey();
      const token = await tokenRequest(key, code, await clientAttestation(provider, key, world.front.url));
      assert.equal(token.status, 200, JSON.stringify(token.body));
      const accessToken = token.body.access_token as string;
      const nonce = await world.front.fetch(`${world.issuerId}/nonce`, { method: 'POST' });
      const { c_nonce } = (await nonce.json()) as { c_nonce: string };
      const holder = await instanceKey();
      const proof = await new SignJWT({ aud: world.issuerId, nonce: c_nonce, iat: seconds() })
        .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: holder.jwk })
        .sign(holder.keys.privateKey);
      const ath = Buffer.from(
        await crypto.subtle.digest('SHA-256', new TextEncoder().encode(accessToken)),
      ).toString('base64url');
      const credential = await withDpop(
        world,
        key,
        `${world.issuerId}/credential`,
        {
          headers: { authorization: `DPoP ${accessToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ credential_configuration_id: 'degree', proofs: { jwt: [proof] } }),
        },
        { ath },
      );
      assert.equal(credential.status, 400, JSON.stringify(credential.body));
      assert.equal(credential.body.error, 'invalid_proof');
      assert.match(credential.body.error_description, /key attestation/);
    });

    test("Coffer's hosted wallet, a trusted wallet provider, receives from the HAIP issuer", async () => {
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: { given_name: 'Ada' } },
        tx_code: {},
      });
      assert.equal(offer.status, 201, offer.text);
      const interactionPath = await startIssuance(world, offerQuery(offer.body.data));
      const answer = await decideIssuance(world, interactionPath, {
        decision: 'approve',
        tx_code: offer.body.data.tx_code,
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const [received] = answer.body.received;
      const entry = (await listed(world)).find((e: Json) => e.id === received.credential_id);
      assert.ok(entry, 'the credential is in the list');
      assert.equal(entry.claims.given_name, 'Ada');
    });
  });
}
