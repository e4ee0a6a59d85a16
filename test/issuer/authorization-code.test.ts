// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  type CallbackContext,
  clientAuthenticationClientAttestationJwt,
  clientAuthenticationNone,
  type JwtSignerJwk,
} from '@openid4vc/oauth2';
import { Openid4vciClient } from '@openid4vc/openid4vci';
import { CompactSign, type JWK, SignJWT } from 'jose';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { createWalletProvider, type WalletProviderFiles } from '../oid4vci/haip-helpers.ts';
import { codeFromOutbox } from '../oidc/flow-helpers.ts';
import { startTlsFront, type TlsFront } from '../verifier/tls-front.ts';
import { type IssuerWorld, startIssuerWorld } from './issuer-helpers.ts';

const WALLET = 'https://wallet.example';
const REDIRECT_URI = 'https://wallet.example/callback';

interface Key {
  privateKey: KeyObject;
  publicJwk: JWK;
}

function newKey(): Key {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, publicJwk: publicKey.export({ format: 'jwk' }) as JWK };
}

const signerOf = (key: Key): JwtSignerJwk => ({
  method: 'jwk',
  alg: 'ES256',
  publicJwk: key.publicJwk as never,
});

/** A wallet built on the client side of @openid4vc: its callbacks sign with its own keys. */
function walletClient(
  front: TlsFront,
  keys: Key[],
  authentication: (signJwt: CallbackContext['signJwt']) => CallbackContext['clientAuthentication'] = () =>
    clientAuthenticationNone({ clientId: WALLET }),
) {
  const same = (a: JWK, b: any) => a.x === b.x && a.y === b.y;
  const signJwt: CallbackContext['signJwt'] = async (signer, { header, payload }) => {
    const key = keys.find((k) => signer.method === 'jwk' && same(k.publicJwk, signer.publicJwk));
    if (!key) throw new Error('no such key');
    const jwt = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader(header as { alg: string })
      .sign(key.privateKey);
    return { jwt, signerJwk: key.publicJwk as never };
  };
  const callbacks: Omit<CallbackContext, 'verifyJwt' | 'decryptJwe' | 'encryptJwe'> = {
    fetch: front.fetch,
    hash: (data, algorithm) => createHash(algorithm.replace('-', '')).update(data).digest(),
    generateRandom: (length) => randomBytes(length),
    clientAuthentication: authentication(signJwt),
    signJwt,
  };
  return new Openid4vciClient({ callbacks });
}

/** The disclosed claims of a dc+sd-jwt credential. */
function disclosedClaims(credential: string): Record<string, unknown> {
  const [, ...disclosures] = credential.split('~').filter(Boolean);
  return Object.fromEntries(
    disclosures
      .map((d) => JSON.parse(Buffer.from(d, 'base64url').toString()) as unknown[])
      .filter((d) => d.length === 3)
      .map((d) => [d[1], d[2]]),
  );
}

