import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import * as oidc from 'openid-client';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { issueSdJwtVc, PID_CLAIMS, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { answer, encryptResponse, postForm, resolveRequest } from './test-wallet.ts';
import { presentSdJwt, sdJwtQuery, startVerifierWorld, type VerifierWorld } from './verifier-helpers.ts';

/**
 * Logging in with a wallet (DESIGN.md): an app's client configured with `--wallet-login` (the
 * real CLI) offers a third method; openid-client is the app, the foreign test wallet answers the
 * request that the log-in page's POST made, and the code flow continues to the app with
 * login_type "credential" and the disclosed claims in the identity token and userinfo.
 */
const REDIRECT_URI = 'https://rp.example/callback';

for (const kind of DATABASE_KINDS) {
  describe(`logging in with a wallet, on ${kind}`, () => {
    let world: VerifierWorld;
    let dir: string;
    let holder: Awaited<ReturnType<typeof generateKeyPair>>;
    let config: oidc.Configuration;
    let loginFile: string;

    const cli = (...args: string[]) => coffer(world.server, ...args);

    before(async () => {
      world = await startVerifierWorld(kind);
      dir = await mkdtemp(path.join(tmpdir(), 'coffer-wallet-login-'));
      holder = await generateKeyPair('ES256', { extractable: true });
      loginFile = path.join(dir, 'wallet-login.json');
      await writeFile(
        loginFile,
        JSON.stringify({
          dcql_query: sdJwtQuery(PID_VCT, [['email'], ['given_name'], ['family_name']]),
          account_claim: ['email'],
        }),
      );
      const id = String(world.clientId);
      const set = await cli(
        'client',
        'set',
        id,
        '--redirect-uri',
        REDIRECT_URI,
        '--grant',
        'refresh_token',
        '--wallet-login',
        loginFile,
      );
      assert.equal(set.code, 0, set.stderr);
      const rotated = await cli('client', 'secret-rotate', id, '--json');
      assert.equal(rotated.code, 0, rotated.stderr);
      const secret = JSON.parse(rotated.stdout).client_secret as string;
      // The app speaks to PUBLIC_URL, the TLS front, as it would to a deployment.
      config = await oidc.discovery(new URL(world.front.url), id, secret, undefined, {
        [oidc.customFetch]: world.front.fetch as never,
      });
      config[oidc.customFetch] = world.front.fetch as never;
    });
    after(async () => {
      await world.close();
      await rm(dir, { recursive: true, force: true });
    });

    /** The app sends the browser to authorize; Coffer sends it on to the log-in interaction. */
    async function startLogin(scope = 'openid') {
      const verifier = oidc.randomPKCECodeVerifier();
      const nonce = oidc.randomNonce();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      const response = await world.front.fetch(url.href);
      assert.equal(response.status, 303);
      const interaction = new URL(response.headers.get('location')!, world.front.url).pathname;
      return { interaction, verifier, nonce, state };
    }

    const post = (interaction: string, step: string) =>
      world.server.request('POST', `${interaction}/${step}`, { body: {} });

    async function present(authorizationRequest: string, credential: string, frame: Record<string, boolean>) {
      const request = await resolveRequest(authorizationRequest);
      const presentation = await presentSdJwt(credential, frame, holder, {
        aud: request.clientId,
        nonce: request.payload.nonce,
      });
      const answered = await answer(request, { pid: [presentation] });
      assert.equal(answered.status, 200, JSON.stringify(answered.body));
    }

    const credentialFor = async (claims: Record<string, unknown>, issuer = world.issuer) =>
      issueSdJwtVc(issuer, {
        holderJwk: (await exportJWK(holder.publicKey)) as JsonWebKey,
        claims: { ...PID_CLAIMS, ...claims },
      });

    test('a credential from a trusted issuer logs in: login_type credential, disclosed claims in the tokens and userinfo', async () => {
      const started = await startLogin();
      const view = await world.server.request('GET', started.interaction, {
        headers: { accept: 'application/json' },
      });
      assert.deepEqual(view.body.methods, ['wallet', 'email', 'credential']);

      const made = await post(started.interaction, 'login/credential');
      assert.equal(made.status, 200, made.text);
      assert.match(made.body.authorization_request, /^openid4vp:\/\/\?client_id=x509_san_dns/);
      assert.match(made.body.qr_svg, /^<svg class="qr" role="img"/);
      assert.equal(made.body.page, `${world.front.url}/verify/${made.body.request_id}`);
      const again = await post(started.interaction, 'login/credential');
      assert.equal(again.body.request_id, made.body.request_id, 'one open request per interaction');

      const pending = await post(started.interaction, 'login/credential/check');
      assert.equal(pending.status, 202);
      assert.equal(pending.body.status, 'created');

      await present(made.body.authorization_request, await credentialFor({}), {
        email: true,
        given_name: true,
        family_name: true,
      });
      const checked = await post(started.interaction, 'login/credential/check');
      assert.equal(checked.status, 200, checked.text);
      assert.match(checked.headers.get('set-cookie') ?? '', /coffer_session=|session/i);
      const tokens = await oidc.authorizationCodeGrant(config, new URL(checked.body.redirect_to), {
        pkceCodeVerifier: started.verifier,
        expectedNonce: started.nonce,
        expectedState: started.state,
      });
      const claims = tokens.claims()!;
      assert.equal(claims['login_type'], 'credential');
      assert.equal(claims['email'], 'ada@example.com');
      assert.equal(claims['email_verified'], true);
      assert.equal(claims['given_name'], 'Ada');
      assert.equal(claims['family_name'], 'Lovelace');
      assert.equal(claims['birthdate'], undefined, 'only what was disclosed');
      assert.equal(claims['phone_number'], undefined);
      const accessPayload = JSON.parse(
        Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString('utf8'),
      );
      assert.equal(accessPayload.email, undefined, 'no personal data in the access token');
      assert.equal(accessPayload.given_name, undefined);

      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      assert.equal(userinfo.email, 'ada@example.com');
      assert.equal(userinfo.email_verified, true);
      assert.equal(userinfo.given_name, 'Ada');
      assert.equal(userinfo.family_name, 'Lovelace');

      // An unknown e-mail signed the person up in the client's tenant.
      const user = await world.server.database.db
        .selectFrom('users')
        .select(['tenant_id', 'email_verified'])
        .where('user_id', '=', Number(claims.sub))
        .executeTakeFirstOrThrow();
      assert.equal(user.tenant_id, world.clientId);
      assert.equal(user.email_verified, 1);

      // The verified claims are used once: the request keeps none of them.
      const row = await world.server.database.db
        .selectFrom('verifier_requests')
        .select(['claims_sealed', 'interaction_id'])
        .where('id', '=', made.body.request_id)
        .executeTakeFirstOrThrow();
      assert.equal(row.claims_sealed, null);
      assert.equal(row.interaction_id, started.interaction.split('/').pop());

      // The same e-mail logs in to the same account next time.
      const second = await startLogin();
      const secondMade = await post(second.interaction, 'login/credential');
      await present(secondMade.body.authorization_request, await credentialFor({ given_name: 'Augusta' }), {
        email: true,
        given_name: true,
        family_name: true,
      });
      const secondChecked = await post(second.interaction, 'login/credential/check');
      assert.equal(secondChecked.status, 200, secondChecked.text);
      const secondTokens = await oidc.authorizationCodeGrant(
        config,
        new URL(secondChecked.body.redirect_to),
        {
          pkceCodeVerifier: second.verifier,
          expectedNonce: second.nonce,
          expectedState: second.state,
        },
      );
      assert.equal(secondTokens.claims()!.sub, claims.sub);
      assert.equal(
        secondTokens.claims()!['given_name'],
        'Augusta',
        "this log-in's claims, not the last one's",
      );
    });

    test("another person's e-mail signs up a new account in the tenant; a refresh keeps the claims", async () => {
      const started = await startLogin('openid offline_access');
      const made = await post(started.interaction, 'login/credential');
      await present(
        made.body.authorization_request,
        await credentialFor({ email: 'grace@example.com', given_name: 'Grace', family_name: 'Hopper' }),
        { email: true, given_name: true, family_name: true },
      );
      const checked = await post(started.interaction, 'login/credential/check');
      assert.equal(checked.status, 200, checked.text);
      const tokens = await oidc.authorizationCodeGrant(config, new URL(checked.body.redirect_to), {
        pkceCodeVerifier: started.verifier,
        expectedNonce: started.nonce,
        expectedState: started.state,
      });
      assert.equal(tokens.claims()!['email'], 'grace@example.com');
      assert.equal(tokens.claims()!['given_name'], 'Grace');
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      assert.equal(refreshed.claims()!['given_name'], 'Grace');
      assert.equal(refreshed.claims()!['login_type'], 'credential');
      const userinfo = await oidc.fetchUserInfo(config, refreshed.access_token, tokens.claims()!.sub);
      assert.equal(userinfo.given_name, 'Grace');
      assert.equal(userinfo.email, 'grace@example.com');
      const user = await world.server.database.db
        .selectFrom('users')
        .select('tenant_id')
        .where('user_id', '=', Number(tokens.claims()!.sub))
        .executeTakeFirstOrThrow();
      assert.equal(user.tenant_id, world.clientId);
    });

    test("an untrusted issuer's credential logs nobody in; the request stays open for another credential", async () => {
      const started = await startLogin();
      const made = await post(started.interaction, 'login/credential');
      const stranger = await makeIssuerIdentity('Stranger Issuer');
      await present(made.body.authorization_request, await credentialFor({}, stranger), {
        email: true,
        given_name: true,
        family_name: true,
      });
      const checked = await post(started.interaction, 'login/credential/check');
      assert.equal(checked.status, 202, checked.text);
      assert.equal(checked.body.status, 'rejected');
      assert.equal(checked.headers.get('set-cookie'), null, 'nobody is logged in');
      const shown = await post(started.interaction, 'login/credential');
      assert.equal(shown.body.request_id, made.body.request_id, 'the same request, still open');
      await present(made.body.authorization_request, await credentialFor({}), {
        email: true,
        given_name: true,
        family_name: true,
      });
      const loggedIn = await post(started.interaction, 'login/credential/check');
      assert.equal(loggedIn.status, 200, loggedIn.text);
    });

    test('a declined answer, which anyone who saw the QR code can send, keeps the page waiting for the wallet', async () => {
      const started = await startLogin();
      const made = await post(started.interaction, 'login/credential');
      // The attacker reads the QR code and answers first.
      const seen = await resolveRequest(made.body.authorization_request);
      const spoofed = await postForm(seen.payload.response_uri, {
        response: await encryptResponse(seen, { error: 'access_denied', state: seen.payload.state }),
      });
      assert.equal(spoofed.status, 200);
      const waiting = await post(started.interaction, 'login/credential/check');
      assert.equal(waiting.status, 202, waiting.text);
      assert.equal(waiting.body.status, 'declined');
      // The person's wallet answers after it.
      await present(made.body.authorization_request, await credentialFor({}), {
        email: true,
        given_name: true,
        family_name: true,
      });
      const checked = await post(started.interaction, 'login/credential/check');
      assert.equal(checked.status, 200, checked.text);
      assert.ok(checked.body.redirect_to);
    });

    test("trusted_issuers: only the client's own issuers log in; one of ISSUER_TRUST_ANCHORS then logs nobody in and changes no account", async () => {
      const own = await makeIssuerIdentity('Club Membership Issuer');
      const narrowed = path.join(dir, 'wallet-login-narrowed.json');
      await writeFile(
        narrowed,
        JSON.stringify({
          dcql_query: sdJwtQuery(PID_VCT, [['email'], ['given_name'], ['family_name']]),
          account_claim: ['email'],
          trusted_issuers: [own.ca.pem],
        }),
      );
      const id = String(world.clientId);
      assert.equal((await cli('client', 'set', id, '--wallet-login', narrowed)).code, 0);
      try {
        const accounts = async () =>
          (await world.server.database.db.selectFrom('users').select('user_id').execute()).length;
        const before = await accounts();
        const frame = { email: true, given_name: true, family_name: true };
        const started = await startLogin();
        const made = await post(started.interaction, 'login/credential');
        // A credential from an issuer of ISSUER_TRUST_ANCHORS, for an e-mail nobody has yet.
        await present(
          made.body.authorization_request,
          await credentialFor({ email: `anchored.${kind}@example.org` }),
          frame,
        );
        const refused = await post(started.interaction, 'login/credential/check');
        assert.equal(refused.status, 202, refused.text);
        assert.equal(refused.body.status, 'rejected');
        assert.equal(refused.headers.get('set-cookie'), null);
        assert.equal(await accounts(), before, 'no account was made or changed');

        await present(
          made.body.authorization_request,
          await credentialFor({ email: `member.${kind}@example.org` }, own),
          frame,
        );
        const checked = await post(started.interaction, 'login/credential/check');
        assert.equal(checked.status, 200, checked.text);
        assert.equal(await accounts(), before + 1, 'the member is signed up');
      } finally {
        assert.equal((await cli('client', 'set', id, '--wallet-login', loginFile)).code, 0);
      }
    });

    test('trusted_issuers must be PEM certificates or DIDs', async () => {
      const bad = path.join(dir, 'wallet-login-bad.json');
      for (const trusted of [[], ['not a certificate'], 'did:web:x', [42]]) {
        await writeFile(
          bad,
          JSON.stringify({
            dcql_query: sdJwtQuery(PID_VCT, [['email']]),
            account_claim: ['email'],
            trusted_issuers: trusted,
          }),
        );
        const set = await cli('client', 'set', String(world.clientId), '--wallet-login', bad);
        assert.equal(set.code, 1, JSON.stringify(trusted));
        assert.match(set.stderr, /trusted_issuers/);
      }
    });

    test('the CLI checks the file; --wallet-login none removes the method', async () => {
      const id = String(world.clientId);
      const bad = path.join(dir, 'bad.json');
      await writeFile(bad, JSON.stringify({ dcql_query: { credentials: [] }, account_claim: ['email'] }));
      const invalid = await cli('client', 'set', id, '--wallet-login', bad);
      assert.equal(invalid.code, 1);
      assert.match(invalid.stderr, /DCQL query is not valid/);
      const unasked = path.join(dir, 'unasked.json');
      await writeFile(
        unasked,
        JSON.stringify({ dcql_query: sdJwtQuery(PID_VCT, [['given_name']]), account_claim: ['email'] }),
      );
      assert.match((await cli('client', 'set', id, '--wallet-login', unasked)).stderr, /does not ask for/);
      const noPath = path.join(dir, 'no-path.json');
      await writeFile(
        noPath,
        JSON.stringify({ dcql_query: sdJwtQuery(PID_VCT, [['email']]), account_claim: [] }),
      );
      assert.match(
        (await cli('client', 'set', id, '--wallet-login', noPath)).stderr,
        /account_claim must be/,
      );
      const other = await world.server.createMaster('Not a verifier');
      const notVerifier = await cli('client', 'set', String(other.clientId), '--wallet-login', loginFile);
      assert.equal(notVerifier.code, 1);
      assert.match(notVerifier.stderr, /is not a verifier; run `coffer verifier enable/);

      const removed = await cli('client', 'set', id, '--wallet-login', 'none');
      assert.equal(removed.code, 0, removed.stderr);
      const started = await startLogin();
      const view = await world.server.request('GET', started.interaction, {
        headers: { accept: 'application/json' },
      });
      assert.deepEqual(view.body.methods, ['wallet', 'email']);
      assert.equal((await post(started.interaction, 'login/credential')).status, 404);
      const page = await world.server.request('GET', started.interaction);
      assert.doesNotMatch(page.text, /Use a digital wallet/);
      assert.equal((await cli('client', 'set', id, '--wallet-login', loginFile)).code, 0);
    });
  });
}
