import assert from 'node:assert/strict';
import { type JsonWebKey, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import {
  CompactEncrypt,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  SignJWT,
  UnsecuredJWT,
} from 'jose';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createClient } from '../../src/clients/client-admin.ts';
import { enableFederation } from '../../src/federation/federation-service.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import { createKeyRing } from '../../src/keys/signing-keys.ts';
import { addAdmin, consoleLogin, formToken } from '../console/console-helpers.ts';
import { type LoggedInUser, logInUser, registerPersonContext } from '../credentials/helpers.ts';
import { createStockIssuer, personCredential } from '../credentials/stock-issuer.ts';
import { coffer } from '../helpers/cli.ts';
import { holderJwkOf } from '../helpers/issuers/holder.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { createJwtVcIssuer } from '../helpers/issuers/jwt-vc-issuer.ts';
import { issueMdoc, MDL_DOCTYPE, MDL_NAMESPACE } from '../helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { leaksInternals, startTestServer, type TestServer } from '../helpers/server.ts';
import { type RelyingParty, registerRelyingParty } from '../oidc/flow-helpers.ts';
import { presentSdJwt } from '../verifier/verifier-helpers.ts';

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

/** JSON as base64url, as JOSE headers and payloads and transaction data items carry it. */
const encoded = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/**
 * A wallet's answer names its request (nonce, state, encryption key), which exists only once the
 * property runs; these stand in for those parts in the generated values, and `materialise` makes
 * them for the request at hand.
 */
const OWN_STATE = Symbol('the request state');
interface Edit {
  cut: number | null;
  flip: [number, string] | null;
  disclosures: string[];
}
/** A genuine SD-JWT presentation bound to the request, then cut, flipped or given more disclosures. */
class GenuinePresentation {
  readonly edit: Edit;
  constructor(edit: Edit) {
    this.edit = edit;
  }
}
/** A value sent as JSON text (the vp_token of a form). */
class AsJsonText {
  readonly value: unknown;
  constructor(value: unknown) {
    this.value = value;
  }
}
/** Response parameters (or any text) encrypted to the request's own key, `kid` null for its own. */
class EncryptedToRequest {
  readonly parameters: unknown;
  readonly enc: string;
  readonly kid: string | null | undefined;
  constructor(input: { parameters: unknown; enc: string; kid: string | null | undefined }) {
    this.parameters = input.parameters;
    this.enc = input.enc;
    this.kid = input.kid;
  }
}
interface AnswerContext {
  state: string | undefined;
  nonce: string;
  /** The audience a presentation names: the client_id, or origin:… over the DC API. */
  aud: string;
  encryptionJwk: JWK | undefined;
  credential: string;
  holder: Awaited<ReturnType<typeof generateKeyPair>>;
  /** The id the request's dc+sd-jwt query has in place of `pid` (keys of answers are renamed). */
  pidAs: string;
}

async function materialise(value: unknown, context: AnswerContext): Promise<unknown> {
  if (value === OWN_STATE) return context.state ?? '';
  if (value instanceof AsJsonText) return JSON.stringify(await materialise(value.value, context)) ?? 'null';
  if (value instanceof GenuinePresentation) {
    const { cut, flip, disclosures } = value.edit;
    let text = await presentSdJwt(context.credential, { given_name: true }, context.holder, {
      aud: context.aud,
      nonce: context.nonce,
    });
    if (disclosures.length) {
      const parts = text.split('~');
      const kb = parts.pop()!;
      text = [...parts, ...disclosures.map((d) => encoded(['c2FsdA', 'given_name', d])), kb].join('~');
    }
    if (cut !== null) text = text.slice(0, cut % text.length);
    if (flip && text.length) {
      const at = flip[0] % text.length;
      text = `${text.slice(0, at)}${flip[1]}${text.slice(at + 1)}`;
    }
    return text;
  }
  if (value instanceof EncryptedToRequest) {
    if (!context.encryptionJwk) return 'no-key-to-encrypt-to';
    const plaintext =
      typeof value.parameters === 'string'
        ? value.parameters
        : (JSON.stringify(await materialise(value.parameters, context)) ?? 'null');
    const kid = value.kid === null ? context.encryptionJwk.kid : value.kid;
    return new CompactEncrypt(new TextEncoder().encode(plaintext))
      .setProtectedHeader({ alg: 'ECDH-ES', enc: value.enc, ...(kid === undefined ? {} : { kid }) })
      .encrypt(await importJWK(context.encryptionJwk, 'ECDH-ES'));
  }
  if (Array.isArray(value)) return Promise.all(value.map((item) => materialise(item, context)));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      await Promise.all(
        Object.entries(value).map(async ([k, v]) => [
          k === 'pid' ? context.pidAs : k,
          await materialise(v, context),
        ]),
      ),
    );
  }
  return value;
}

/** What the verifier's fuzzed requests ask for: one query per format, any one of them enough. */
const QUERY_IDS = ['pid', 'mdl', 'vc', 'ldp'] as const;
const VERIFIER_QUERY = {
  credentials: [
    { id: 'pid', format: 'dc+sd-jwt', meta: { vct_values: [PID_VCT] }, claims: [{ path: ['given_name'] }] },
    {
      id: 'mdl',
      format: 'mso_mdoc',
      meta: { doctype_value: MDL_DOCTYPE },
      claims: [{ path: [MDL_NAMESPACE, 'given_name'] }],
    },
    { id: 'vc', format: 'jwt_vc_json', meta: { type_values: [['UniversityDegreeCredential']] } },
    { id: 'ldp', format: 'ldp_vc', meta: { type_values: [['VerifiableCredential']] } },
  ],
  credential_sets: [{ options: [['pid'], ['mdl'], ['vc'], ['ldp']] }],
};
/** VERIFIER_QUERY with its dc+sd-jwt query named `id` (any DCQL id, JavaScript's own names among them). */
const verifierQueryWith = (id: string) => ({
  credentials: VERIFIER_QUERY.credentials.map((query) => (query.id === 'pid' ? { ...query, id } : query)),
  credential_sets: [{ options: [[id], ['mdl'], ['vc'], ['ldp']] }],
});
const ORIGIN = 'https://shop.example';
const OPEN_STATES = ['created', 'retrieved'];