for (const kind of DATABASE_KINDS) {
  describe(`issuer, authorization code from a wallet that is no client (${kind})`, () => {
    let front: TlsFront;
    let world: IssuerWorld;
    before(async () => {
      front = await startTlsFront();
      world = await startIssuerWorld(kind, { PUBLIC_URL: front.url });
      front.target = world.server.url;
      const degree = await world.api('PUT', '/v1/issuer/configurations/degree', {
        format: 'dc+sd-jwt',
        vct: 'https://example.edu/degree',
        claims: [{ path: ['given_name'], mandatory: true }, { path: ['degree'] }],
      });
      assert.equal(degree.status, 201, degree.text);
      const card = await world.api('PUT', '/v1/issuer/configurations/member_card', {
        format: 'dc+sd-jwt',
        vct: 'https://example.edu/member',
        scope: `member_card_${kind}`,
        claims: [{ path: ['family_name'] }, { path: ['email'] }],
        from_profile: { family_name: 'last_name', email: 'email_address' },
      });
      assert.equal(card.status, 201, card.text);
    });
    after(async () => {
      await world.close();
      await front.close();
    });

    /** The person's browser: the authorization URL, the e-mail log-in, back at the wallet. */
    async function logIn(authorizationRequestUrl: string, email: string): Promise<URL> {
      const start = await front.fetch(authorizationRequestUrl, { redirect: 'manual' });
      assert.equal(start.status, 303, await start.text());
      const interaction = start.headers.get('location')!;
      assert.match(interaction, /^\/interaction\//);
      const post = (step: string, body: unknown) =>
        fetch(`${world.server.url}${interaction}/${step}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      assert.equal((await post('login/email', { email })).status, 202);
      const verified = await post('login/email/verify', { code: await codeFromOutbox(world.server, email) });
      const body = (await verified.json()) as any;
      assert.equal(verified.status, 200, JSON.stringify(body));
      return new URL(body.redirect_to);
    }

    /** Offer, PAR with PKCE and DPoP, log-in: the code at the wallet's redirect URI. */
    async function authorizeFromOffer(email: string, extra: Record<string, unknown> = {}) {
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: { given_name: 'Ada', degree: 'BSc' } },
        grant: 'authorization_code',
      });
      assert.equal(offer.status, 201, offer.text);
      const dpopKey = newKey();
      const holderKey = newKey();
      const client = walletClient(front, [dpopKey, holderKey]);
      const credentialOffer = await client.resolveCredentialOffer(offer.body.data.offer_link);
      const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
      const authorization = await client.createAuthorizationRequestUrlFromOffer({
        clientId: WALLET,
        credentialOffer,
        issuerMetadata,
        redirectUri: REDIRECT_URI,
        dpop: { signer: signerOf(dpopKey) },
        additionalRequestPayload: extra,
      });
      // PAR was used: the URL only names the client and the pushed request.
      const url = new URL(authorization.authorizationRequestUrl);
      assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri']);
      const back = await logIn(authorization.authorizationRequestUrl, email);
      return {
        client,
        credentialOffer,
        issuerMetadata,
        dpopKey,
        holderKey,
        authorization,
        back,
        offerId: offer.body.data.id as string,
      };
    }

    it('issues a dc+sd-jwt credential by authorization code with PAR, PKCE and DPoP', async () => {
      const flow = await authorizeFromOffer(`ada.${kind}@example.org`, {
        authorization_details: [{ type: 'openid_credential', credential_configuration_id: 'degree' }],
      });
      const { client, issuerMetadata } = flow;
      assert.equal(flow.back.origin + flow.back.pathname, REDIRECT_URI);
      assert.equal(flow.back.searchParams.get('iss'), front.url);
      const code = flow.back.searchParams.get('code')!;
      const token = await client.retrieveAuthorizationCodeAccessTokenFromOffer({
        credentialOffer: flow.credentialOffer,
        issuerMetadata,
        authorizationCode: code,
        pkceCodeVerifier: flow.authorization.pkce!.codeVerifier,
        redirectUri: REDIRECT_URI,
        dpop: {
          signer: signerOf(flow.dpopKey),
          ...(flow.authorization.dpop?.nonce ? { nonce: flow.authorization.dpop.nonce } : {}),
        },
      });
      assert.equal(token.accessTokenResponse.token_type, 'DPoP');
      assert.deepEqual((token.accessTokenResponse as any).authorization_details, [
        {
          type: 'openid_credential',
          credential_configuration_id: 'degree',
          credential_identifiers: ['degree'],
        },
      ]);
      const { c_nonce } = await client.requestNonce({ issuerMetadata });
      const proof = await client.createCredentialRequestJwtProof({
        issuerMetadata,
        credentialConfigurationId: 'degree',
        signer: signerOf(flow.holderKey),
        nonce: c_nonce,
        clientId: WALLET,
      });
      const answer = await client.retrieveCredentials({
        issuerMetadata,
        accessToken: token.accessTokenResponse.access_token,
        credentialConfigurationId: 'degree',
        proofs: { jwt: [proof.jwt] },
        dpop: { signer: signerOf(flow.dpopKey), ...(token.dpop?.nonce ? { nonce: token.dpop.nonce } : {}) },
      });
      const credential = (answer.credentialResponse.credentials![0] as { credential: string }).credential;
      assert.deepEqual(disclosedClaims(credential), { given_name: 'Ada', degree: 'BSc' });
      const [header] = credential.split('.');
      assert.equal(JSON.parse(Buffer.from(header!, 'base64url').toString()).typ, 'dc+sd-jwt');
      const tracking = await world.api('GET', `/v1/issuer/offers/${flow.offerId}`);
      assert.equal(tracking.body.data.status, 'issued');
    });

    /** A token request as a wallet sends it, with a DPoP proof of `key` carrying the server's nonce. */
    async function tokenRequest(key: Key, params: Record<string, string>) {
      const url = `${front.url}/v2/openidc/token`;
      const send = async (nonce?: string) => {
        const proof = await new SignJWT({
          htm: 'POST',
          htu: url,
          jti: randomBytes(12).toString('hex'),
          ...(nonce ? { nonce } : {}),
        })
          .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk })
          .setIssuedAt()
          .sign(key.privateKey);
        return front.fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            client_id: WALLET,
            ...params,
          }).toString(),
        });
      };
      let response = await send();
      if (response.status === 400 && response.headers.get('dpop-nonce')) {
        const first = (await response.json()) as any;
        if (first.error !== 'use_dpop_nonce') return { status: 400, body: first };
        response = await send(response.headers.get('dpop-nonce')!);
      }
      return { status: response.status, body: (await response.json()) as any };
    }

    it('refuses a wrong code_verifier, a second use, a wrong redirect_uri and another DPoP key', async () => {
      const email = `grace.${kind}@example.org`;
      const wrongVerifier = await authorizeFromOffer(email);
      const code = wrongVerifier.back.searchParams.get('code')!;
      const bad = await tokenRequest(wrongVerifier.dpopKey, {
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: 'x'.repeat(43),
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error, 'invalid_grant');
      // The code was spent by the failed try: the right verifier no longer helps.
      const reuse = await tokenRequest(wrongVerifier.dpopKey, {
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: wrongVerifier.authorization.pkce!.codeVerifier,
      });
      assert.equal(reuse.status, 400);
      assert.equal(reuse.body.error, 'invalid_grant');

      const redirect = await authorizeFromOffer(email);
      const wrongRedirect = await tokenRequest(redirect.dpopKey, {
        code: redirect.back.searchParams.get('code')!,
        redirect_uri: 'https://wallet.example/elsewhere',
        code_verifier: redirect.authorization.pkce!.codeVerifier,
      });
      assert.equal(wrongRedirect.status, 400);
      assert.equal(wrongRedirect.body.error, 'invalid_grant');

      const dpop = await authorizeFromOffer(email);
      const otherKey = await tokenRequest(newKey(), {
        code: dpop.back.searchParams.get('code')!,
        redirect_uri: REDIRECT_URI,
        code_verifier: dpop.authorization.pkce!.codeVerifier,
      });
      assert.equal(otherKey.status, 400);
      assert.equal(otherKey.body.error, 'invalid_grant');
      assert.match(otherKey.body.error_description ?? otherKey.body.message ?? '', /DPoP/);

      // The right everything, once: the code answers.
      const good = await authorizeFromOffer(email);
      const granted = await tokenRequest(good.dpopKey, {
        code: good.back.searchParams.get('code')!,
        redirect_uri: REDIRECT_URI,
        code_verifier: good.authorization.pkce!.codeVerifier,
      });
      assert.equal(granted.status, 200, JSON.stringify(granted.body));
      assert.equal(granted.body.token_type, 'DPoP');
      assert.equal(granted.body.access_token.split('.').length, 3);
    });

    it("issues a from_profile configuration, wallet-initiated through its scope alone, with the person's profile", async () => {
      const email = `hopper.${kind}@example.org`;
      const created = await world.api('POST', '/v1/user/create', {
        profile: { email_address: email, first_name: 'Grace', last_name: 'Hopper' },
      });
      assert.equal(created.status, 201, created.text);
      const dpopKey = newKey();
      const holderKey = newKey();
      const client = walletClient(front, [dpopKey, holderKey]);
      const issuerMetadata = await client.resolveIssuerMetadata(world.issuerId);
      const scope =
        issuerMetadata.credentialIssuer.credential_configurations_supported['member_card']!.scope!;
      assert.equal(scope, `member_card_${kind}`);
      // No offer: the wallet starts (§5.1.2); the library takes a grant without issuer_state.
      const credentialOffer = {
        credential_issuer: world.issuerId,
        credential_configuration_ids: ['member_card'],
        grants: { authorization_code: {} },
      };
      const authorization = await client.createAuthorizationRequestUrlFromOffer({
        clientId: WALLET,
        credentialOffer,
        issuerMetadata,
        redirectUri: REDIRECT_URI,
        scope,
        dpop: { signer: signerOf(dpopKey) },
      });
      const back = await logIn(authorization.authorizationRequestUrl, email);
      const token = await client.retrieveAuthorizationCodeAccessTokenFromOffer({
        credentialOffer,
        issuerMetadata,
        authorizationCode: back.searchParams.get('code')!,
        pkceCodeVerifier: authorization.pkce!.codeVerifier,
        redirectUri: REDIRECT_URI,
        dpop: {
          signer: signerOf(dpopKey),
          ...(authorization.dpop?.nonce ? { nonce: authorization.dpop.nonce } : {}),
        },
      });
      const { c_nonce } = await client.requestNonce({ issuerMetadata });
      const proof = await client.createCredentialRequestJwtProof({
        issuerMetadata,
        credentialConfigurationId: 'member_card',
        signer: signerOf(holderKey),
        nonce: c_nonce,
        clientId: WALLET,
      });
      const answer = await client.retrieveCredentials({
        issuerMetadata,
        accessToken: token.accessTokenResponse.access_token,
        credentialConfigurationId: 'member_card',
        proofs: { jwt: [proof.jwt] },
        dpop: { signer: signerOf(dpopKey), ...(token.dpop?.nonce ? { nonce: token.dpop.nonce } : {}) },
      });
      const credential = (answer.credentialResponse.credentials![0] as { credential: string }).credential;
      assert.deepEqual(disclosedClaims(credential), { family_name: 'Hopper', email });
    });

    it('spends a request_uri when the person finishes: visited twice before, once after; another client_id spends nothing', async () => {
      const pushed = await front.fetch(`${front.url}/v2/openidc/par`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: WALLET,
          response_type: 'code',
          redirect_uri: REDIRECT_URI,
          scope: `member_card_${kind}`,
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        }).toString(),
      });
      assert.equal(pushed.status, 201);
      const { request_uri } = (await pushed.json()) as any;
      const url = (clientId: string) =>
        `${front.url}/v2/openidc/authorize?${new URLSearchParams({ client_id: clientId, request_uri })}`;
      const stranger = await front.fetch(url('https://other-wallet.example'), { redirect: 'manual' });
      assert.equal(stranger.status, 400);
      // A reload (or a second tab) before logging in starts the log-in again.
      const first = await front.fetch(url(WALLET), { redirect: 'manual' });
      assert.equal(first.status, 303);
      const back = await logIn(url(WALLET), `twice.${kind}@example.org`);
      assert.ok(back.searchParams.get('code'));
      // The first visit's log-in, finished after the other: the request_uri was spent.
      const interaction = first.headers.get('location')!;
      const post = (step: string, body: unknown) =>
        fetch(`${world.server.url}${interaction}/${step}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const email = `twice-late.${kind}@example.org`;
      assert.equal((await post('login/email', { email })).status, 202);
      const late = await post('login/email/verify', { code: await codeFromOutbox(world.server, email) });
      const lateBack = new URL(((await late.json()) as any).redirect_to);
      assert.equal(lateBack.searchParams.get('error'), 'invalid_request_uri');
      assert.equal(lateBack.searchParams.get('code'), null);
      const after = await front.fetch(url(WALLET), { redirect: 'manual' });
      assert.equal(after.status, 400);
    });

    it('refuses a request without PKCE, and a wallet-initiated one for a configuration only offers give', async () => {
      const par = (params: Record<string, string>) =>
        front.fetch(`${front.url}/v2/openidc/par`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            client_id: WALLET,
            response_type: 'code',
            redirect_uri: REDIRECT_URI,
            authorization_details: JSON.stringify([
              {
                type: 'openid_credential',
                credential_configuration_id: 'member_card',
                locations: [world.issuerId],
              },
            ]),
            ...params,
          }).toString(),
        });
      const challenge = {
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      };
      const accepted = await par(challenge);
      assert.equal(accepted.status, 201, await accepted.text());
      const noPkce = await par({});
      assert.equal(noPkce.status, 400);
      assert.match(((await noPkce.json()) as any).error, /invalid_request/);
      const needsOffer = await par({
        ...challenge,
        authorization_details: JSON.stringify([
          { type: 'openid_credential', credential_configuration_id: 'degree', locations: [world.issuerId] },
        ]),
      });
      assert.equal(needsOffer.status, 400);
      const refusal = (await needsOffer.json()) as any;
      assert.match(JSON.stringify(refusal), /only on an offer/);
      // Without PAR, a refusal is a page: nothing goes to a redirect URI no one registered.
      const plain = await front.fetch(
        `${front.url}/v2/openidc/authorize?${new URLSearchParams({ client_id: WALLET, response_type: 'code', redirect_uri: REDIRECT_URI, scope: `member_card_${kind}` })}`,
        { redirect: 'manual' },
      );
      assert.equal(plain.status, 400);
      assert.match(await plain.text(), /PKCE/);
    });

    it('advertises what wallets need in the authorization server metadata', async () => {
      const response = await front.fetch(`${front.url}/.well-known/oauth-authorization-server`);
      const metadata = (await response.json()) as any;
      assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
      assert.ok(metadata.authorization_details_types_supported.includes('openid_credential'));
      assert.ok(metadata.token_endpoint_auth_methods_supported.includes('attest_jwt_client_auth'));
      assert.ok(metadata.token_endpoint_auth_methods_supported.includes('none'));
      assert.equal(metadata.pushed_authorization_request_endpoint, `${front.url}/v2/openidc/par`);
    });
  });
}

