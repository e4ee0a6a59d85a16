import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { createClient } from '../../src/clients/client-admin.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  codeFromOutbox,
  interactionView,
  postInteraction,
  REDIRECT_URI,
  type RelyingParty,
  registerRelyingParty,
  signSiwe,
  startLogin,
} from '../oidc/flow-helpers.ts';

const carol = privateKeyToAccount('0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6');
const mallory = privateKeyToAccount('0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a');

for (const kind of DATABASE_KINDS) {
  describe(`log-in interaction on ${kind}`, () => {
    let server: TestServer;
    let rp: RelyingParty;
    before(async () => {
      server = await startTestServer(kind);
      rp = await registerRelyingParty(server);
    });
    after(() => server.close());

    const freshInteraction = async () => {
      const started = await startLogin(server, rp);
      return {
        path: started.interactionPath,
        siwe: (await interactionView(server, started.interactionPath)).body.siwe,
      };
    };

    describe('Sign-In with Ethereum refusals', () => {
      const cases: Array<[string, (siwe: Record<string, never>) => Parameters<typeof signSiwe>[2], RegExp]> =
        [
          ['wrong domain', () => ({ domain: 'evil.example' }), /for evil\.example/],
          ['wrong URI', () => ({ uri: 'https://evil.example/login' }), /uri/i],
          ['wrong nonce', () => ({ nonce: 'abcdef0123456789' }), /nonce/i],
          [
            'expired message',
            () => ({
              issuedAt: new Date(Date.now() - 3600_000),
              expirationTime: new Date(Date.now() - 60_000),
            }),
            /expired/i,
          ],
          [
            'issued in the future',
            () => ({ issuedAt: new Date(Date.now() + 3600_000) }),
            /future|not yet|issued/i,
          ],
        ];
      for (const [label, override, pattern] of cases) {
        test(`${label} → 400, no session, no code`, async () => {
          const { path, siwe } = await freshInteraction();
          const signed = await signSiwe(carol, siwe, override(siwe as never));
          const r = await postInteraction(server, path, 'login/wallet', signed);
          assert.equal(r.status, 400, JSON.stringify(r.body));
          assert.equal(r.body.error, 'invalid_request');
          assert.match(r.body.error_description, pattern);
          assert.equal(r.cookie, null);
        });
      }

      test('a signature by another address → 400', async () => {
        const { path, siwe } = await freshInteraction();
        const signed = await signSiwe(carol, siwe);
        const forged = await mallory.signMessage({ message: signed.message });
        const r = await postInteraction(server, path, 'login/wallet', {
          message: signed.message,
          signature: forged,
        });
        assert.equal(r.status, 400);
        assert.match(r.body.error_description, /not signed by/);
      });

      test('a nonce is used once: the same signed message cannot finish the log-in twice', async () => {
        const { path, siwe } = await freshInteraction();
        const signed = await signSiwe(carol, siwe);
        assert.equal((await postInteraction(server, path, 'login/wallet', signed)).status, 200);
        const again = await postInteraction(server, path, 'login/wallet', signed);
        assert.equal(again.status, 404);
        // Nor can it open another interaction, whose nonce differs.
        const other = await freshInteraction();
        assert.equal((await postInteraction(server, other.path, 'login/wallet', signed)).status, 400);
      });

      test('malformed bodies → 400 naming the field; cross-site POST → 403', async () => {
        const { path, siwe } = await freshInteraction();
        const missing = await postInteraction(server, path, 'login/wallet', { message: 'x' });
        assert.equal(missing.status, 400);
        assert.equal(missing.body.details[0].path, '/body/signature');
        const garbage = await postInteraction(server, path, 'login/wallet', {
          message: 'hello',
          signature: '0x1234',
        });
        assert.equal(garbage.status, 400);
        const signed = await signSiwe(carol, siwe);
        const cross = await postInteraction(server, path, 'login/wallet', signed, {
          origin: 'https://evil.example',
        });
        assert.equal(cross.status, 403);
        const unknown = await postInteraction(
          server,
          '/interaction/doesnotexistdoesnotexist',
          'login/wallet',
          signed,
        );
        assert.equal(unknown.status, 404);
      });
    });

    describe('e-mail one-time code', () => {
      test('five wrong codes lock the interaction, even for the right code afterwards', async () => {
        const { path } = await freshInteraction();
        const email = `lock.${kind}@example.org`;
        assert.equal((await postInteraction(server, path, 'login/email', { email })).status, 202);
        const code = await codeFromOutbox(server, email);
        const wrong = code === '000000' ? '111111' : '000000';
        for (let i = 0; i < 5; i++) {
          const r = await postInteraction(server, path, 'login/email/verify', { code: wrong });
          assert.equal(r.status, 400);
        }
        const right = await postInteraction(server, path, 'login/email/verify', { code });
        assert.equal(right.status, 400);
        assert.match(right.body.error_description, /locked/);
        const resend = await postInteraction(server, path, 'login/email', { email });
        assert.equal(resend.status, 400);
      });

      test('verify before any code was sent, a bad address, an unknown interaction → 4xx', async () => {
        const { path } = await freshInteraction();
        assert.equal(
          (await postInteraction(server, path, 'login/email/verify', { code: '123456' })).status,
          400,
        );
        const bad = await postInteraction(server, path, 'login/email', { email: 'not-an-address' });
        assert.equal(bad.status, 400);
        assert.equal(bad.body.details[0].path, '/body/email');
        assert.equal(
          (
            await postInteraction(server, '/interaction/nope-nope-nope-nope', 'login/email', {
              email: 'a@b.example',
            })
          ).status,
          404,
        );
      });
    });

    describe('authorization request errors', () => {
      const authorize = (params: Record<string, string>) =>
        fetch(`${server.url}/v2/openidc/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
      const base = () => ({
        response_type: 'code',
        client_id: String(rp.clientId),
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        state: 'st',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      });

      test('an unknown client or unregistered redirect URI shows an error page and never redirects', async () => {
        for (const params of [
          { ...base(), client_id: '999999' },
          { ...base(), client_id: 'abc' },
          { ...base(), redirect_uri: 'https://evil.example/cb' },
          { ...base(), redirect_uri: `${REDIRECT_URI}/extra` },
        ]) {
          const r = await authorize(params);
          assert.equal(r.status, 400);
          assert.equal(r.headers.get('location'), null);
          assert.match(r.headers.get('content-type')!, /text\/html/);
        }
      });

      test('other errors go back to the client with error and state', async () => {
        const cases: Array<[Record<string, string>, string]> = [
          [{ ...base(), scope: 'profile' }, 'invalid_scope'],
          [{ ...base(), response_type: 'token' }, 'unsupported_response_type'],
          [{ ...base(), code_challenge_method: 'plain' }, 'invalid_request'],
          [{ ...base(), code_challenge: 'short' }, 'invalid_request'],
        ];
        for (const [params, error] of cases) {
          const r = await authorize(params);
          assert.equal(r.status, 303);
          const location = new URL(r.headers.get('location')!);
          assert.equal(location.origin + location.pathname, REDIRECT_URI);
          assert.equal(location.searchParams.get('error'), error);
          assert.equal(location.searchParams.get('state'), 'st');
        }
      });

      test('PKCE is required for a client without a secret', async () => {
        const publicClient = await createClient(server.database.db, {
          name: 'Public',
          redirectUris: [REDIRECT_URI],
        });
        await server.database.db
          .updateTable('clients')
          .set({ client_secret_hash: null })
          .where('client_id', '=', publicClient.client_id)
          .execute();
        const { code_challenge: _c, code_challenge_method: _m, ...withoutPkce } = base();
        const r = await authorize({ ...withoutPkce, client_id: String(publicClient.client_id) });
        assert.equal(new URL(r.headers.get('location')!).searchParams.get('error'), 'invalid_request');
      });
    });
  });
}
