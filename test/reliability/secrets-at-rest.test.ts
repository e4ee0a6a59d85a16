import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createClient, setClientSettings } from '../../src/clients/client-admin.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { holderKeyContext } from '../../src/users/user-service.ts';
import { logInUser, registerPersonContext } from '../credentials/helpers.ts';
import { createStockIssuer, personCredential } from '../credentials/stock-issuer.ts';
import { findAtRest } from '../helpers/at-rest.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  codeFromOutbox,
  interactionView,
  postInteraction,
  registerRelyingParty,
  startLogin,
} from '../oidc/flow-helpers.ts';
import { fullProfile } from '../users/helpers.ts';

/**
 * Secrets and privacy at rest (issue 7): after a full scenario (clients, sub-client settings, a
 * user with a full profile, an e-mail log-in, tokens, a stored credential and a presentation),
 * neither the database nor the block store holds an API token, client secret, e-mail address,
 * profile or claim value, one-time code, access token or private key in plaintext.
 */
for (const kind of DATABASE_KINDS) {
  describe(`secrets and personal data at rest on ${kind}`, () => {
    let server: TestServer;
    const needles: string[] = [];
    before(async () => {
      server = await startTestServer(kind);
    });
    after(() => server.close());

    test('a full scenario leaves none of them in plaintext', async () => {
      const master = await createClient(server.database.db, { name: 'Scan master', master: true });
      needles.push(master.api_token, master.client_secret!);
      const sub = await server.request('POST', '/v1/sub_client', {
        headers: { 'x-api-token': master.api_token },
        body: {
          name: 'Scan shop',
          address_1: '1 Road',
          country: 'GB',
          province: 'GB-ENG',
          city: 'London',
          timezone: 'Europe/London',
          domain: 'scan.example.org',
          subdomain: `scan-${kind}`,
        },
      });
      const cipher = createFieldCipher(server.masterKey);
      const espToken = 'esp-secret-7c41b9d2e8';
      const recaptchaKey = 'recaptcha-secret-19f0aa';
      await setClientSettings(server.database.db, cipher, sub.body.data.client_id, {
        espToken,
        recaptchaKey,
      });
      needles.push(espToken, recaptchaKey);

      const created = await server.request('POST', '/v1/user/create', {
        headers: { 'x-api-token': master.api_token },
        body: { profile: { ...fullProfile, email_address: 'scan.canary@leak.example' } },
      });
      assert.equal(created.status, 201, created.text);
      needles.push('scan.canary@leak.example', 'Lovelace', 'Augusta', '7911123456', '1990-12-10');

      // An e-mail log-in: the address, the one-time code, the tokens.
      const rp = await registerRelyingParty(server);
      needles.push(rp.clientSecret);
      const started = await startLogin(server, rp);
      const email = 'otp.canary@leak.example';
      await postInteraction(server, started.interactionPath, 'login/email', { email });
      const code = await codeFromOutbox(server, email);
      const verified = await postInteraction(server, started.interactionPath, 'login/email/verify', { code });
      assert.equal(verified.status, 200);
      const authorizationCode = new URL(verified.body.redirect_to).searchParams.get('code')!;
      needles.push(email, authorizationCode, verified.cookie!.split(';')[0]!.split('=')[1]!);
      assert.ok((await interactionView(server, started.interactionPath)).status >= 400);

      // A wallet user with a credential and a presentation.
      const user = await logInUser(server, rp, privateKeyToAccount(generatePrivateKey()));
      needles.push(user.accessToken);
      await registerPersonContext(server);
      const issuer = await createStockIssuer();
      const vc = await issuer.issue(
        personCredential(issuer.did, user.did, { first_name: 'Claimvalue', last_name: 'Canaryclaim' }),
      );
      assert.equal(
        (
          await server.request('POST', '/v1/vc/issuer/store', {
            headers: { 'x-api-token': master.api_token },
            body: { vc },
          })
        ).status,
        201,
      );
      assert.equal(
        (
          await server.request('POST', '/v1/openidc/credentials/proof', {
            headers: user.bearer,
            body: { vcIdFields: { [vc['id'] as string]: ['/credentialSubject/first_name'] } },
          })
        ).status,
        200,
      );
      needles.push('Claimvalue', 'Canaryclaim');

      // The private keys: every holder key and the token signing key.
      const holders = await server.database.db
        .selectFrom('users')
        .select(['did', 'holder_key_sealed'])
        .execute();
      for (const holder of holders) {
        const jwk = JSON.parse(cipher.decrypt(holder.holder_key_sealed, holderKeyContext(holder.did))) as {
          d: string;
        };
        needles.push(jwk.d);
      }
      const signingKeys = await server.database.db.selectFrom('signing_keys').selectAll().execute();
      assert.ok(signingKeys.length > 0);
      for (const key of signingKeys) {
        needles.push(
          (JSON.parse(cipher.decrypt(key.private_jwk_sealed, `signing_keys/${key.kid}`)) as { d: string }).d,
        );
      }
      needles.push(server.masterKey.toString('base64'));

      const found = await findAtRest(server, needles);
      assert.deepEqual(found, [], `found in plaintext at rest:\n${found.join('\n')}`);
      // The scan can see: the public parts are there in clear.
      assert.ok((await findAtRest(server, [user.did])).length > 0, 'the scan reads the stored data');
    });
  });
}