for (const kind of DATABASE_KINDS) {
  describe(`HAIP issuer, authorization code: PAR, DPoP and a Wallet Attestation (${kind})`, () => {
    let front: TlsFront;
    let world: IssuerWorld;
    let provider: WalletProviderFiles;
    before(async () => {
      provider = await createWalletProvider();
      const anchors = path.join(provider.dir, 'anchors.pem');
      await writeFile(anchors, provider.rootPem);
      front = await startTlsFront();
      world = await startIssuerWorld(kind, { PUBLIC_URL: front.url, WALLET_PROVIDER_TRUST_ANCHORS: anchors });
      front.target = world.server.url;
      const haip = await coffer(
        world.server,
        'issuer',
        'enable',
        '--client',
        String(world.clientId),
        '--haip',
        '--json',
      );
      assert.equal(haip.code, 0, haip.stderr);
      const put = await world.api('PUT', '/v1/issuer/configurations/degree', {
        format: 'dc+sd-jwt',
        vct: 'https://example.edu/degree',
        claims: [{ path: ['degree'] }],
      });
      assert.equal(put.status, 201, put.text);
    });
    after(async () => {
      await world.close();
      await front.close();
      await rm(provider.dir, { recursive: true, force: true });
    });

    /** A Wallet Attestation of the provider for this wallet's instance key (HAIP §4.4.1). */
    function attested(instance: Key) {
      const now = Math.floor(Date.now() / 1000);
      return (signJwt: CallbackContext['signJwt']) => async (request: any) => {
        const attestation = await new SignJWT({
          iss: 'https://wallet-provider.example',
          sub: WALLET,
          iat: now,
          exp: now + 3600,
          cnf: { jwk: instance.publicJwk },
        })
          .setProtectedHeader({ alg: 'ES256', typ: 'oauth-client-attestation+jwt', x5c: provider.x5c })
          .sign(provider.privateKey);
        await clientAuthenticationClientAttestationJwt({
          clientAttestationJwt: attestation,
          callbacks: { signJwt, generateRandom: (length) => randomBytes(length) },
        })(request);
      };
    }

    async function offered(client: Openid4vciClient) {
      const offer = await world.api('POST', '/v1/issuer/offers', {
        configuration_ids: ['degree'],
        claims: { degree: { degree: 'MSc' } },
        grant: 'authorization_code',
      });
      assert.equal(offer.status, 201, offer.text);
      const credentialOffer = await client.resolveCredentialOffer(offer.body.data.offer_link);
      const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer);
      return { credentialOffer, issuerMetadata };
    }

    /** The person logs in at the issuer's authorization server; the wallet's redirect URI with the code. */
    async function logIn(authorizationRequestUrl: string, email: string): Promise<URL> {
      const start = await front.fetch(authorizationRequestUrl, { redirect: 'manual' });
      assert.equal(start.status, 303, await start.text());
      const interaction = start.headers.get('location')!;
      const post = (step: string, body: unknown) =>
        fetch(`${world.server.url}${interaction}/${step}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      assert.equal((await post('login/email', { email })).status, 202);
      const verified = await post('login/email/verify', { code: await codeFromOutbox(world.server, email) });
      return new URL(((await verified.json()) as any).redirect_to);
    }

    it('refuses a pushed request without a Wallet Attestation, and a token request without DPoP', async () => {
      const dpopKey = newKey();
      const bare = walletClient(front, [dpopKey]);
      const first = await offered(bare);
      await assert.rejects(
        bare.createAuthorizationRequestUrlFromOffer({
          clientId: WALLET,
          ...first,
          redirectUri: REDIRECT_URI,
          dpop: { signer: signerOf(dpopKey) },
        }),
        (error: any) => JSON.stringify(error.errorResponse ?? error.message).includes('invalid_client'),
      );
      // Binding the code to a DPoP key at PAR is the wallet's choice (RFC 9449 §10): the pushed
      // request is taken, and DPoP is required where the token is issued.
      const instance = newKey();
      const noDpop = walletClient(front, [instance], attested(instance));
      const second = await offered(noDpop);
      const authorization = await noDpop.createAuthorizationRequestUrlFromOffer({
        clientId: WALLET,
        ...second,
        redirectUri: REDIRECT_URI,
      });
      const back = await logIn(authorization.authorizationRequestUrl, `haip-nodpop.${kind}@example.org`);
      await assert.rejects(
        noDpop.retrieveAuthorizationCodeAccessTokenFromOffer({
          ...second,
          authorizationCode: back.searchParams.get('code')!,
          pkceCodeVerifier: authorization.pkce!.codeVerifier,
          redirectUri: REDIRECT_URI,
        }),
        (error: any) => JSON.stringify(error.errorResponse ?? error.message).includes('invalid_dpop_proof'),
      );
    });

    it('answers a DPoP-bound issuance token to an attested wallet', async () => {
      const dpopKey = newKey();
      const instance = newKey();
      const client = walletClient(front, [dpopKey, instance], attested(instance));
      const { credentialOffer, issuerMetadata } = await offered(client);
      const authorization = await client.createAuthorizationRequestUrlFromOffer({
        clientId: WALLET,
        credentialOffer,
        issuerMetadata,
        redirectUri: REDIRECT_URI,
        dpop: { signer: signerOf(dpopKey) },
      });
      const back = await logIn(authorization.authorizationRequestUrl, `haip.${kind}@example.org`);
      const token = await client.retrieveAuthorizationCodeAccessTokenFromOffer({
        credentialOffer,
        issuerMetadata,
        authorizationCode: back.searchParams.get('code')!,
        pkceCodeVerifier: authorization.pkce!.codeVerifier,
        redirectUri: REDIRECT_URI,
        dpop: {
          signer: signerOf(dpopKey),
          ...(authorization.dpop?.nonce ? { nonce: authorization.dpop.nonce } : {}),
        },
      });
      assert.equal(token.accessTokenResponse.token_type, 'DPoP');
    });
  });
}
