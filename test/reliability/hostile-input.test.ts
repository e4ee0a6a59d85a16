import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createClient } from '../../src/clients/client-admin.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { createKeyRing } from '../../src/keys/signing-keys.ts';
import { type LoggedInUser, logInUser, registerPersonContext } from '../credentials/helpers.ts';
import { createStockIssuer, personCredential } from '../credentials/stock-issuer.ts';
import { holderJwkOf } from '../helpers/issuers/holder.ts';
import { makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { createJwtVcIssuer } from '../helpers/issuers/jwt-vc-issuer.ts';
import { issueMdoc } from '../helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc } from '../helpers/issuers/sd-jwt-issuer.ts';
import { leaksInternals, startTestServer, type TestServer } from '../helpers/server.ts';
import { type RelyingParty, registerRelyingParty } from '../oidc/flow-helpers.ts';

/**
 * Hostile input (issue 7): random and malformed requests to every endpoint. Whatever arrives,
 * the answer is a 4xx (or the endpoint's normal success/redirect) with the project's error body,
 * never a 5xx or an internal detail, and the server keeps serving. FUZZ_RUNS scales the run
 * (default: 10,000 requests in all); FUZZ_SEED replays one.
 */
const SCALE = Number(process.env['FUZZ_RUNS'] ?? '10000') / 10_000;
const seed = process.env['FUZZ_SEED'] ? Number(process.env['FUZZ_SEED']) : Date.now() % 2 ** 31;
const runs = (n: number) => ({ numRuns: Math.max(1, Math.round(n * SCALE)), seed, endOnFailure: true });

/** fc.assert, with a failure message short enough to read (counterexamples can be 70 kB strings). */
async function check<T>(property: fc.IAsyncProperty<T>, parameters: ReturnType<typeof runs>): Promise<void> {
  const details = await fc.check(property, parameters);
  if (details.failed) {
    const cause =
      details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(
      `property failed (seed ${details.seed}, path ${details.counterexamplePath}): ${cause.slice(0, 1500)}`,
    );
  }
}

// Strings a parser or a database might stumble on.
const nasty = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc
    .array(fc.integer({ min: 0xd800, max: 0xdfff }), { minLength: 1, maxLength: 4 })
    .map((codes) => String.fromCharCode(...codes)),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\u202e',
    '💥',
    "'; drop table users; --",
    '../../etc/passwd',
    '%00',
    '<script>',
    '{"$gt":""}',
    '__proto__',
    'constructor',
    '9'.repeat(400),
    'a'.repeat(70_000),
    '-1',
    '0',
    '1e309',
    'NaN',
    'null',
  ),
);
/** A header can only carry bytes: the string's UTF-8 as Latin-1, without the characters HTTP forbids. */
const asHeader = (text: string) =>
  Buffer.from(text.toWellFormed())
    .toString('latin1')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
    .replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, '');

const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  nasty,
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(null, true, -1, 0, 2 ** 53, 1.5, [], {}, [[[]]]),
);

/** A valid body with one field replaced, removed, or an unknown field added; or any JSON. */
function mutated(valid: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(valid);
  return fc.oneof(
    fc.tuple(fc.constantFrom(...keys), nastyValue).map(([key, value]) => ({ ...valid, [key]: value })),
    fc.constantFrom(...keys).map((key) => {
      const { [key]: _gone, ...rest } = valid;
      return rest;
    }),
    fc.tuple(nasty, nastyValue).map(([key, value]) => ({ ...valid, [key]: value })),
    fc.jsonValue({ maxDepth: 4 }),
  );
}

/** Deep nesting and bodies that are not JSON at all. */
const rawBodies = fc.oneof(
  fc.integer({ min: 100, max: 5000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
  fc.integer({ min: 100, max: 5000 }).map((depth) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
  fc.string({ maxLength: 200 }),
  fc.constantFrom(
    '{',
    '{"a":1,}',
    '\u0000',
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{}}}',
    'null',
    '[]',
  ),
);

/** Any value as a form body: its members (or the value itself) as text. */
function formOf(body: unknown): string {
  const entries = Object.entries(body && typeof body === 'object' ? body : { x: body });
  // JSON for objects: fast-check makes objects without a prototype, which String() cannot convert.
  const text = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v)));
  return new URLSearchParams(entries.map(([k, v]): [string, string] => [k, text(v)])).toString();
}