interface Probe {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

describe('hostile input: every endpoint answers 4xx with the error body, never 5xx', () => {
  let server: TestServer;
  let masterToken: string;
  let masterId: number;
  let subClientId: number;
  let rp: RelyingParty;
  let user: LoggedInUser;
  let credentialId: string;
  let interactionPath: string;
  let forgedTokens: string[];
  let otherToken: string;
  let verifierIssuer: IssuerIdentity;
  let holder: Awaited<ReturnType<typeof generateKeyPair>>;
  let sdJwtCredential: string;
  let otherGenuine: string[];
  let verifierIds: { open: string; dcApi: string; sameDevice: string };
  let sent = 0;

  before(async () => {
    server = await startTestServer('sqlite', {
      API_RATE_LIMIT: '0',
      TRANSACTION_DATA_TYPES: 'urn:example:payment',
    });
    const master = await server.createMaster('Fuzz master');
    masterToken = master.token;
    masterId = master.clientId;
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

    // The verifier: the master client made one with the real CLI, as an operator does, and an
    // issuer its requests trust, so that a genuine presentation reaches every check.
    const enabled = await coffer(server, 'verifier', 'enable', '--client', String(master.clientId), '--json');
    assert.equal(enabled.code, 0, enabled.stderr);
    otherToken = (await server.createMaster('Not a verifier')).token;
    verifierIssuer = await makeIssuerIdentity('Fuzz Issuer');
    holder = await generateKeyPair('ES256', { extractable: true });
    const holderJwk = (await exportJWK(holder.publicKey)) as JsonWebKey;
    sdJwtCredential = await issueSdJwtVc(verifierIssuer, { holderJwk });
    otherGenuine = [
      await issueMdoc(verifierIssuer, { deviceJwk: holderJwk }),
      await (await createJwtVcIssuer()).issue({ subject: user.did }),
    ];
    const sameDevice = await openVerifierRequest({
      response_mode: 'direct_post',
      redirect_uri: `${ORIGIN}/done`,
    });
    verifierIds = {
      open: (await openVerifierRequest({ response_mode: 'direct_post' })).id,
      dcApi: (await openVerifierRequest({ response_mode: 'dc_api.jwt', expected_origins: [ORIGIN] })).id,
      sameDevice: sameDevice.id,
    };
    // The same-device request answered, so that reading it needs its response_code.
    const declined = await fetch(`${server.url}/v1/verifier/requests/${sameDevice.id}/response`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ error: 'access_denied', state: sameDevice.context.state! }).toString(),
    });
    assert.equal(declined.status, 200, await declined.text());
  });
  after(() => server.close());

  /**
   * A fresh open request of the fuzz verifier (a well-formed answer settles one), with what its
   * wallet would read from the signed request object: nonce, state, audience, encryption key.
   */
  async function openVerifierRequest(
    body: Record<string, unknown>,
  ): Promise<{ id: string; context: AnswerContext }> {
    const { pidAs = 'pid', ...rest } = body as { pidAs?: string };
    const made = await server.request('POST', '/v1/verifier/requests', {
      headers: { 'x-api-token': masterToken },
      body: {
        dcql_query: verifierQueryWith(pidAs),
        trusted_issuers: [verifierIssuer.ca.pem],
        check_status: false,
        ...rest,
      },
    });
    assert.equal(made.status, 201, made.text);
    const data = made.body.data;
    const jwt = data.dc_api_request
      ? (data.dc_api_request.data.request as string)
      : await (await fetch(`${server.url}/v1/verifier/requests/${data.id}/request-object`)).text();
    const claims = decodeJwt(jwt) as Record<string, unknown> & {
      nonce: string;
      client_id: string;
      state?: string;
      client_metadata: { jwks?: { keys: JWK[] } };
    };
    return {
      id: data.id,
      context: {
        state: claims.state,
        nonce: claims.nonce,
        aud: data.dc_api_request ? `origin:${ORIGIN}` : claims.client_id,
        encryptionJwk: claims.client_metadata.jwks?.keys[0],
        credential: sdJwtCredential,
        holder,
        pidAs,
      },
    };
  }

  /** The request's status as its tenant reads it (with the response_code of a same-device answer). */
  async function verifierStatusOf(id: string, answered?: { redirect_uri?: string }): Promise<string> {
    const code = answered?.redirect_uri
      ? new URLSearchParams(new URL(answered.redirect_uri).hash.slice(1)).get('response_code')
      : null;
    const read = await exchange({
      method: 'GET',
      path: `/v1/verifier/requests/${id}${code ? `?response_code=${encodeURIComponent(code)}` : ''}`,
      headers: api(),
    });
    assert.equal(read.status, 200, read.text);
    return JSON.parse(read.text).data.status;
  }

  /** An answer taken settles its request for good; one refused leaves it open (nothing lost). */
  async function assertSettledOrOpen(id: string, answered: { status: number; text: string }) {
    const body = answered.status === 200 && answered.text ? JSON.parse(answered.text) : undefined;
    const status = await verifierStatusOf(id, body);
    if (answered.status === 200) {
      assert.ok(!OPEN_STATES.includes(status), `answered with 200 but still ${status}`);
    } else {
      assert.ok(OPEN_STATES.includes(status), `refused with ${answered.status} but now ${status}`);
    }
  }

  async function send(probe: Probe): Promise<void> {
    await exchange(probe);
  }

  /** `send`, with the status and body for properties that go on from the answer. */
  async function exchange(probe: Probe): Promise<{ status: number; text: string }> {
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
    const sentBody = probe.body === undefined ? '' : ` [${probe.body.slice(0, 300)}]`;
    const where = `${probe.method} ${probe.path.slice(0, 200)}${sentBody} → ${response.status}: ${text.slice(0, 300)}`;
    assert.ok(response.status < 500, where);
    assert.equal(leaksInternals(text), false, where);
    const type = response.headers.get('content-type') ?? '';
    if (response.status >= 400 && type.includes('application/json')) {
      const body = JSON.parse(text);
      assert.equal(typeof body.error, 'string', where);
      assert.equal(typeof body.error_description, 'string', where);
    }
    return { status: response.status, text };
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
    // Erasure with hostile ids and scopes, by a master whose tenant holds no user: nothing to erase.
    const eraser = await server.createMaster('Eraser');
    await check(
      fc.asyncProperty(nasty, fc.option(nasty), async (id, scope) =>
        send({
          method: 'DELETE',
          path: `/v1/user/${encodeURIComponent(id.toWellFormed())}`,
          headers: {
            'x-api-token': eraser.token,
            ...(scope === null ? {} : { 'x-api-subclient-id': asHeader(scope) }),
          },
        }),
      ),
      runs(600),
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
          'DELETE /wallet/accounts/',
          'GET /wallet/export',
          'GET /wallet/account-deleted',
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

  /** Presentations: a genuine one edited, and each shape a format's parser meets (issue #30). */
  function verifierArbitraries() {
    const jwtShaped = fc
      .tuple(fc.jsonValue({ maxDepth: 2 }), fc.jsonValue({ maxDepth: 3 }), fc.base64String({ maxLength: 40 }))
      .map(([h, p, signature]) => `${encoded(h)}.${encoded(p)}.${signature}`);
    const presented: fc.Arbitrary<unknown> = fc.oneof(
      // As made: the answer is verified, so the paths that keep and read claims run too.
      {
        weight: 2,
        arbitrary: fc.constant(new GenuinePresentation({ cut: null, flip: null, disclosures: [] })),
      },
      {
        weight: 3,
        arbitrary: fc
          .record({
            cut: fc.option(fc.nat()),
            flip: fc.option(fc.tuple(fc.nat(), fc.constantFrom('A', '~', '.', '_', '-', '='))),
            disclosures: fc.array(nasty, { maxLength: 3 }),
          })
          .map((edit) => new GenuinePresentation(edit)),
      },
      // An SD-JWT of any header and payload, with disclosures of anything and a key binding JWT or none.
      fc
        .tuple(jwtShaped, fc.array(nastyValue, { maxLength: 3 }), fc.option(jwtShaped))
        .map(
          ([jwt, disclosures, kb]) =>
            `${jwt}~${disclosures.map((d) => encoded(['c2FsdA', 'k', d])).join('~')}~${kb ?? ''}`,
        ),
      jwtShaped,
      // The other formats' genuine credentials (not presentations), cut anywhere; and bytes.
      fc
        .tuple(fc.constantFrom(...otherGenuine), fc.nat())
        .map(([value, at]) => value.slice(0, at % (value.length + 1))),
      fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
      fc.record(
        {
          '@context': fc.oneof(fc.constant(['https://www.w3.org/ns/credentials/v2']), nastyValue),
          type: fc.oneof(fc.constant(['VerifiablePresentation']), nastyValue),
          verifiableCredential: nastyValue,
          proof: fc.oneof(
            fc.record(
              {
                type: fc.constant('DataIntegrityProof'),
                cryptosuite: fc.oneof(fc.constantFrom('bbs-2023', 'eddsa-rdfc-2022'), nasty),
                proofPurpose: fc.oneof(fc.constant('authentication'), nasty),
                challenge: nasty,
                domain: nasty,
                verificationMethod: nasty,
                proofValue: nasty,
              },
              { requiredKeys: [] },
            ),
            nastyValue,
          ),
        },
        { requiredKeys: [] },
      ),
      nastyValue,
    );
    /** vp_token (§8.1): an object of query ids, each an array of presentations; or anything. */
    const vpToken: fc.Arbitrary<unknown> = fc.oneof(
      { weight: 2, arbitrary: fc.record({ pid: fc.array(presented, { minLength: 1, maxLength: 2 }) }) },
      {
        weight: 5,
        arbitrary: fc.dictionary(
          fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...QUERY_IDS) }, nasty),
          fc.oneof({ weight: 4, arbitrary: fc.array(presented, { minLength: 1, maxLength: 3 }) }, nastyValue),
          { minKeys: 1, maxKeys: 3 },
        ),
      },
      nastyValue,
    );
    /** A vp_token as a form carries it: JSON text, text that is not JSON, or JSON nested deep. */
    const vpTokenText = fc.oneof(
      { weight: 6, arbitrary: vpToken.map((value) => new AsJsonText(value)) },
      nasty,
      fc
        .tuple(fc.constantFrom(...QUERY_IDS), fc.integer({ min: 100, max: 5000 }), fc.boolean())
        .map(
          ([id, depth, arrays]) =>
            `{"${id}":[${arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`}]}`,
        ),
      // An ldp_vc presentation of the right shape whose credential's subject nests deep, for
      // JSON-LD to expand (a form's vp_token is not held to the JSON bodies' depth limit).
      fc
        .integer({ min: 50, max: 3000 })
        .map(
          (depth) =>
            `{"ldp":[{"@context":["https://www.w3.org/ns/credentials/v2"],"type":["VerifiablePresentation"],"verifiableCredential":[{"@context":["https://www.w3.org/ns/credentials/v2"],"type":["VerifiableCredential"],"issuer":"did:example:issuer","credentialSubject":${'{"n":'.repeat(depth)}1${'}'.repeat(depth)},"proof":{"type":"DataIntegrityProof"}}]}]}`,
        ),
    );
    const state = fc.oneof({ weight: 5, arbitrary: fc.constant(OWN_STATE) }, nasty);
    /** An error response (§8.5) now and then; most answers carry a vp_token only. */
    const maybeError = fc.oneof(
      { weight: 6, arbitrary: fc.constant({}) },
      fc.record(
        {
          error: fc.oneof(fc.constantFrom('access_denied', 'invalid_request'), nasty),
          error_description: nasty,
        },
        { requiredKeys: ['error'] },
      ),
    );
    const parameters = fc
      .tuple(fc.record({ vp_token: vpToken, state }, { requiredKeys: ['vp_token'] }), maybeError)
      .map(([answer, error]) => ({ ...answer, ...error }));
    const encrypted = fc
      .record({
        parameters: fc.oneof(
          { weight: 6, arbitrary: parameters },
          fc.jsonValue({ maxDepth: 3 }),
          nasty, // plaintext that is not JSON
        ),
        enc: fc.constantFrom('A128GCM', 'A256GCM', 'A192GCM'),
        kid: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, fc.constant(undefined), nasty),
      })
      .map((input) => new EncryptedToRequest(input));
    /** Compact JWE shapes: any header (ECDH-ES or not, an epk or garbage), random parts. */
    const jweShaped = fc
      .tuple(
        fc.record(
          {
            alg: fc.oneof(fc.constantFrom('ECDH-ES', 'ECDH-ES+A128KW', 'dir', 'RSA-OAEP'), nasty),
            enc: fc.oneof(fc.constantFrom('A128GCM', 'A256GCM'), nasty),
            epk: fc.oneof(
              fc.record({
                kty: fc.oneof(fc.constant('EC'), nasty),
                crv: fc.oneof(fc.constantFrom('P-256', 'P-384', 'X25519'), nasty),
                x: fc
                  .uint8Array({ minLength: 32, maxLength: 32 })
                  .map((b) => Buffer.from(b).toString('base64url')),
                y: fc
                  .uint8Array({ minLength: 32, maxLength: 32 })
                  .map((b) => Buffer.from(b).toString('base64url')),
              }),
              nastyValue,
            ),
            kid: nasty,
            zip: fc.constant('DEF'),
          },
          { requiredKeys: ['alg', 'enc'] },
        ),
        fc.array(fc.uint8Array({ maxLength: 64 }), { minLength: 4, maxLength: 4 }),
      )
      .map(([header, parts]) =>
        [encoded(header), ...parts.map((part) => Buffer.from(part).toString('base64url'))].join('.'),
      );
    /** The dc+sd-jwt query's id: `pid`, or any id DCQL allows (`constructor`, `__proto__`, …). */
    const pidAs = fc.oneof(
      { weight: 3, arbitrary: fc.constant('pid') },
      nasty.filter((id) => /^[A-Za-z0-9_-]+$/.test(id) && !QUERY_IDS.includes(id as never)),
      fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'length'),
    );
    return { presented, vpToken, vpTokenText, state, maybeError, encrypted, jweShaped, pidAs };
  }

  test('the verifier API: creating requests (DCQL, transaction data, trust, origins)', async () => {
    const validRequest = {
      dcql_query: VERIFIER_QUERY,
      response_mode: 'direct_post',
      client_id_prefix: 'x509_hash',
      transaction_data: [
        { type: 'urn:example:payment', credential_ids: ['pid'], transaction_data_hashes_alg: ['sha-256'] },
      ],
      trusted_issuers: [verifierIssuer.ca.pem, 'did:web:issuer.example'],
      redirect_uri: `${ORIGIN}/done`,
      check_status: false,
      expires_in: 60,
    };
    const pem = verifierIssuer.ca.pem;
    const queryId = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...QUERY_IDS) }, nasty);
    // Structurally valid DCQL (OpenID4VP §6) with hostile strings in every place a string goes.
    const claimQuery = fc.record(
      {
        id: fc.oneof(fc.constantFrom('a', 'b'), nasty),
        path: fc.array(fc.oneof(nasty, fc.nat({ max: 5 }), fc.constant(null)), {
          minLength: 1,
          maxLength: 4,
        }),
        values: fc.array(fc.oneof(nasty, fc.integer(), fc.boolean()), { minLength: 1, maxLength: 3 }),
        intent_to_retain: fc.oneof(fc.boolean(), nastyValue),
      },
      { requiredKeys: ['path'] },
    );
    const credentialQuery = fc.record(
      {
        id: queryId,
        format: fc.oneof(fc.constantFrom('dc+sd-jwt', 'mso_mdoc', 'jwt_vc_json', 'ldp_vc'), nasty),
        meta: fc.oneof(
          fc.record({ vct_values: fc.array(nasty, { maxLength: 3 }) }),
          fc.record({ doctype_value: nasty }),
          fc.record({ type_values: fc.array(fc.array(nasty, { maxLength: 3 }), { maxLength: 3 }) }),
          nastyValue,
        ),
        claims: fc.array(claimQuery, { minLength: 1, maxLength: 4 }),
        claim_sets: fc.array(fc.array(nasty, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
        multiple: fc.oneof(fc.boolean(), nastyValue),
        require_cryptographic_holder_binding: fc.oneof(fc.boolean(), nastyValue),
        trusted_authorities: fc.array(
          fc.record({
            type: fc.oneof(fc.constantFrom('aki', 'etsi_tl', 'openid_federation'), nasty),
            values: fc.array(nasty, { minLength: 1, maxLength: 3 }),
          }),
          { maxLength: 2 },
        ),
      },
      { requiredKeys: ['id', 'format', 'meta'] },
    );
    const dcqlQuery = fc.record(
      {
        credentials: fc.array(credentialQuery, { minLength: 1, maxLength: 3 }),
        credential_sets: fc.array(
          fc.record(
            {
              options: fc.array(fc.array(queryId, { minLength: 1, maxLength: 3 }), {
                minLength: 1,
                maxLength: 3,
              }),
              required: fc.oneof(fc.boolean(), nastyValue),
            },
            { requiredKeys: ['options'] },
          ),
          { minLength: 1, maxLength: 2 },
        ),
      },
      { requiredKeys: ['credentials'] },
    );
    const transactionItem = fc
      .tuple(
        fc.record(
          {
            type: fc.oneof(fc.constant('urn:example:payment'), nasty),
            credential_ids: fc.oneof(fc.array(queryId, { minLength: 1, maxLength: 3 }), nastyValue),
            transaction_data_hashes_alg: fc.oneof(
              fc.array(fc.oneof(fc.constantFrom('sha-256', 'sha-512'), nasty), { maxLength: 3 }),
              nastyValue,
            ),
          },
          { requiredKeys: ['type', 'credential_ids'] },
        ),
        fc.option(fc.tuple(nasty, nastyValue)),
      )
      .map(([item, extra]) => (extra ? { ...item, [extra[0]]: extra[1] } : item));
    const trustedIssuer = fc.oneof(
      nasty,
      nasty.map((text) => `did:${text}`),
      fc
        .base64String({ maxLength: 400 })
        .map((b) => `-----BEGIN CERTIFICATE-----\n${b}\n-----END CERTIFICATE-----`),
      fc.constant(pem),
      fc.nat().map((at) => pem.slice(0, at % pem.length)),
      nasty.map((text) => `${pem}${text}`),
      fc.tuple(fc.nat(), fc.constantFrom('A', '-', '\n', '=')).map(([at, c]) => {
        const i = 28 + (at % (pem.length - 56));
        return `${pem.slice(0, i)}${c}${pem.slice(i + 1)}`;
      }),
    );
    const origin = fc.oneof(
      fc.constant(ORIGIN),
      nasty,
      nasty.map((text) => `https://${text}`),
      fc.constantFrom(
        `${ORIGIN}/`,
        `${ORIGIN}:443`,
        'http://shop.example',
        'null',
        'https://[::1]',
        'https://xn--ls8h.example',
        'https://SHOP.example',
      ),
    );
    const target = fc.oneof(
      fc.constantFrom(
        `${ORIGIN}/done`,
        'https://127.0.0.1:1/cb',
        'http://shop.example/cb',
        'https://user:pw@shop.example',
      ),
      nasty,
    );
    const body = fc.oneof(
      mutated(validRequest),
      mutated(VERIFIER_QUERY.credentials[0]!).map((query) => ({
        ...validRequest,
        dcql_query: { credentials: [query] },
      })),
      fc
        .record({ dcql_query: dcqlQuery, response_mode: fc.constantFrom('direct_post', 'dc_api.jwt') })
        .map((b) => (b.response_mode === 'dc_api.jwt' ? { ...b, expected_origins: [ORIGIN] } : b)),
      fc.record({
        dcql_query: fc.constant(VERIFIER_QUERY),
        transaction_data: fc.oneof(fc.array(transactionItem, { minLength: 1, maxLength: 3 }), nastyValue),
      }),
      fc.record({
        dcql_query: fc.constant(VERIFIER_QUERY),
        trusted_issuers: fc.oneof(fc.array(trustedIssuer, { minLength: 1, maxLength: 3 }), nastyValue),
      }),
      fc.record(
        {
          dcql_query: fc.constant(VERIFIER_QUERY),
          response_mode: fc.oneof(fc.constantFrom('dc_api', 'dc_api.jwt', 'direct_post'), nasty),
          expected_origins: fc.oneof(fc.array(origin, { minLength: 1, maxLength: 3 }), nastyValue),
          redirect_uri: target,
        },
        { requiredKeys: ['dcql_query', 'response_mode'] },
      ),
      fc.record(
        {
          dcql_query: fc.constant(VERIFIER_QUERY),
          client_id_prefix: fc.oneof(
            fc.constantFrom('x509_san_dns', 'x509_hash', 'openid_federation'),
            nasty,
          ),
          redirect_uri: target,
          callback_url: target,
          expires_in: fc.oneof(fc.integer({ min: -5, max: 4000 }), nastyValue),
          check_status: fc.oneof(fc.boolean(), nastyValue),
        },
        { requiredKeys: ['dcql_query'] },
      ),
    );
    await check(
      fc.asyncProperty(
        body,
        fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, fc.constant(false)),
        async (request, asVerifier) => {
          const made = await exchange({
            method: 'POST',
            path: '/v1/verifier/requests',
            headers: json({ 'x-api-token': asVerifier ? masterToken : otherToken }),
            body: JSON.stringify(request),
          });
          if (made.status !== 201) return;
          // What was made is served: the request object, the page and the tenant's read.
          const { id } = JSON.parse(made.text).data;
          await send({ method: 'GET', path: `/v1/verifier/requests/${id}/request-object` });
          await send({ method: 'GET', path: `/verify/${id}`, headers: { accept: 'text/html' } });
          assert.ok(OPEN_STATES.includes(await verifierStatusOf(id)));
        },
      ),
      runs(600),
    );
  });

  test('the verifier: hostile ids in every path, and the result read with any query', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    // Nothing here may settle a request: every answer below is one the request must refuse.
    const endpoints = (id: string, token: string): Probe[] => [
      { method: 'GET', path: `/v1/verifier/requests/${id}`, headers: { 'x-api-token': token } },
      {
        method: 'POST',
        path: `/v1/verifier/requests/${id}/dc-api-response`,
        headers: json({ 'x-api-token': token }),
        body: JSON.stringify({ origin: ORIGIN, data: { vp_token: 'not json' } }),
      },
      { method: 'GET', path: `/v1/verifier/requests/${id}/request-object` },
      {
        method: 'POST',
        path: `/v1/verifier/requests/${id}/request-object`,
        headers: form,
        body: 'wallet_nonce=n',
      },
      {
        method: 'POST',
        path: `/v1/verifier/requests/${id}/response`,
        headers: form,
        body: 'error=access_denied&state=not-the-state',
      },
      { method: 'GET', path: `/verify/${id}`, headers: { accept: 'text/html' } },
      { method: 'GET', path: `/verify/${id}`, headers: { accept: 'application/json' } },
    ];
    await check(
      fc.asyncProperty(
        fc.oneof(
          nasty.map((id) => encodeURIComponent(id.toWellFormed())),
          fc.constantFrom(
            verifierIds.open,
            verifierIds.dcApi,
            verifierIds.sameDevice,
            'a'.repeat(64),
            'a'.repeat(65),
            '%',
            '%zz',
            '..',
            '%2e%2e',
            '%2F',
            '%00',
            '%C0%80',
            '%ED%A0%80',
          ),
        ),
        fc.oneof(
          { weight: 4, arbitrary: fc.constant(masterToken) },
          fc.constant(otherToken),
          nasty.map(asHeader),
        ),
        fc.nat(6),
        async (id, token, endpoint) => send(endpoints(id, token)[endpoint]!),
      ),
      runs(700),
    );
    assert.ok(OPEN_STATES.includes(await verifierStatusOf(verifierIds.open)));
    await check(
      fc.asyncProperty(
        fc.constantFrom(verifierIds.sameDevice, verifierIds.open, verifierIds.dcApi),
        fc.dictionary(nasty, nasty, { maxKeys: 3 }),
        fc.option(fc.oneof(nasty, fc.array(nasty, { minLength: 2, maxLength: 3 }))),
        async (id, query, code) => {
          const params = new URLSearchParams(query);
          for (const value of code === null ? [] : Array.isArray(code) ? code : [code]) {
            params.append('response_code', value);
          }
          await send({ method: 'GET', path: `/v1/verifier/requests/${id}?${params}`, headers: api() });
        },
      ),
      runs(200),
    );
  });

  test("the verifier's wallet-facing endpoints: request-object POST and answers to open requests", async () => {
    const { vpToken, vpTokenText, state, maybeError, encrypted, jweShaped, pidAs } = verifierArbitraries();
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const post = async (id: string, parameters: Record<string, unknown>, asForm = true) =>
      exchange({
        method: 'POST',
        path: `/v1/verifier/requests/${id}/response`,
        headers: asForm ? form : json({}),
        body: asForm ? formOf(parameters) : JSON.stringify(parameters),
      });

    // The fuzz reaches verification: a genuine answer to each mode is verified.
    const genuine = { pid: [new GenuinePresentation({ cut: null, flip: null, disclosures: [] })] };
    const plain = await openVerifierRequest({ response_mode: 'direct_post' });
    const answered = await post(plain.id, {
      vp_token: await materialise(new AsJsonText(genuine), plain.context),
      state: plain.context.state,
    });
    assert.equal(answered.status, 200, answered.text);
    assert.equal(await verifierStatusOf(plain.id), 'verified');
    const sealed = await openVerifierRequest({ response_mode: 'direct_post.jwt' });
    const response = await materialise(
      new EncryptedToRequest({
        parameters: { vp_token: genuine, state: OWN_STATE },
        enc: 'A128GCM',
        kid: null,
      }),
      sealed.context,
    );
    assert.equal((await post(sealed.id, { response })).status, 200);
    assert.equal(await verifierStatusOf(sealed.id), 'verified');

    // §5.10: whatever a wallet POSTs for the request object; on a fresh request now and then,
    // since only the first fetch keeps the wallet_nonce.
    const walletMetadata = fc.oneof(
      fc
        .record(
          {
            issuer: fc.oneof(fc.constant('https://wallet.example'), nastyValue),
            authorization_encryption_enc_values_supported: fc.oneof(
              fc.array(fc.oneof(fc.constantFrom('A128GCM', 'A256GCM'), nasty), { maxLength: 3 }),
              nastyValue,
            ),
            vp_formats_supported: nastyValue,
            client_id_prefixes_supported: nastyValue,
          },
          { requiredKeys: [] },
        )
        .map((value) => JSON.stringify(value)),
      fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
      nasty,
    );
    await check(
      fc.asyncProperty(
        fc.record(
          { wallet_metadata: walletMetadata, wallet_nonce: nasty, [`x`]: nastyValue },
          { requiredKeys: [] },
        ),
        fc.boolean(),
        fc.constantFrom('open', 'fresh', 'dcApi'),
        async (body, asForm, which) => {
          const id =
            which === 'fresh'
              ? (await openVerifierRequest({ response_mode: 'direct_post.jwt' })).id
              : verifierIds[which === 'open' ? 'open' : 'dcApi'];
          const fetched = await exchange({
            method: 'POST',
            path: `/v1/verifier/requests/${id}/request-object`,
            headers: asForm ? form : json({}),
            body: asForm ? formOf(body) : JSON.stringify(body),
          });
          if (fetched.status === 200) {
            assert.equal(fetched.text.split('.').length, 3, 'a compact JWS');
            assert.ok(OPEN_STATES.includes(await verifierStatusOf(id)));
          }
        },
      ),
      runs(250),
    );

    // direct_post (§8.2): vp_token and state as form fields, the state the request's own mostly,
    // so the answer reaches verification; each on a fresh request, since a readable one settles it.
    await check(
      fc.asyncProperty(
        fc
          .tuple(
            fc.record(
              { vp_token: vpTokenText, state, extra: fc.dictionary(nasty, nasty, { maxKeys: 2 }) },
              { requiredKeys: ['vp_token', 'state'] },
            ),
            maybeError,
          )
          .map(([{ extra, ...answer }, error]) => ({ ...extra, ...answer, ...error })),
        pidAs,
        fc.boolean(),
        fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, fc.constant(false)),
        async (parameters, queryId, sameDevice, asForm) => {
          const { id, context } = await openVerifierRequest({
            response_mode: 'direct_post',
            pidAs: queryId,
            ...(sameDevice ? { redirect_uri: `${ORIGIN}/done` } : {}),
          });
          const answer = await post(
            id,
            (await materialise(parameters, context)) as Record<string, unknown>,
            asForm,
          );
          await assertSettledOrOpen(id, answer);
        },
      ),
      runs(400),
    );

    // direct_post.jwt (§8.3): a response encrypted to the request's key with any parameters, or
    // compact-JWE-shaped garbage, or any text; an unencrypted error or vp_token now and then.
    await check(
      fc.asyncProperty(
        fc
          .tuple(
            fc.record({ response: fc.oneof({ weight: 5, arbitrary: encrypted }, jweShaped, nasty) }),
            fc.oneof(
              { weight: 6, arbitrary: fc.constant({}) },
              fc.record({ vp_token: vpToken.map((v) => new AsJsonText(v)), state }, { requiredKeys: [] }),
              maybeError.map((error) => ({ ...error, state: OWN_STATE })),
            ),
          )
          .map(([answer, extra]) => ({ ...extra, ...answer })),
        pidAs,
        async (parameters, queryId) => {
          const { id, context } = await openVerifierRequest({
            response_mode: 'direct_post.jwt',
            pidAs: queryId,
          });
          const answer = await post(id, (await materialise(parameters, context)) as Record<string, unknown>);
          await assertSettledOrOpen(id, answer);
        },
      ),
      runs(300),
    );
  });

  test('the verifier: Digital Credentials API responses (dc_api, dc_api.jwt)', async () => {
    const { vpToken, encrypted, jweShaped, maybeError, pidAs } = verifierArbitraries();
    const genuine = { pid: [new GenuinePresentation({ cut: null, flip: null, disclosures: [] })] };
    const sealed = await openVerifierRequest({ response_mode: 'dc_api.jwt', expected_origins: [ORIGIN] });
    const verified = await exchange({
      method: 'POST',
      path: `/v1/verifier/requests/${sealed.id}/dc-api-response`,
      headers: api(),
      body: JSON.stringify({
        origin: ORIGIN,
        data: {
          response: await materialise(
            new EncryptedToRequest({ parameters: { vp_token: genuine }, enc: 'A128GCM', kid: null }),
            sealed.context,
          ),
        },
      }),
    });
    assert.equal(verified.status, 200, verified.text);
    assert.equal(JSON.parse(verified.text).data.status, 'verified');

    const data = fc.oneof(
      {
        weight: 5,
        arbitrary: fc
          .tuple(
            fc.record(
              {
                vp_token: fc.oneof(
                  vpToken,
                  vpToken.map((v) => new AsJsonText(v)),
                ),
                response: fc.oneof({ weight: 3, arbitrary: encrypted }, jweShaped, nasty),
              },
              { requiredKeys: [] },
            ),
            maybeError,
          )
          .map(([answer, error]) => ({ ...answer, ...error })),
      },
      nastyValue,
    );
    await check(
      fc.asyncProperty(
        fc.oneof(
          {
            weight: 5,
            arbitrary: fc.record({
              origin: fc.oneof({ weight: 4, arbitrary: fc.constant(ORIGIN) }, nasty),
              data,
            }),
          },
          mutated({ origin: ORIGIN, data: {} }),
        ),
        fc.constantFrom('dc_api', 'dc_api.jwt'),
        pidAs,
        fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, fc.constant(false)),
        async (body, mode, queryId, asVerifier) => {
          const { id, context } = await openVerifierRequest({
            response_mode: mode,
            expected_origins: [ORIGIN],
            pidAs: queryId,
          });
          const answer = await exchange({
            method: 'POST',
            path: `/v1/verifier/requests/${id}/dc-api-response`,
            headers: json({ 'x-api-token': asVerifier ? masterToken : otherToken }),
            body: JSON.stringify(await materialise(body, context)),
          });
          const status =
            answer.status === 200 ? JSON.parse(answer.text).data.status : await verifierStatusOf(id);
          if (answer.status === 200) assert.ok(!OPEN_STATES.includes(status), `200 but still ${status}`);
          else assert.ok(OPEN_STATES.includes(status), `refused with ${answer.status} but now ${status}`);
        },
      ),
      runs(400),
    );
  });

  /** The issuer's tenant, a credential it issued, live offers and tokens: what the issuer fuzzing aims at. */
  interface IssuerTargets {
    token: string;
    clientId: number;
    issuerId: string;
    issuerPath: string;
    encryptionJwk: JWK;
    offerIds: string[];
    deferredOfferId: string;
    codes: { code: string; txCode: string }[];
    fuzzToken: string;
    issuedToken: string;
    deferredToken: string;
    transactionId: string;
    notificationId: string;
    credentialIds: string[];
    statusListIds: string[];
  }
  let issuerTargets: IssuerTargets | undefined;
  const PRE_AUTHORIZED = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
  const ISSUER_CONFIGURATIONS: Record<string, Record<string, unknown>> = {
    pid: {
      format: 'dc+sd-jwt',
      vct: 'https://fuzz.example/pid',
      claims: [{ path: ['given_name'], mandatory: true }, { path: ['address', 'locality'] }],
      display: [{ name: 'PID', locale: 'en' }],
      status: true,
      batch_size: 2,
    },
    mdl: {
      format: 'mso_mdoc',
      doctype: MDL_DOCTYPE,
      claims: [{ path: [MDL_NAMESPACE, 'given_name'] }],
      status: true,
    },
    degree: {
      format: 'jwt_vc_json',
      type: 'Degree',
      claims: [{ path: ['credentialSubject', 'degree'] }],
      status: true,
    },
    badge: {
      format: 'ldp_vc',
      type: 'Badge',
      claims: [{ path: ['credentialSubject', 'name'] }],
      from_profile: { name: 'first_name' },
    },
  };
  const PID_CLAIMS = { pid: { given_name: 'Ada', address: { locality: 'London' } } };

  /** A wallet's request for a token with the offer's pre-authorized code, as the test's setup makes it. */
  async function redeemOffer(offerUri: string, txCode?: string): Promise<string> {
    const offer = await server.request('GET', new URL(offerUri).pathname);
    assert.equal(offer.status, 200, offer.text);
    const code = offer.body.grants[PRE_AUTHORIZED]['pre-authorized_code'];
    const token = await server.request('POST', '/v2/openidc/token', {
      body: {
        grant_type: PRE_AUTHORIZED,
        'pre-authorized_code': code,
        ...(txCode ? { tx_code: txCode } : {}),
      },
    });
    assert.equal(token.status, 200, token.text);
    return token.body.access_token;
  }

  async function issuerSetup(): Promise<IssuerTargets> {
    if (issuerTargets) return issuerTargets;
    const tenant = await server.createMaster('Fuzz issuer');
    const enabled = await coffer(server, 'issuer', 'enable', '--client', String(tenant.clientId), '--json');
    assert.equal(enabled.code, 0, enabled.stderr);
    const issuerId = JSON.parse(enabled.stdout).credential_issuer as string;
    const tenantApi = (method: string, path: string, body?: unknown) =>
      server.request(method, path, {
        headers: { 'x-api-token': tenant.token },
        ...(body === undefined ? {} : { body }),
      });
    for (const [id, configuration] of Object.entries(ISSUER_CONFIGURATIONS)) {
      const put = await tenantApi('PUT', `/v1/issuer/configurations/${id}`, configuration);
      assert.equal(put.status, 201, put.text);
    }
    const offer = async (body: Record<string, unknown>) => {
      const created = await tenantApi('POST', '/v1/issuer/offers', body);
      assert.equal(created.status, 201, created.text);
      return created.body.data as { id: string; credential_offer_uri: string; tx_code?: string };
    };
    // One credential issued for real: its id, status list and notification id are fuzzed below.
    const issued = await offer({ configuration_ids: ['pid'], claims: PID_CLAIMS });
    const issuedToken = await redeemOffer(issued.credential_offer_uri);
    const proof = await walletProofFor(issuerId);
    const credential = await server.request('POST', `${new URL(issuerId).pathname}/credential`, {
      headers: { authorization: `Bearer ${issuedToken}` },
      body: { credential_configuration_id: 'pid', proofs: { jwt: [proof] } },
    });
    assert.equal(credential.status, 200, credential.text);
    // A deferred offer (no claims yet) and its transaction.
    const deferred = await offer({ configuration_ids: ['pid'] });
    const deferredToken = await redeemOffer(deferred.credential_offer_uri);
    const pending = await server.request('POST', `${new URL(issuerId).pathname}/credential`, {
      headers: { authorization: `Bearer ${deferredToken}` },
      body: { credential_configuration_id: 'pid', proofs: { jwt: [await walletProofFor(issuerId)] } },
    });
    assert.equal(pending.status, 202, pending.text);
    // Offers whose codes (with transaction codes) the token endpoint fuzzing tries to redeem.
    const codes: IssuerTargets['codes'] = [];
    const offerIds = [issued.id, deferred.id];
    for (let i = 0; i < 4; i++) {
      const open = await offer({
        configuration_ids: ['pid', 'degree'],
        claims: { ...PID_CLAIMS, degree: { credentialSubject: { degree: 'BSc' } } },
        tx_code: { length: 6 },
      });
      const document = await server.request('GET', new URL(open.credential_offer_uri).pathname);
      codes.push({
        code: document.body.grants[PRE_AUTHORIZED]['pre-authorized_code'],
        txCode: open.tx_code!,
      });
      offerIds.push(open.id);
    }
    // The offer the credential endpoint fuzzing spends its token on.
    const fuzzed = await offer({
      configuration_ids: ['pid', 'mdl', 'degree'],
      claims: {
        ...PID_CLAIMS,
        mdl: { [MDL_NAMESPACE]: { given_name: 'Ada' } },
        degree: { credentialSubject: { degree: 'BSc' } },
      },
    });
    offerIds.push(fuzzed.id);
    const fuzzToken = await redeemOffer(fuzzed.credential_offer_uri);
    const list = await tenantApi('GET', '/v1/issuer/credentials');
    const metadata = await server.request(
      'GET',
      `/.well-known/openid-credential-issuer/issuers/${tenant.clientId}`,
    );
    issuerTargets = {
      token: tenant.token,
      clientId: tenant.clientId,
      issuerId,
      issuerPath: new URL(issuerId).pathname,
      encryptionJwk: metadata.body.credential_request_encryption.jwks.keys[0],
      offerIds,
      deferredOfferId: deferred.id,
      codes,
      fuzzToken,
      issuedToken,
      deferredToken,
      transactionId: pending.body.transaction_id,
      notificationId: credential.body.notification_id,
      credentialIds: list.body.data.map((c: { id: string }) => c.id),
      statusListIds: list.body.data.map((c: { status_list: { uri: string } }) =>
        c.status_list.uri.split('/').pop(),
      ),
    };
    return issuerTargets;
  }

  /** A genuine key proof (`openid4vci-proof+jwt`) with a fresh c_nonce, or one spoilt as `spoil` says. */
  async function walletProofFor(
    issuerId: string,
    spoil: {
      typ?: unknown;
      aud?: unknown;
      nonce?: unknown;
      iat?: unknown;
      header?: Record<string, unknown>;
      alg?: 'none';
    } = {},
  ): Promise<string> {
    const nonce = await fetch(`${issuerId}/nonce`, { method: 'POST' });
    sent++;
    const { c_nonce } = (await nonce.json()) as { c_nonce: string };
    const payload = {
      aud: 'aud' in spoil ? spoil.aud : issuerId,
      nonce: 'nonce' in spoil ? spoil.nonce : c_nonce,
      iat: 'iat' in spoil ? spoil.iat : Math.floor(Date.now() / 1000),
    };
    if (spoil.alg === 'none') return new UnsecuredJWT(payload as Record<string, unknown>).encode();
    const jwk = await exportJWK(holder.publicKey);
    const header = {
      alg: 'ES256',
      typ: 'typ' in spoil ? spoil.typ : 'openid4vci-proof+jwt',
      jwk,
      ...spoil.header,
    };
    try {
      return await new SignJWT(payload as Record<string, unknown>)
        .setProtectedHeader(header as never)
        .sign(holder.privateKey);
    } catch {
      // Headers jose will not sign (a bad crit or b64) still reach the issuer, unsigned.
      return `${encoded(header)}.${encoded(payload)}.c2lnbmF0dXJl`;
    }
  }

  test('the issuer: tenant API with hostile ids and bodies', async () => {
    const targets = await issuerSetup();
    const tenant = () => json({ 'x-api-token': targets.token });
    const hostileId = (...real: string[]) =>
      fc.oneof(
        nasty.map((id) => encodeURIComponent(id.toWellFormed())),
        fc.constantFrom(
          ...real,
          'a'.repeat(64),
          'a'.repeat(65),
          '%',
          '%zz',
          '..',
          '%2e%2e',
          '%2F',
          '%00',
          '%ED%A0%80',
        ),
      );
    await check(
      fc.asyncProperty(
        fc.oneof(hostileId('fuzzed'), fc.constant('fuzzed')),
        fc.constantFrom(...Object.values(ISSUER_CONFIGURATIONS)).chain((valid) =>
          fc.oneof(
            mutated(valid),
            mutated((valid['claims'] as Record<string, unknown>[])[0] ?? { path: ['x'] }).map((claim) => ({
              ...valid,
              claims: [claim],
            })),
            fc
              .array(
                fc.oneof(
                  nastyValue,
                  fc.array(nastyValue, { maxLength: 4 }).map((path) => ({ path })),
                ),
                { maxLength: 4 },
              )
              .map((claims) => ({ ...valid, claims })),
          ),
        ),
        async (id, body) =>
          send({
            method: 'PUT',
            path: `/v1/issuer/configurations/${id}`,
            headers: tenant(),
            body: JSON.stringify(body),
          }),
      ),
      runs(500),
    );
    await check(
      fc.asyncProperty(
        hostileId('fuzzed', 'nothing-here'),
        fc.constantFrom('GET', 'DELETE'),
        async (id, method) =>
          send({
            method,
            path: `/v1/issuer/configurations/${id}`,
            headers: { 'x-api-token': targets.token },
          }),
      ),
      runs(150),
    );
    const validOffer = {
      configuration_ids: ['pid'],
      claims: PID_CLAIMS,
      grant: 'pre-authorized_code',
      tx_code: { length: 6, input_mode: 'numeric', description: 'From the letter' },
      expires_in: 600,
      callback_url: 'https://fuzz.invalid/callback',
    };
    await check(
      fc.asyncProperty(
        fc.oneof(
          mutated(validOffer),
          mutated(validOffer.tx_code).map((tx_code) => ({ ...validOffer, tx_code })),
          mutated(PID_CLAIMS.pid).map((pid) => ({ ...validOffer, claims: { pid } })),
          // A W3C configuration's claims, addressed from credentialSubject as its paths are.
          mutated({ credentialSubject: { degree: 'BSc' } }).map((degree) => ({
            ...validOffer,
            configuration_ids: ['degree'],
            claims: { degree },
          })),
          fc.tuple(nasty, nastyValue).map(([key, value]) => ({ ...validOffer, claims: { [key]: value } })),
        ),
        async (body) =>
          send({ method: 'POST', path: '/v1/issuer/offers', headers: tenant(), body: JSON.stringify(body) }),
      ),
      runs(500),
    );
    await check(
      fc.asyncProperty(
        hostileId(...targets.offerIds),
        fc.oneof(
          mutated({ claims: PID_CLAIMS }),
          mutated(PID_CLAIMS.pid).map((pid) => ({ claims: { pid } })),
        ),
        fc.boolean(),
        async (id, body, read) =>
          read
            ? send({
                method: 'GET',
                path: `/v1/issuer/offers/${id}`,
                headers: { 'x-api-token': targets.token },
              })
            : send({
                method: 'PUT',
                path: `/v1/issuer/offers/${id}/claims`,
                headers: tenant(),
                body: JSON.stringify(body),
              }),
      ),
      runs(300),
    );
    await check(
      fc.asyncProperty(
        fc.oneof(nasty, fc.constantFrom(...targets.offerIds)),
        // The page cursor is a query parameter of this list too.
        fc.dictionary(fc.oneof(nasty, fc.constant('cursor')), nasty, { maxKeys: 2 }),
        async (offer, extra) =>
          send({
            method: 'GET',
            path: `/v1/issuer/credentials?${new URLSearchParams({ ...extra, offer })}`,
            headers: { 'x-api-token': targets.token },
          }),
      ),
      runs(150),
    );
    await check(
      fc.asyncProperty(
        hostileId(...targets.credentialIds.map(encodeURIComponent)),
        mutated({ status: 'suspended' }),
        async (id, body) =>
          send({
            method: 'POST',
            path: `/v1/issuer/credentials/${id}/status`,
            headers: tenant(),
            body: JSON.stringify(body),
          }),
      ),
      runs(250),
    );
    // Every tenant endpoint with another client's token, or a forged one.
    await check(
      fc.asyncProperty(
        fc.oneof(fc.constant(masterToken), fc.constant(otherToken), nasty.map(asHeader)),
        fc.constantFrom<[string, string, unknown]>(
          ['PUT', '/v1/issuer/configurations/pid', ISSUER_CONFIGURATIONS['pid']],
          ['GET', '/v1/issuer/configurations', undefined],
          ['DELETE', '/v1/issuer/configurations/pid', undefined],
          ['POST', '/v1/issuer/offers', validOffer],
          ['GET', `/v1/issuer/offers/${targets.offerIds[0]}`, undefined],
          ['PUT', `/v1/issuer/offers/${targets.deferredOfferId}/claims`, { claims: PID_CLAIMS }],
          ['GET', '/v1/issuer/credentials', undefined],
          ['POST', `/v1/issuer/credentials/${targets.credentialIds[0]}/status`, { status: 'revoked' }],
        ),
        async (token, [method, path, body]) => {
          const answer = await exchange({
            method,
            path,
            ...(body === undefined
              ? { headers: { 'x-api-token': token } }
              : { headers: json({ 'x-api-token': token }), body: JSON.stringify(body) }),
          });
          // Clients that are not issuers are 403; a forged token is refused one way or another.
          assert.ok(
            [masterToken, otherToken].includes(token) ? answer.status === 403 : answer.status >= 400,
            `${method} ${path} as another: ${answer.status}`,
          );
        },
      ),
      runs(150),
    );
    // The real issuer's own things were not changed by anyone else.
    const configurations = await server.request('GET', '/v1/issuer/configurations', {
      headers: { 'x-api-token': targets.token },
    });
    assert.ok(configurations.body.data.some((c: { id: string }) => c.id === 'pid'));
  });

  test("the issuer's wallet-facing endpoints: metadata, offers, nonce, status lists, the offer page", async () => {
    const targets = await issuerSetup();
    const clientIds = fc.oneof(
      nasty.map((id) => encodeURIComponent(id.toWellFormed())),
      fc.constantFrom(
        String(targets.clientId),
        String(targets.clientId),
        '0',
        '01',
        '9999999999',
        '99999999999',
        '-1',
        '1e3',
        String(subClientId),
      ),
    );
    const ids = (...real: string[]) =>
      fc.oneof(
        nasty.map((id) => encodeURIComponent(id.toWellFormed())),
        fc.constantFrom(...real, 'a'.repeat(16), 'a'.repeat(64), 'a'.repeat(65), '%2F', '%00', '..'),
      );
    const accept = fc.oneof(
      fc.constantFrom(
        'application/jwt',
        'application/json',
        'application/statuslist+jwt',
        'application/statuslist+cwt',
        'application/statuslist+cwt, application/statuslist+jwt;q=0.5',
        'application/vc+jwt',
        'application/vc+ld+json',
        'text/html',
        '*/*',
      ),
      nasty.map(asHeader),
    );
    await check(
      fc.asyncProperty(
        clientIds,
        ids(...targets.offerIds),
        accept,
        fc.nat(3),
        async (clientId, id, type, which) => {
          const probes: Probe[] = [
            {
              method: 'GET',
              path: `/.well-known/openid-credential-issuer/issuers/${clientId}`,
              headers: { accept: type },
            },
            { method: 'GET', path: `/issuers/${clientId}/offers/${id}`, headers: { accept: type } },
            {
              method: 'POST',
              path: `/issuers/${clientId}/nonce`,
              headers: { 'content-type': 'application/json' },
              body: '{}',
            },
            { method: 'GET', path: `/offer/${id}`, headers: { accept: type } },
          ];
          await send(probes[which]!);
        },
      ),
      runs(500),
    );
    await check(
      fc.asyncProperty(
        ids(...targets.statusListIds),
        accept,
        fc.option(nasty.map(asHeader)),
        async (id, type, etag) =>
          send({
            method: 'GET',
            path: `/v1/status-lists/${id}`,
            headers: { accept: type, ...(etag === null ? {} : { 'if-none-match': etag }) },
          }),
      ),
      runs(300),
    );
  });

  test('the audit trail: odd filters, cursors and limits', async () => {
    const first = await server.request('GET', '/v1/audit?limit=1', {
      headers: { 'x-api-token': masterToken },
    });
    assert.equal(first.status, 200, first.text);
    const cursors = fc.oneof(
      nasty,
      fc.constantFrom(
        first.body.next_cursor ?? 'YzEuMQ',
        Buffer.from('c1.0').toString('base64url'),
        Buffer.from('c1.99999999999999999').toString('base64url'),
        Buffer.from('c1.-1').toString('base64url'),
        'YzEuMQ==',
      ),
    );
    const times = fc.oneof(
      nasty,
      fc.constantFrom('2026-01-01T00:00:00Z', '2026-13-01T00:00:00Z', '0000-00-00'),
    );
    await check(
      fc.asyncProperty(
        fc.record({
          type: fc.option(nasty),
          since: fc.option(times),
          until: fc.option(times),
          cursor: fc.option(cursors),
          limit: fc.option(fc.oneof(nasty, fc.constantFrom('0', '1', '200', '201', '-1', '1e3'))),
        }),
        fc.option(nasty.map(asHeader)),
        async (query, token) => {
          const params = new URLSearchParams(
            Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== null),
          );
          await send({
            method: 'GET',
            path: `/v1/audit?${params}`,
            headers: { 'x-api-token': token ?? masterToken },
          });
        },
      ),
      runs(400),
    );
  });

  test('the federation endpoints: entity configurations, fetch, list and resolve', async () => {
    const targets = await issuerSetup();
    const publicUrl = server.env['PUBLIC_URL']!;
    await enableFederation(
      {
        db: server.database.db,
        cipher: createFieldCipher(server.masterKey),
        publicUrl,
        now: () => new Date(),
      },
      { authorityHints: [], organizationName: 'Fuzz federation' },
    );
    const clientIds = fc.oneof(
      nasty.map((id) => encodeURIComponent(id.toWellFormed())),
      fc.constantFrom(
        String(targets.clientId),
        '0',
        '01',
        '9999999999',
        '99999999999',
        '-1',
        String(subClientId),
      ),
    );
    const subs = fc.oneof(
      nasty.map((id) => encodeURIComponent(id.toWellFormed())),
      fc.constantFrom(
        encodeURIComponent(`${publicUrl}/issuers/${targets.clientId}`),
        encodeURIComponent(`${publicUrl}/issuers/${subClientId}`),
        encodeURIComponent(`${publicUrl}/issuers/99999999999`),
        encodeURIComponent(`${publicUrl}/issuers/1/../2`),
        encodeURIComponent(`${publicUrl}/verifiers/${targets.clientId}`),
        encodeURIComponent(`${publicUrl}/verifiers/99999999999`),
        encodeURIComponent(publicUrl),
        encodeURIComponent('https://elsewhere.example/issuers/1'),
        '',
        `${encodeURIComponent(publicUrl)}&sub=x`,
      ),
    );
    await check(
      fc.asyncProperty(clientIds, subs, subs, fc.nat(6), async (clientId, sub, anchor, which) => {
        const probes: Probe[] = [
          { method: 'GET', path: `/issuers/${clientId}/.well-known/openid-federation` },
          { method: 'GET', path: `/verifiers/${clientId}/.well-known/openid-federation` },
          { method: 'GET', path: `/federation/fetch?sub=${sub}` },
          { method: 'GET', path: '/federation/list' },
          {
            method: 'GET',
            path: `/federation/list?entity_type=${anchor}&entity_type=${sub}&intermediate=${sub}`,
          },
          { method: 'GET', path: '/.well-known/openid-federation' },
          { method: 'GET', path: `/federation/resolve?sub=${sub}&trust_anchor=${anchor}&entity_type=${sub}` },
        ];
        await send(probes[which]!);
      }),
      runs(300),
    );
  });

  test('the token endpoint with the pre-authorized code grant: odd codes, transaction codes and details', async () => {
    const targets = await issuerSetup();
    const details = fc.oneof(
      nastyValue,
      fc.constant([{ type: 'openid_credential', credential_configuration_id: 'pid' }]),
      fc.constant([
        { type: 'openid_credential', credential_configuration_id: 'pid', locations: [targets.issuerId] },
      ]),
      mutated({
        type: 'openid_credential',
        credential_configuration_id: 'degree',
        locations: [targets.issuerId],
      }).map((d) => [d]),
      fc.array(nastyValue, { maxLength: 12 }),
    );
    const code = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...targets.codes.map((c) => c.code)) },
      nastyValue,
      fc.constantFrom(targets.codes[0]!.code.slice(0, -1), `${targets.codes[0]!.code}x`, 'a'.repeat(129)),
    );
    const txCode = (which: number) =>
      fc.oneof(
        fc.constant(targets.codes[which % targets.codes.length]!.txCode),
        nastyValue,
        fc.constantFrom('000000', '1234567', ' 123456', '１２３４５６', '9'.repeat(65)),
      );
    await check(
      fc.asyncProperty(
        fc.oneof(
          { weight: 5, arbitrary: fc.constant(PRE_AUTHORIZED) },
          fc.constantFrom(`${PRE_AUTHORIZED} `, PRE_AUTHORIZED.toUpperCase(), 'pre-authorized_code'),
          nasty,
        ),
        code,
        fc.nat(3).chain((which) => fc.option(txCode(which))),
        fc.option(details),
        fc.record({
          form: fc.boolean(),
          dpop: fc.option(nasty.map(asHeader)),
          attestation: fc.option(fc.tuple(nasty.map(asHeader), nasty.map(asHeader))),
        }),
        async (grantType, preAuthorizedCode, tx, authorizationDetails, shape) => {
          const body: Record<string, unknown> = {
            grant_type: grantType,
            'pre-authorized_code': preAuthorizedCode,
            ...(tx === null ? {} : { tx_code: tx }),
            ...(authorizationDetails === null
              ? {}
              : {
                  authorization_details: shape.form
                    ? JSON.stringify(authorizationDetails)
                    : authorizationDetails,
                }),
          };
          await send({
            method: 'POST',
            path: '/v2/openidc/token',
            headers: {
              'content-type': shape.form ? 'application/x-www-form-urlencoded' : 'application/json',
              ...(shape.dpop === null ? {} : { dpop: shape.dpop }),
              ...(shape.attestation === null
                ? {}
                : {
                    'oauth-client-attestation': shape.attestation[0],
                    'oauth-client-attestation-pop': shape.attestation[1],
                  }),
            },
            body: shape.form ? formOf(body) : JSON.stringify(body),
          });
        },
      ),
      runs(700),
    );
  });

  test('the credential, deferred credential and notification endpoints: hostile proofs, JWEs, tokens', async () => {
    const targets = await issuerSetup();
    const path = targets.issuerPath;
    const spoil = fc.record(
      {
        typ: fc.oneof(fc.constantFrom('openid4vci-proof+jwt', 'jwt', 'kb+jwt'), nastyValue),
        aud: fc.oneof(fc.constant(targets.issuerId), fc.constant(`${targets.issuerId}/`), nastyValue),
        nonce: fc.oneof(nastyValue, fc.constantFrom('', 'eyJ0eXAiOiJKV1QifQ')),
        iat: fc.oneof(nastyValue, fc.constantFrom(0, 2 ** 40, Math.floor(Date.now() / 1000) - 3600)),
        header: fc.dictionary(
          fc.constantFrom('kid', 'x5c', 'key_attestation', 'trust_chain', 'jwk', 'crit', 'b64'),
          nastyValue,
          { maxKeys: 2 },
        ),
        alg: fc.constant<'none'>('none'),
      },
      { requiredKeys: [] },
    );
    // Mostly spoilt proofs: a genuine one would spend the configuration it asks for.
    const proof = fc.oneof(
      { weight: 8, arbitrary: spoil.map((s) => ({ spoil: s })) },
      { weight: 1, arbitrary: fc.constant({ spoil: {} }) },
      { weight: 2, arbitrary: nasty.map((text) => ({ text })) },
    );
    const request = fc
      .tuple(
        fc.constantFrom('pid', 'mdl', 'degree', 'badge', 'nope'),
        fc.array(proof, { minLength: 1, maxLength: 3 }),
      )
      .chain(([id, proofs]) =>
        fc.oneof(
          mutated({ credential_configuration_id: id, proofs: { jwt: proofs } }),
          mutated({ credential_identifier: id, proofs: { attestation: proofs } }),
          fc.constant({
            credential_configuration_id: id,
            proofs: { jwt: proofs },
            credential_response_encryption: { jwk: {}, enc: 'A128GCM' },
          }),
        ),
      );
    const materialiseProofs = async (value: unknown): Promise<unknown> => {
      if (Array.isArray(value)) return Promise.all(value.map(materialiseProofs));
      if (value !== null && typeof value === 'object') {
        const record = value as Record<string, unknown>;
        if ('spoil' in record && Object.keys(record).length === 1) {
          return walletProofFor(targets.issuerId, record['spoil'] as never);
        }
        if ('text' in record && Object.keys(record).length === 1) return record['text'];
        return Object.fromEntries(
          await Promise.all(Object.entries(record).map(async ([k, v]) => [k, await materialiseProofs(v)])),
        );
      }
      return value;
    };
    const flipped = (token: string, at: number) =>
      `${token.slice(0, at % token.length)}A${token.slice((at % token.length) + 1)}`;
    const authorization = fc.oneof(
      { weight: 6, arbitrary: fc.constant(`Bearer ${targets.fuzzToken}`) },
      fc.constantFrom(
        `DPoP ${targets.fuzzToken}`,
        `Bearer ${targets.issuedToken}`,
        `bearer  ${targets.fuzzToken}`,
        'Bearer',
        '',
      ),
      fc.nat().map((at) => `Bearer ${flipped(targets.fuzzToken, at)}`),
      nasty.map((text) => `Bearer ${asHeader(text)}`),
      fc.constant(`Bearer ${new UnsecuredJWT({ iss: server.url, sub: 'x' }).encode()}`),
    );
    const encryptTo = async (plaintext: string, enc: string, kid: string | null | undefined) =>
      new CompactEncrypt(new TextEncoder().encode(plaintext))
        .setProtectedHeader({
          alg: 'ECDH-ES',
          enc,
          ...(kid === undefined ? {} : { kid: kid ?? targets.encryptionJwk.kid }),
        })
        .encrypt(await importJWK(targets.encryptionJwk, 'ECDH-ES'));
    const envelope: fc.Arbitrary<Envelope> = fc.oneof(
      { weight: 5, arbitrary: fc.constant({ kind: 'json' as const }) },
      fc.record({
        kind: fc.constant('jwe' as const),
        enc: fc.constantFrom('A128GCM', 'A256GCM', 'A128CBC-HS256'),
        kid: fc.oneof(fc.constant(null), fc.constant(undefined), nasty),
        garble: fc.option(fc.nat()),
        plain: fc.option(nasty),
      }),
      fc.record({
        kind: fc.constant('raw' as const),
        text: nasty,
        type: fc.constantFrom('application/jwt', 'text/plain', 'application/json'),
      }),
    );
    type Envelope =
      | { kind: 'json' }
      | { kind: 'raw'; text: string; type: string }
      | {
          kind: 'jwe';
          enc: string;
          kid: string | null | undefined;
          garble: number | null;
          plain: string | null;
        };
    const bodyOf = async (value: unknown, shape: Envelope) => {
      if (shape.kind === 'raw') return { type: shape.type, body: shape.text };
      const text = JSON.stringify(await materialiseProofs(value)) ?? 'null';
      if (shape.kind === 'json') return { type: 'application/json', body: text };
      let jwe = await encryptTo(shape.plain ?? text, shape.enc, shape.kid);
      if (shape.garble !== null) jwe = flipped(jwe, shape.garble);
      return { type: 'application/jwt', body: jwe };
    };
    await check(
      fc.asyncProperty(
        request,
        authorization,
        envelope,
        fc.option(nasty.map(asHeader)),
        async (value, auth, shape, dpop) => {
          const { type, body } = await bodyOf(value, shape);
          await send({
            method: 'POST',
            path: `${path}/credential`,
            headers: { 'content-type': type, authorization: auth, ...(dpop === null ? {} : { dpop }) },
            body,
          });
        },
      ),
      runs(600),
    );
    await check(
      fc.asyncProperty(
        fc.oneof(
          mutated({ transaction_id: targets.transactionId }),
          fc.constant({
            transaction_id: targets.transactionId,
            credential_response_encryption: { jwk: {}, enc: 'A128GCM' },
          }),
        ),
        fc.oneof({ weight: 3, arbitrary: fc.constant(`Bearer ${targets.deferredToken}`) }, authorization),
        envelope,
        async (value, auth, shape) => {
          const { type, body } = await bodyOf(value, shape);
          await send({
            method: 'POST',
            path: `${path}/deferred-credential`,
            headers: { 'content-type': type, authorization: auth },
            body,
          });
        },
      ),
      runs(250),
    );
    await check(
      fc.asyncProperty(
        mutated({
          notification_id: targets.notificationId,
          event: 'credential_failure',
          event_description: 'fuzz',
        }),
        fc.oneof({ weight: 3, arbitrary: fc.constant(`Bearer ${targets.issuedToken}`) }, authorization),
        async (body, auth) =>
          send({
            method: 'POST',
            path: `${path}/notification`,
            headers: json({ authorization: auth }),
            body: JSON.stringify(body),
          }),
      ),
      runs(250),
    );
    // Malformed bodies at every issuer endpoint that takes one.
    await check(
      fc.asyncProperty(
        fc.constantFrom(
          ['PUT', '/v1/issuer/configurations/raw'],
          ['POST', '/v1/issuer/offers'],
          ['PUT', `/v1/issuer/offers/${targets.deferredOfferId}/claims`],
          ['POST', `/v1/issuer/credentials/${encodeURIComponent(targets.credentialIds[0]!)}/status`],
          ['POST', `${path}/nonce`],
          ['POST', `${path}/credential`],
          ['POST', `${path}/deferred-credential`],
          ['POST', `${path}/notification`],
        ),
        rawBodies,
        fc.constantFrom(
          'application/json',
          'application/jwt',
          'application/x-www-form-urlencoded',
          'text/plain',
          '',
        ),
        async ([method, target], body, type) =>
          send({
            method,
            path: target,
            headers: {
              'x-api-token': targets.token,
              authorization: `Bearer ${targets.fuzzToken}`,
              ...(type ? { 'content-type': type } : {}),
            },
            body,
          }),
      ),
      runs(300),
    );
  });

  test('a HAIP issuer at the token endpoint: DPoP and hostile Wallet Attestations', async () => {
    const tenant = await server.createMaster('Fuzz HAIP issuer');
    const enabled = await coffer(
      server,
      'issuer',
      'enable',
      '--client',
      String(tenant.clientId),
      '--haip',
      '--json',
    );
    assert.equal(enabled.code, 0, enabled.stderr);
    const tenantApi = (method: string, path: string, body?: unknown) =>
      server.request(method, path, { headers: { 'x-api-token': tenant.token }, ...(body ? { body } : {}) });
    assert.equal(
      (await tenantApi('PUT', '/v1/issuer/configurations/pid', ISSUER_CONFIGURATIONS['pid'])).status,
      201,
    );
    const codes: string[] = [];
    const offerIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const offer = await tenantApi('POST', '/v1/issuer/offers', {
        configuration_ids: ['pid'],
        claims: PID_CLAIMS,
      });
      const document = await server.request('GET', new URL(offer.body.data.credential_offer_uri).pathname);
      offerIds.push(offer.body.data.id);
      codes.push(document.body.grants[PRE_AUTHORIZED]['pre-authorized_code']);
    }
    const instance = await generateKeyPair('ES256', { extractable: true });
    const instanceJwk = await exportJWK(instance.publicKey);
    const tokenUrl = `${server.url}/v2/openidc/token`;
    const first = await fetch(tokenUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        dpop: await new SignJWT({
          htm: 'POST',
          htu: tokenUrl,
          iat: Math.floor(Date.now() / 1000),
          jti: randomUUID(),
        })
          .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: instanceJwk })
          .sign(instance.privateKey),
      },
      body: JSON.stringify({ grant_type: PRE_AUTHORIZED, 'pre-authorized_code': codes[0] }),
    });
    sent++;
    // The first proof has no server nonce: the answer gives one, so the proofs below get past DPoP.
    const dpopNonce = first.headers.get('dpop-nonce');
    assert.ok(dpopNonce, `no DPoP-Nonce: ${first.status} ${await first.text()}`);
    const signed = async (header: Record<string, unknown>, payload: Record<string, unknown>) => {
      try {
        return await new SignJWT(payload)
          .setProtectedHeader({ alg: 'ES256', ...header } as never)
          .sign(instance.privateKey);
      } catch {
        return `${encoded({ alg: 'ES256', ...header })}.${encoded(payload)}.c2lnbmF0dXJl`;
      }
    };
    const now = () => Math.floor(Date.now() / 1000);
    const certificate = fc.oneof(
      nastyValue,
      fc.constant([Buffer.from('not a certificate').toString('base64')]),
      fc.array(
        fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b).toString('base64')),
        { minLength: 1, maxLength: 6 },
      ),
    );
    const attestation = fc.record({
      typ: fc.oneof(fc.constant('oauth-client-attestation+jwt'), nastyValue),
      x5c: certificate,
      sub: fc.oneof(fc.constant('wallet'), nastyValue),
      exp: fc.oneof(fc.constant(now() + 600), nastyValue),
      cnf: fc.oneof(fc.constant({ jwk: instanceJwk }), nastyValue),
    });
    const pop = fc.record({
      typ: fc.oneof(fc.constant('oauth-client-attestation-pop+jwt'), nastyValue),
      iss: fc.oneof(fc.constant('wallet'), nastyValue),
      aud: fc.oneof(fc.constant(server.url), nastyValue),
      iat: fc.oneof(fc.constant(now()), nastyValue),
      jti: fc.oneof(fc.uuid(), nastyValue),
    });
    await check(
      fc.asyncProperty(
        fc.constantFrom(...codes),
        fc.oneof({ weight: 4, arbitrary: fc.constant('genuine') }, nasty.map(asHeader)),
        fc.option(fc.oneof(fc.tuple(attestation, pop), fc.tuple(nasty, nasty))),
        fc.option(nasty),
        async (code, dpop, headers, clientId) => {
          const proof =
            dpop === 'genuine'
              ? await new SignJWT({
                  htm: 'POST',
                  htu: tokenUrl,
                  iat: now(),
                  jti: randomUUID(),
                  nonce: dpopNonce,
                })
                  .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: instanceJwk })
                  .sign(instance.privateKey)
              : dpop;
          let attestationHeaders = {};
          if (headers !== null) {
            const [a, p] = headers;
            attestationHeaders =
              typeof a === 'string'
                ? {
                    'oauth-client-attestation': asHeader(a),
                    'oauth-client-attestation-pop': asHeader(p as string),
                  }
                : {
                    'oauth-client-attestation': await signed(
                      { typ: a.typ, x5c: a.x5c },
                      { sub: a.sub, exp: a.exp, cnf: a.cnf },
                    ),
                    'oauth-client-attestation-pop': await signed(
                      { typ: (p as { typ: unknown }).typ },
                      { ...(p as object), typ: undefined },
                    ),
                  };
          }
          await send({
            method: 'POST',
            path: '/v2/openidc/token',
            headers: { 'content-type': 'application/json', dpop: proof, ...attestationHeaders },
            body: JSON.stringify({
              grant_type: PRE_AUTHORIZED,
              'pre-authorized_code': code,
              ...(clientId === null ? {} : { client_id: clientId }),
            }),
          });
        },
      ),
      runs(250),
    );
    // Without a trusted wallet provider no offer was redeemed.
    for (const id of offerIds) {
      assert.equal((await tenantApi('GET', `/v1/issuer/offers/${id}`)).body.data.status, 'offered');
    }
  });

  test('the front page and the console: hostile cookies, client ids, filters and forms', async () => {
    await addAdmin(server, masterId, { email: 'fuzz.owner@example.org' }, 'owner');
    const { cookie } = await consoleLogin(server, 'fuzz.owner@example.org');
    const token = await formToken(server, cookie, masterId);
    const clientId = fc.oneof(fc.constant(String(masterId)), nasty);
    const cookieOf = fc.oneof(
      fc.constant(cookie),
      nasty.map((c) => `coffer_console=${c}`),
    );
    const page = fc.constantFrom('', '/audit', '/subclients', '/subclients/2', '/subclients/99999');
    const target = fc.oneof(
      fc.constantFrom('/', '/console', '/console/signed-out'),
      fc
        .tuple(clientId, page)
        .map(([id, at]) => `/console/clients/${encodeURIComponent(id.toWellFormed())}${at}`),
    );
    const query = fc.record(
      { type: nasty, since: nasty, until: nasty, cursor: nasty, created: nasty, x: nasty },
      { requiredKeys: [] },
    );
    await check(
      fc.asyncProperty(target, query, cookieOf, async (path, params, sessionCookie) =>
        send({
          method: 'GET',
          path: `${path}?${new URLSearchParams(params as Record<string, string>)}`,
          headers: { cookie: asHeader(sessionCookie), accept: 'text/html' },
        }),
      ),
      runs(400),
    );
    const validForm = {
      csrf_token: token,
      name: 'Fuzz console',
      address_1: '1 Road',
      country: 'GB',
      province: 'GB-ENG',
      city: 'London',
      timezone: 'Europe/London',
      domain: 'fuzz.example.org',
      subdomain: 'fuzz-console',
    };
    // The session's own token now and then, so that some forms reach the service's rules.
    await check(
      fc.asyncProperty(
        mutated(validForm),
        fc.boolean(),
        fc.constantFrom('', '/2', '/99999'),
        async (body, asForm, edit) =>
          send({
            method: 'POST',
            path: `/console/clients/${masterId}/subclients${edit}`,
            headers: {
              cookie: asHeader(cookie),
              origin: server.url,
              'content-type': asForm ? 'application/x-www-form-urlencoded' : 'application/json',
            },
            body: asForm ? formOf(body) : JSON.stringify(body),
          }),
      ),
      runs(400),
    );
    await check(
      fc.asyncProperty(nasty, cookieOf, async (csrf, sessionCookie) =>
        send({
          method: 'POST',
          path: '/console/sign-out',
          headers: {
            cookie: asHeader(sessionCookie),
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: formOf({ csrf_token: csrf }),
        }),
      ),
      runs(200),
    );
  });

  test("the console's issuer pages: hostile ids, pages and forms", async () => {
    const targets = await issuerSetup();
    await addAdmin(server, targets.clientId, { email: 'fuzz.issuer@example.org' }, 'owner');
    const { cookie } = await consoleLogin(server, 'fuzz.issuer@example.org');
    const token = await formToken(server, cookie, targets.clientId);
    const at = `/console/clients/${targets.clientId}/issuer`;
    const id = fc.oneof(fc.constantFrom('pid', 'degree', ...targets.credentialIds), nasty);
    const page = fc.oneof(
      fc.constantFrom('', '/offers', '/credentials', '/configurations/new'),
      id.map((x) => `/configurations/${encodeURIComponent(x.toWellFormed())}`),
      id.map((x) => `/configurations/${encodeURIComponent(x.toWellFormed())}/delete`),
    );
    const query = fc.record(
      { page: nasty, configuration: id, done: nasty, changed: nasty },
      { requiredKeys: [] },
    );
    await check(
      fc.asyncProperty(page, query, async (path, params) =>
        send({
          method: 'GET',
          path: `${at}${path}?${new URLSearchParams(params as Record<string, string>)}`,
          headers: { cookie: asHeader(cookie), accept: 'text/html' },
        }),
      ),
      runs(300),
    );
    // Valid forms with the session's token, mutated, so that some reach the services' rules.
    const forms: Array<[fc.Arbitrary<string>, Record<string, unknown>]> = [
      [
        fc.constantFrom('/configurations', '/configurations/fuzz'),
        {
          csrf_token: token,
          form: 'fields',
          id: 'fuzz',
          format: 'dc+sd-jwt',
          type_value: 'urn:fuzz',
          claims: 'a | A',
          status: 'on',
        },
      ],
      [
        fc.constantFrom('/configurations', '/configurations/degree'),
        {
          csrf_token: token,
          form: 'json',
          json_id: 'fuzz2',
          json: '{"format":"mso_mdoc","doctype":"x","claims":[]}',
        },
      ],
      [
        fc.constant('/offers'),
        { csrf_token: token, configuration: 'pid', claim_0: 'x', expires_in_minutes: '5', tx_code: 'on' },
      ],
      [
        id.map((x) => `/credentials/${encodeURIComponent(x.toWellFormed())}/status`),
        { csrf_token: token, status: 'suspended' },
      ],
      // Deleting only what does not exist: the configurations stay for the offers.
      [
        nasty.map((x) => `/configurations/${encodeURIComponent(x.toWellFormed())}/delete`),
        { csrf_token: token },
      ],
    ];
    await check(
      fc.asyncProperty(
        fc.constantFrom(...forms).chain(([path, form]) => fc.tuple(path, mutated(form))),
        fc.boolean(),
        async ([path, body], asForm) =>
          send({
            method: 'POST',
            path: `${at}${path}`,
            headers: {
              cookie: asHeader(cookie),
              origin: server.url,
              'content-type': asForm ? 'application/x-www-form-urlencoded' : 'application/json',
            },
            body: asForm ? formOf(body) : JSON.stringify(body),
          }),
      ),
      runs(400),
    );
  });

  test('the console verifier pages: hostile request ids, cursors and new-request forms', async () => {
    await addAdmin(server, masterId, { email: 'fuzz.verifier@example.org' }, 'operator');
    const { cookie } = await consoleLogin(server, 'fuzz.verifier@example.org');
    const token = await formToken(server, cookie, masterId);
    const root = `/console/clients/${masterId}/verifier`;
    const at = fc.oneof(
      fc.constantFrom('', '/new', `/requests/${verifierIds.open}`, `/requests/${verifierIds.sameDevice}`),
      nasty.map((id) => `/requests/${encodeURIComponent(id.toWellFormed())}`),
    );
    await check(
      fc.asyncProperty(at, nasty, fc.boolean(), async (path, cursor, json) =>
        send({
          method: 'GET',
          path: `${root}${path}?${new URLSearchParams({ cursor: cursor.toWellFormed() })}`,
          headers: { cookie: asHeader(cookie), accept: json ? 'application/json' : 'text/html' },
        }),
      ),
      runs(200),
    );
    const validForm = {
      csrf_token: token,
      format: 'dc+sd-jwt',
      credential_type: PID_VCT,
      claims: 'given_name\naddress/*/locality',
      trusted_issuers: verifierIssuer.ca.pem,
      check_status: 'on',
      expires_in: '600',
      client_id_prefix: 'x509_hash',
    };
    await check(
      fc.asyncProperty(mutated(validForm), fc.boolean(), async (body, asForm) =>
        send({
          method: 'POST',
          path: `${root}/requests`,
          headers: {
            cookie: asHeader(cookie),
            origin: server.url,
            'content-type': asForm ? 'application/x-www-form-urlencoded' : 'application/json',
          },
          body: asForm ? formOf(body) : JSON.stringify(body),
        }),
      ),
      runs(200),
    );
  });

  test("the console's apps and users: hostile ids, e-mail addresses and forms", async () => {
    await addAdmin(server, masterId, { email: 'fuzz.users@example.org' }, 'owner');
    const { cookie } = await consoleLogin(server, 'fuzz.users@example.org');
    const token = await formToken(server, cookie, masterId);
    const userId = fc.oneof(fc.constantFrom('1', '2', '99999'), nasty);
    const target = fc.oneof(
      fc.constantFrom('/apps', '/users'),
      fc
        .tuple(userId, fc.constantFrom('', '/erase'))
        .map(([id, at]) => `/users/${encodeURIComponent(id.toWellFormed())}${at}`),
    );
    const query = fc.record({ erased: nasty, created: nasty, x: nasty }, { requiredKeys: [] });
    await check(
      fc.asyncProperty(target, query, async (path, params) =>
        send({
          method: 'GET',
          path: `/console/clients/${masterId}${path}?${new URLSearchParams(params as Record<string, string>)}`,
          headers: { cookie: asHeader(cookie), accept: 'text/html' },
        }),
      ),
      runs(300),
    );
    const validUser = {
      csrf_token: token,
      email_address: 'fuzz.console.user@example.org',
      first_name: 'Fuzz',
      last_name: 'Console',
      middle_name: '',
      user_name: '',
      date_of_birth: '1990-01-01',
      email: 'fuzz.console.user@example.org',
      confirm: 'erase',
    };
    // The session's own token now and then, so that some forms reach the services' rules. Erasures
    // name only ids no user of the fuzz tenant has, so the other blocks keep their users.
    await check(
      fc.asyncProperty(
        mutated(validUser),
        fc.boolean(),
        fc.constantFrom('/users', '/users/find', '/users/99999/erase', '/users/0/erase'),
        async (body, asForm, path) =>
          send({
            method: 'POST',
            path: `/console/clients/${masterId}${path}`,
            headers: {
              cookie: asHeader(cookie),
              origin: server.url,
              'content-type': asForm ? 'application/x-www-form-urlencoded' : 'application/json',
            },
            body: asForm ? formOf(body) : JSON.stringify(body),
          }),
      ),
      runs(400),
    );
  });

  test("the console's app writes: hostile app ids, URIs, kinds and wallet log-in forms", async () => {
    // A master of its own, so that the apps created and the secrets rotated here touch no other block.
    const tenant = await server.createMaster('Fuzz apps');
    await addAdmin(server, tenant.clientId, { email: 'fuzz.apps@example.org' }, 'owner');
    const { cookie } = await consoleLogin(server, 'fuzz.apps@example.org');
    const token = await formToken(server, cookie, tenant.clientId);
    const appId = fc.oneof(fc.constantFrom(String(tenant.clientId), String(masterId), '0', '99999'), nasty);
    await check(
      fc.asyncProperty(appId, async (id) =>
        send({
          method: 'GET',
          path: `/console/clients/${tenant.clientId}/apps/${encodeURIComponent(id.toWellFormed())}/rotate`,
          headers: { cookie: asHeader(cookie), accept: 'text/html' },
        }),
      ),
      runs(100),
    );
    const validApp = {
      csrf_token: token,
      name: 'Fuzz app',
      redirect_uris: 'https://fuzz.example/cb\nhttps://fuzz.example/cb2',
      post_logout_redirect_uris: 'https://fuzz.example/bye',
      kind: 'confidential',
      refresh_token: 'yes',
      confirm: 'rotate',
      wallet_login: 'on',
      wallet_login_json: '{"dcql_query":{"credentials":[]},"account_claim":["email"]}',
    };
    await check(
      fc.asyncProperty(
        mutated(validApp),
        fc.boolean(),
        appId,
        fc.constantFrom('', '/rotate', '/wallet-login', null),
        async (body, asForm, id, at) =>
          send({
            method: 'POST',
            path: `/console/clients/${tenant.clientId}/apps${at === null ? '' : `/${encodeURIComponent(id.toWellFormed())}${at}`}`,
            headers: {
              cookie: asHeader(cookie),
              origin: server.url,
              'content-type': asForm ? 'application/x-www-form-urlencoded' : 'application/json',
            },
            body: asForm ? formOf(body) : JSON.stringify(body),
          }),
      ),
      runs(400),
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
      ['POST', '/v1/verifier/requests'],
      ['POST', `/v1/verifier/requests/${verifierIds.open}/request-object`],
      ['POST', `/v1/verifier/requests/${verifierIds.open}/response`],
      ['POST', `/v1/verifier/requests/${verifierIds.dcApi}/dc-api-response`],
    ] as const;
    await check(
      fc.asyncProperty(
        fc.constantFrom(...targets),
        rawBodies,
        fc.constantFrom(
          'application/json',
          'application/x-www-form-urlencoded',
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