interface Probe {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

describe('hostile input: every endpoint answers 4xx with the error body, never 5xx', () => {
  let server: TestServer;
  let masterToken: string;
  let subClientId: number;
  let rp: RelyingParty;
  let user: LoggedInUser;
  let credentialId: string;
  let interactionPath: string;
  let forgedTokens: string[];
  let sent = 0;

  before(async () => {
    server = await startTestServer('sqlite', {
      API_RATE_LIMIT: '0',
      TRANSACTION_DATA_TYPES: 'urn:example:payment',
    });
    masterToken = (await server.createMaster('Fuzz master')).token;
    const sub = await server.request('POST', '/v1/sub_client', {
      headers: { 'x-api-token': masterToken },
      body: {
        name: 'Fuzz',
        address_1: '1 Road',
        country: 'GB',
        province: 'GB-ENG',
        city: 'London',
        timezone: 'Europe/London',
        domain: 'fuzz.example.org',
        subdomain: 'fuzz',
      },
    });
    subClientId = sub.body.data.client_id;
    rp = await registerRelyingParty(server);
    user = await logInUser(server, rp, privateKeyToAccount(generatePrivateKey()));
    await registerPersonContext(server);
    const issuer = await createStockIssuer();
    const vc = await issuer.issue(personCredential(issuer.did, user.did));
    credentialId = vc['id'] as string;
    const stored = await server.request('POST', '/v1/vc/issuer/store', {
      headers: { 'x-api-token': masterToken },
      body: { vc },
    });
    // The proof and interaction fuzzing below need a real credential and a real log-in.
    assert.equal(stored.status, 201, stored.text);
    await createClient(server.database.db, {
      name: 'Verifier',
      verifier: true,
      redirectUris: ['https://v.example/cb'],
    });
    const authorize = await fetch(
      `${server.url}/v2/openidc/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: String(rp.clientId),
        redirect_uri: 'https://rp.example/callback',
        scope: 'openid',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      })}`,
      { redirect: 'manual' },
    );
    assert.equal(authorize.status, 303);
    interactionPath = authorize.headers.get('location')!;
    assert.match(interactionPath, /^\/interaction\//);

    // Access tokens that must all be refused: unsigned, foreign key, and the server's own key
    // with a wrong audience, issuer, type, expiry or subject.
    const keys = createKeyRing(server.database.db, createFieldCipher(server.masterKey), {
      retireAfterSeconds: 60,
    });
    const own = await keys.current();
    const foreign = (await generateKeyPair('ES256')).privateKey;
    const now = Math.floor(Date.now() / 1000);
    const claims = { client_id: String(rp.clientId), scope: 'openid' };
    const sign = (
      key: Parameters<SignJWT['sign']>[0],
      edit: (jwt: SignJWT) => SignJWT,
      kid = own.kid,
      typ = 'at+jwt',
    ) =>
      edit(
        new SignJWT(claims)
          .setProtectedHeader({ alg: 'ES256', typ, kid })
          .setIssuer(server.url)
          .setSubject(String(user.userId))
          .setAudience(String(rp.clientId))
          .setIssuedAt(now)
          .setJti('fuzz')
          .setExpirationTime(now + 600),
      ).sign(key);
    forgedTokens = [
      new UnsecuredJWT({
        ...claims,
        sub: String(user.userId),
        aud: String(rp.clientId),
        iss: server.url,
      }).encode(),
      await sign(foreign, (j) => j),
      await sign(foreign, (j) => j, 'unknown-kid'),
      await sign(own.privateKey, (j) => j.setAudience('other')),
      await sign(own.privateKey, (j) => j.setIssuer('https://evil.example')),
      await sign(own.privateKey, (j) => j.setExpirationTime(now - 10)),
      await sign(own.privateKey, (j) => j, own.kid, 'JWT'),
      await sign(own.privateKey, (j) => j.setSubject('999999')),
      await sign(own.privateKey, (j) => j.setSubject('not-a-number')),
      `${user.accessToken.slice(0, -4)}AAAA`,
      `${user.accessToken}.extra`,
    ];
  });
  after(() => server.close());

  async function send(probe: Probe): Promise<void> {
    sent++;
    const response = await fetch(server.url + probe.path, {
      method: probe.method,
      headers: probe.headers,
      body: probe.body,
      redirect: 'manual',
    }).catch((error: Error & { cause?: { code?: string; message?: string } }) => {
      throw new Error(
        `${probe.method} ${probe.path.slice(0, 120)} (${probe.path.length} chars): ${error.cause?.code ?? ''} ${error.cause?.message ?? error.message}`,
      );
    });
    const text = await response.text();
    const where = `${probe.method} ${probe.path.slice(0, 200)} → ${response.status}: ${text.slice(0, 300)}`;
    assert.ok(response.status < 500, where);
    assert.equal(leaksInternals(text), false, where);
    const type = response.headers.get('content-type') ?? '';
    if (response.status >= 400 && type.includes('application/json')) {
      const body = JSON.parse(text);
      assert.equal(typeof body.error, 'string', where);
      assert.equal(typeof body.error_description, 'string', where);
    }
  }

  const json = (token: Record<string, string>) => ({ 'content-type': 'application/json', ...token });
  const api = () => json({ 'x-api-token': masterToken });
  const bearer = () => json({ authorization: user.bearer.authorization });

  test('the API token endpoints: sub-clients and users', async () => {
    const validSubClient = {
      name: 'Shop',
      address_1: '1 High St',
      country: 'GB',
      province: 'GB-ENG',
      city: 'London',
      timezone: 'Europe/London',
      domain: 'shop.example.org',
      subdomain: 'shop',
    };
    await check(
      fc.asyncProperty(mutated(validSubClient), async (body) =>
        send({ method: 'POST', path: '/v1/sub_client', headers: api(), body: JSON.stringify(body) }),
      ),
      runs(1000),
    );
    await check(
      fc.asyncProperty(
        fc.oneof(nasty, fc.constant(String(subClientId))),
        mutated(validSubClient),
        async (id, body) =>
          send({
            method: 'PUT',
            path: `/v1/sub_client/${encodeURIComponent(id.toWellFormed())}`,
            headers: api(),
            body: JSON.stringify(body),
          }),
      ),
      runs(800),
    );
    await check(
      fc.asyncProperty(nasty, nasty, nasty, async (page, perPage, extra) =>
        send({
          method: 'GET',
          path: `/v1/sub_client?${new URLSearchParams({ page, per_page: perPage, [extra || 'x']: extra })}`,
          headers: { 'x-api-token': masterToken, 'x-api-subclient-id': asHeader(extra) },
        }),
      ),
      runs(700),
    );
    const validUser = {
      profile: { email_address: 'ada@example.org', first_name: 'Ada', last_name: 'Lovelace' },
    };
    await check(
      fc.asyncProperty(
        fc.oneof(
          mutated(validUser),
          mutated(validUser.profile).map((profile) => ({ profile })),
          fc.tuple(mutated(validUser.profile), nastyValue).map(([profile, wallet]) => ({ profile, wallet })),
        ),
        async (body) =>
          send({ method: 'POST', path: '/v1/user/create', headers: api(), body: JSON.stringify(body) }),
      ),
      runs(1200),
    );
  });

  test('the OpenID Provider: authorize, token, userinfo with forged tokens', async () => {
    const validToken = {
      grant_type: 'authorization_code',
      code: 'abc',
      client_id: String(rp.clientId),
      client_secret: rp.clientSecret,
      redirect_uri: 'https://rp.example/callback',
    };
    await check(
      fc.asyncProperty(mutated(validToken), fc.boolean(), async (body, asForm) =>
        send({
          method: 'POST',
          path: '/v2/openidc/token',
          headers: { 'content-type': asForm ? 'application/x-www-form-urlencoded' : 'application/json' },
          body: asForm ? formOf(body) : JSON.stringify(body),
        }),
      ),
      runs(1000),
    );
    await check(
      fc.asyncProperty(fc.dictionary(nasty, nasty, { maxKeys: 8 }), async (query) =>
        send({ method: 'GET', path: `/v2/openidc/authorize?${new URLSearchParams(query)}` }),
      ),
      runs(600),
    );
    await check(
      fc.asyncProperty(fc.oneof(fc.constantFrom(...forgedTokens), nasty), async (token) => {
        for (const path of ['/v2/openidc/user', '/v1/openidc/credentials']) {
          await send({ method: 'GET', path, headers: { authorization: asHeader(`Bearer ${token}`) } });
        }
      }),
      runs(300),
    );
  });

  test('refresh grant, DPoP proofs and pushed authorization requests', async () => {
    const key = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(key.publicKey);
    const proofOf = (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
      new SignJWT({ jti: String(Math.random()), iat: Math.floor(Date.now() / 1000), ...claims })
        .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk, ...header })
        .sign(key.privateKey);
    const proofs = [
      await proofOf({ htm: 'POST', htu: `${server.url}/v2/openidc/token` }),
      await proofOf({ htm: 'GET', htu: `${server.url}/v2/openidc/user`, nonce: 'x' }),
      await proofOf(
        { htm: 'POST', htu: `${server.url}/v2/openidc/par` },
        { jwk: await exportJWK(key.privateKey) },
      ),
      await proofOf({ htm: 'GET' }, { typ: 'JWT' }),
      'eyJhbGciOiJub25lIn0.e30.',
    ];
    const dpopHeader = fc.oneof(fc.constantFrom(...proofs), nasty.map(asHeader));
    const validRefresh = {
      grant_type: 'refresh_token',
      refresh_token: 'cfr_rt_unknown',
      scope: 'openid',
      client_id: String(rp.clientId),
      client_secret: rp.clientSecret,
    };
    await check(
      fc.asyncProperty(
        mutated(validRefresh),
        fc.boolean(),
        fc.option(dpopHeader),
        async (body, asForm, dpop) =>
          send({
            method: 'POST',
            path: '/v2/openidc/token',
            headers: {
              'content-type': asForm ? 'application/x-www-form-urlencoded' : 'application/json',
              ...(dpop === null ? {} : { dpop }),
            },
            body: asForm ? formOf(body) : JSON.stringify(body),
          }),
      ),
      runs(600),
    );
    const validPush = {
      client_id: String(rp.clientId),
      client_secret: rp.clientSecret,
      response_type: 'code',
      redirect_uri: 'https://rp.example/callback',
      scope: 'openid offline_access',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      dpop_jkt: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    };
    await check(
      fc.asyncProperty(mutated(validPush), fc.boolean(), fc.option(dpopHeader), async (body, asForm, dpop) =>
        send({
          method: 'POST',
          path: '/v2/openidc/par',
          headers: {
            'content-type': asForm ? 'application/x-www-form-urlencoded' : 'application/json',
            ...(dpop === null ? {} : { dpop }),
          },
          body: asForm ? formOf(body) : JSON.stringify(body),
        }),
      ),
      runs(600),
    );
    await check(
      fc.asyncProperty(fc.oneof(fc.constantFrom(...forgedTokens), nasty), dpopHeader, async (token, dpop) => {
        for (const path of ['/v2/openidc/user', '/v1/openidc/credentials']) {
          await send({ method: 'GET', path, headers: { authorization: asHeader(`DPoP ${token}`), dpop } });
        }
      }),
      runs(300),
    );
    await check(
      fc.asyncProperty(
        fc.oneof(
          nasty,
          nasty.map((text) => `urn:ietf:params:oauth:request_uri:${text}`),
        ),
        fc.oneof(fc.constant(String(rp.clientId)), nasty),
        async (requestUri, clientId) =>
          send({
            method: 'GET',
            path: `/v2/openidc/authorize?${new URLSearchParams({ client_id: clientId, request_uri: requestUri })}`,
          }),
      ),
      runs(300),
    );
  });

  test('credentials: store, proof', async () => {
    const validProof = { vcIdFields: { [credentialId]: ['/credentialSubject/first_name'] }, options: {} };
    await check(
      fc.asyncProperty(
        fc.oneof(
          mutated(validProof),
          fc
            .dictionary(nasty, fc.array(nasty, { maxLength: 5 }), { maxKeys: 4 })
            .map((vcIdFields) => ({ vcIdFields })),
        ),
        async (body) =>
          send({
            method: 'POST',
            path: '/v1/openidc/credentials/proof',
            headers: bearer(),
            body: JSON.stringify(body),
          }),
      ),
      runs(1000),
    );
    const vc = {
      '@context': ['https://www.w3.org/ns/credentials/v2'],
      id: 'urn:uuid:1',
      type: ['VerifiableCredential'],
      issuer: 'did:key:zUC7',
      credentialSubject: { id: user.did },
      proof: {
        type: 'DataIntegrityProof',
        cryptosuite: 'bbs-2023',
        proofPurpose: 'assertionMethod',
        verificationMethod: 'did:key:zUC7#zUC7',
        proofValue: 'u2V0C',
      },
    };
    await check(
      fc.asyncProperty(
        fc.oneof(
          mutated(vc).map((v) => ({ vc: v })),
          mutated(vc.proof).map((proof) => ({ vc: { ...vc, proof } })),
          mutated(vc.credentialSubject).map((credentialSubject) => ({ vc: { ...vc, credentialSubject } })),
        ),
        async (body) =>
          send({ method: 'POST', path: '/v1/vc/issuer/store', headers: api(), body: JSON.stringify(body) }),
      ),
      runs(1000),
    );
  });

  test('credentials: compact formats in the store (dc+sd-jwt, mso_mdoc, jwt_vc_json)', async () => {
    const identity = await makeIssuerIdentity();
    const holderJwk = holderJwkOf(user.did);
    const genuine = [
      await issueSdJwtVc(identity, { holderJwk }),
      await issueMdoc(identity, { deviceJwk: holderJwk }),
      await (await createJwtVcIssuer()).issue({ subject: user.did }),
    ];
    const format = fc.option(
      fc.oneof(fc.constantFrom('ldp_vc', 'dc+sd-jwt', 'mso_mdoc', 'jwt_vc_json'), nasty),
      {
        nil: undefined,
      },
    );
    const compact = fc.oneof(
      // Truncated, cut at every kind of place, and with bytes flipped.
      fc.tuple(fc.constantFrom(...genuine), fc.nat()).map(([value, at]) => value.slice(0, at % value.length)),
      fc
        .tuple(fc.constantFrom(...genuine), fc.nat(), fc.constantFrom('A', '~', '.', '_', '-', '='))
        .map(
          ([value, at, c]) =>
            `${value.slice(0, at % value.length)}${c}${value.slice((at % value.length) + 1)}`,
        ),
      // Disclosures: garbage, huge numbers of them, nested arrays.
      fc
        .tuple(fc.constantFrom(genuine[0]!), fc.array(nasty, { maxLength: 8 }))
        .map(
          ([value, extra]) =>
            `${value}${extra.map((e) => Buffer.from(JSON.stringify(['s', 'k', e])).toString('base64url')).join('~')}~`,
        ),
      fc
        .integer({ min: 1000, max: 5000 })
        .map((n) => `${genuine[0]!.split('~')[0]}~${'WyJhIiwiYiIsMV0~'.repeat(n)}`),
      fc
        .jsonValue({ maxDepth: 3 })
        .map(
          (v) =>
            `${Buffer.from(JSON.stringify({ typ: 'dc+sd-jwt', alg: 'ES256' })).toString('base64url')}.${Buffer.from(JSON.stringify(v)).toString('base64url')}.c2ln~`,
        ),
      fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
      nasty,
    );
    await check(
      fc.asyncProperty(compact, format, async (vc, f) =>
        send({
          method: 'POST',
          path: '/v1/vc/issuer/store',
          headers: api(),
          body: JSON.stringify(f === undefined ? { vc } : { vc, format: f }),
        }),
      ),
      runs(600),
    );
  });

  test('the hosted wallet and the interaction', async () => {
    await check(
      fc.asyncProperty(
        fc.record({
          response_type: fc.oneof(fc.constant('vp_token'), nasty),
          response_mode: fc.oneof(fc.constantFrom('fragment', 'direct_post', 'direct_post.jwt'), nasty),
          client_id: fc.oneof(
            fc.constantFrom(
              '1',
              'x509_hash:abc',
              'redirect_uri:https://v.example/cb',
              'x509_san_dns:v.example',
              'verifier_attestation:v.example',
              'decentralized_identifier:did:web:v.example',
              'decentralized_identifier:did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK',
            ),
            nasty,
          ),
          redirect_uri: fc.oneof(fc.constant('https://v.example/cb'), nasty),
          nonce: nasty,
          dcql_query: fc.oneof(
            fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
            nasty,
          ),
          client_metadata: fc.oneof(
            fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
            nasty,
          ),
          request: nasty,
        }),
        async (params) =>
          send({ method: 'GET', path: `/v1/oid4vp/authorize?${new URLSearchParams(params)}` }),
      ),
      runs(800),
    );
    // Signed request shapes of every verifier identity: headers (x5c, jwt, kid) and claims
    // (transaction_data among them) arbitrary, signatures garbage; none may get past a check.
    const encoded = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const header = fc.record(
      {
        typ: fc.oneof(fc.constant('oauth-authz-req+jwt'), nasty),
        alg: fc.oneof(fc.constantFrom('ES256', 'EdDSA', 'none', 'HS256'), nasty),
        x5c: fc.oneof(fc.array(fc.base64String({ maxLength: 200 }), { maxLength: 3 }), nastyValue),
        jwt: fc.oneof(
          fc
            .tuple(fc.jsonValue({ maxDepth: 2 }), fc.jsonValue({ maxDepth: 3 }))
            .map(([h, p]) => `${encoded(h)}.${encoded(p)}.c2ln`),
          nastyValue,
        ),
        kid: fc.oneof(fc.constantFrom('did:web:v.example#k', 'did:key:z6Mk#z6Mk', 'did:jwk:e30#0'), nasty),
      },
      { requiredKeys: ['typ', 'alg'] },
    );
    const transactionData = fc.oneof(
      fc.array(
        fc.oneof(
          fc.jsonValue({ maxDepth: 3 }).map(encoded),
          fc
            .record({
              type: fc.oneof(fc.constant('urn:example:payment'), nasty),
              credential_ids: fc.oneof(fc.constant(['pid']), fc.array(nasty, { maxLength: 3 })),
              transaction_data_hashes_alg: fc.oneof(fc.constant(['sha-256']), nastyValue),
            })
            .map(encoded),
          nasty,
        ),
        { maxLength: 4 },
      ),
      nastyValue,
    );
    const clientIds = fc.constantFrom(
      'x509_san_dns:v.example',
      'verifier_attestation:v.example',
      'decentralized_identifier:did:jwk:e30',
      'decentralized_identifier:did:web:v.example',
    );
    await check(
      fc.asyncProperty(
        clientIds,
        header,
        fc.record({ transaction_data: transactionData, exp: fc.integer(), response_mode: nasty }),
        async (clientId, h, claims) =>
          send({
            method: 'GET',
            path: `/v1/oid4vp/authorize?${new URLSearchParams({
              client_id: clientId,
              request: `${encoded(h)}.${encoded({ client_id: clientId, ...claims })}.c2ln`,
            })}`,
          }),
      ),
      runs(400),
    );
    await check(
      fc.asyncProperty(transactionData, async (data) =>
        send({
          method: 'GET',
          path: `/v1/oid4vp/authorize?${new URLSearchParams({
            client_id: 'redirect_uri:https://v.example/cb',
            response_type: 'vp_token',
            response_mode: 'fragment',
            nonce: 'n-1',
            dcql_query: JSON.stringify({
              credentials: [{ id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: ['urn:v'] } }],
            }),
            client_metadata: JSON.stringify({ vp_formats_supported: { 'dc+sd-jwt': {} } }),
            transaction_data: typeof data === 'string' ? data : JSON.stringify(data),
          })}`,
        }),
      ),
      runs(300),
    );
    await check(
      fc.asyncProperty(
        fc.constantFrom('login/wallet', 'login/email', 'login/email/verify', 'consent', 'logout', 'sign-out'),
        fc.oneof(
          fc.constant(interactionPath),
          nasty.map((id) => `/interaction/${encodeURIComponent(id.toWellFormed())}`),
        ),
        fc.oneof(
          nastyValue,
          // The consent's own fields, each of any shape, for an offer or a presentation alike.
          fc.record(
            {
              decision: fc.oneof(fc.constantFrom('approve', 'decline'), nastyValue),
              credential_configuration_ids: fc.oneof(fc.array(nasty, { maxLength: 12 }), nastyValue),
              tx_code: nastyValue,
              account: nastyValue,
            },
            { requiredKeys: [] },
          ),
        ),
        async (step, path, body) =>
          send({ method: 'POST', path: `${path}/${step}`, headers: json({}), body: JSON.stringify(body) }),
      ),
      runs(600),
    );
  });

  test('revocation, end session, credential deletion and the wallet page', async () => {
    const held = async () =>
      (await server.request('GET', '/v1/openidc/credentials', { headers: user.bearer })).body.data
        .length as number;
    const before = await held();
    const validRevocation = {
      token: user.accessToken,
      token_type_hint: 'access_token',
      client_id: String(rp.clientId),
      client_secret: 'wrong-secret-so-nothing-is-revoked',
    };
    await check(
      fc.asyncProperty(mutated(validRevocation), fc.boolean(), async (body, asForm) =>
        send({
          method: 'POST',
          path: '/v2/openidc/revoke',
          headers: { 'content-type': asForm ? 'application/x-www-form-urlencoded' : 'application/json' },
          body: asForm ? formOf(body) : JSON.stringify(body),
        }),
      ),
      runs(600),
    );
    const endSession = fc.record(
      {
        id_token_hint: fc.oneof(fc.constantFrom(...forgedTokens), nasty),
        client_id: fc.oneof(fc.constant(String(rp.clientId)), nasty),
        post_logout_redirect_uri: fc.oneof(fc.constant('https://rp.example/after'), nasty),
        state: nasty,
      },
      { requiredKeys: [] },
    );
    await check(
      fc.asyncProperty(endSession, fc.boolean(), async (params, asPost) =>
        send(
          asPost
            ? {
                method: 'POST',
                path: '/v2/openidc/logout',
                headers: { 'content-type': 'application/x-www-form-urlencoded' },
                body: formOf(params),
              }
            : {
                method: 'GET',
                path: `/v2/openidc/logout?${new URLSearchParams(params as Record<string, string>)}`,
              },
        ),
      ),
      runs(600),
    );
    await check(
      fc.asyncProperty(
        nasty,
        fc.oneof(fc.constantFrom(...forgedTokens, user.accessToken), nasty),
        async (id, token) =>
          send({
            method: 'DELETE',
            path: `/v1/openidc/credentials/${encodeURIComponent(id.toWellFormed())}`,
            headers: { authorization: asHeader(`Bearer ${token}`) },
          }),
      ),
      runs(600),
    );
    await check(
      fc.asyncProperty(
        fc.constantFrom(
          'GET /wallet',
          'DELETE /wallet/credentials/',
          'POST /wallet/sign-out',
          'GET /wallet/signed-out',
        ),
        nasty,
        nasty,
        async (route, cookie, token) => {
          const [method, path] = route.split(' ') as [string, string];
          await send({
            method,
            path: path.endsWith('/') ? `${path}${encodeURIComponent(token.toWellFormed())}` : path,
            headers: {
              cookie: asHeader(`coffer_session=${cookie}`),
              'x-csrf-token': asHeader(token),
              accept: 'application/json',
            },
          });
        },
      ),
      runs(600),
    );
    // None of it revoked the user's token or removed a credential.
    assert.ok(before > 0);
    assert.equal(await held(), before);
  });

  test('the OpenID4VCI offer endpoint, callback and issuance list', async () => {
    // Issuer addresses that are refused before any connection (no private targets here), so that
    // the fuzzing never waits on DNS or a network it cannot reach.
    const issuerUrl = fc.oneof(
      fc.constantFrom(
        'https://127.0.0.1:1/issuer',
        'https://10.0.0.1',
        'http://issuer.example',
        'https://localhost/x',
      ),
      nasty.filter((text) => !/https:/i.test(text)),
    );
    const offer = fc.oneof(
      fc.record(
        {
          credential_issuer: fc.oneof(issuerUrl, nastyValue),
          credential_configuration_ids: fc.oneof(fc.array(nasty, { maxLength: 3 }), nastyValue),
          grants: fc.oneof(
            fc.record({
              'urn:ietf:params:oauth:grant-type:pre-authorized_code': fc.record({
                'pre-authorized_code': nastyValue,
                tx_code: nastyValue,
              }),
            }),
            nastyValue,
          ),
        },
        { requiredKeys: [] },
      ),
      fc.jsonValue({ maxDepth: 3 }),
    );
    await check(
      fc.asyncProperty(
        fc.record(
          {
            credential_offer: fc.oneof(
              offer.map((o) => JSON.stringify(o)),
              nasty,
            ),
            credential_offer_uri: issuerUrl,
            extra: nasty,
          },
          { requiredKeys: [] },
        ),
        fc.constantFrom('application/json', 'text/html', '*/*'),
        async (params, accept) =>
          send({
            method: 'GET',
            path: `/v1/oid4vci/offer?${new URLSearchParams(params)}`,
            headers: { accept },
          }),
      ),
      runs(500),
    );
    await check(
      fc.asyncProperty(
        fc.record(
          { credential_issuer: fc.oneof(issuerUrl, nasty), credential_configuration_id: nasty, extra: nasty },
          { requiredKeys: [] },
        ),
        fc.constantFrom('application/json', 'text/html', '*/*'),
        async (params, accept) =>
          send({
            method: 'GET',
            path: `/v1/oid4vci/start?${new URLSearchParams(params)}`,
            headers: { accept },
          }),
      ),
      runs(300),
    );
    await check(
      fc.asyncProperty(
        fc.record(
          {
            code: nasty,
            state: fc.oneof(
              nasty,
              nasty.map((t) => `${t}.${t}`),
            ),
            iss: nasty,
            error: nasty,
            error_description: nasty,
          },
          { requiredKeys: [] },
        ),
        fc.constantFrom('application/json', 'text/html'),
        async (params, accept) =>
          send({
            method: 'GET',
            path: `/v1/oid4vci/callback?${new URLSearchParams(params)}`,
            headers: { accept },
          }),
      ),
      runs(300),
    );
    await check(
      fc.asyncProperty(nasty, async (cookie) =>
        send({
          method: 'GET',
          path: '/v1/oid4vci/issuances',
          headers: { cookie: `coffer_session=${asHeader(cookie)}` },
        }),
      ),
      runs(100),
    );
  });

  test('malformed bodies, wrong media types, deep nesting and oversized headers', async () => {
    const targets = [
      ['POST', '/v1/sub_client'],
      ['POST', '/v1/user/create'],
      ['POST', '/v1/vc/issuer/store'],
      ['POST', '/v1/openidc/credentials/proof'],
      ['POST', '/v2/openidc/token'],
      ['PUT', `/v1/sub_client/${subClientId}`],
    ] as const;
    await check(
      fc.asyncProperty(
        fc.constantFrom(...targets),
        rawBodies,
        fc.constantFrom(
          'application/json',
          'text/plain',
          'application/xml',
          'multipart/form-data; boundary=x',
          '',
        ),
        async ([method, path], body, type) =>
          send({
            method,
            path,
            headers: {
              'x-api-token': masterToken,
              authorization: user.bearer.authorization,
              ...(type ? { 'content-type': type } : {}),
            },
            body,
          }),
      ),
      runs(900),
    );
    // A credential of the right shape whose claim nests deeply reaches encoding and JSON-LD.
    for (const depth of [500, 5000, 20_000]) {
      const claim = `${'{"n":'.repeat(depth)}"leaf"${'}'.repeat(depth)}`;
      const vc = {
        '@context': ['https://www.w3.org/ns/credentials/v2', 'https://issuer.example/contexts/person/v1'],
        id: `urn:uuid:deep-${depth}`,
        type: ['VerifiableCredential'],
        issuer:
          'did:key:zUC7DerdEmfZ8f4pFajXgGwJoMkV1ofMTmEG5UoNvnWiPiLuGKNeqgRpLH2TV4Xe5mJ2cXV76gRN7LFQwapF1VFu6x2yrr5ci1mXqC1WNUrnHnLgvfZfMH7h6xP6qsf9EKRQrPQ',
        credentialSubject: { id: user.did, first_name: 'CLAIM' },
        proof: {
          type: 'DataIntegrityProof',
          cryptosuite: 'bbs-2023',
          proofPurpose: 'assertionMethod',
          verificationMethod:
            'did:key:zUC7DerdEmfZ8f4pFajXgGwJoMkV1ofMTmEG5UoNvnWiPiLuGKNeqgRpLH2TV4Xe5mJ2cXV76gRN7LFQwapF1VFu6x2yrr5ci1mXqC1WNUrnHnLgvfZfMH7h6xP6qsf9EKRQrPQ#zUC7DerdEmfZ8f4pFajXgGwJoMkV1ofMTmEG5UoNvnWiPiLuGKNeqgRpLH2TV4Xe5mJ2cXV76gRN7LFQwapF1VFu6x2yrr5ci1mXqC1WNUrnHnLgvfZfMH7h6xP6qsf9EKRQrPQ',
          proofValue: 'u2V0ChVhQ',
        },
      };
      const body = JSON.stringify({ vc }).replace('"CLAIM"', claim);
      await send({ method: 'POST', path: '/v1/vc/issuer/store', headers: api(), body });
    }
    const big = await fetch(`${server.url}/v1/sub_client`, {
      headers: { 'x-api-token': masterToken, 'x-filler': 'a'.repeat(20_000) },
    });
    assert.ok(big.status < 500, `a 20 kB header: ${big.status}`);
    const huge = await fetch(`${server.url}/v1/sub_client`, {
      headers: { 'x-filler': 'a'.repeat(100_000) },
    }).catch(() => ({ status: 431 }));
    assert.ok(huge.status === 431 || huge.status === 400, `oversized headers: ${huge.status}`);
  });

  test(`the server still serves after ${'every'} request (${'≥'} 10,000 at the default scale)`, async () => {
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    assert.equal(
      (await server.request('GET', '/v1/sub_client', { headers: { 'x-api-token': masterToken } })).status,
      200,
    );
    console.log(`hostile input: ${sent} requests sent (seed ${seed})`);
    assert.ok(sent >= 10_000 * SCALE * 0.99, `only ${sent} requests were sent`);
  });
});
