import assert from 'node:assert/strict';
import type { JsonWebKey } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { calculateJwkThumbprint, decodeJwt, type JWK } from 'jose';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import type { SeenAttestation } from '../helpers/issuers/openid4vci-issuer.ts';
import { PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { checkSdJwtPresentation } from '../oid4vp/format-checks.ts';
import { createWalletProvider, startHaipWorld, type WalletProviderFiles } from './haip-helpers.ts';
import {
  decideIssuance,
  followAuthorization,
  type IssuanceWorld,
  issuanceView,
  listed,
  presentToVerifier,
  startIssuance,
  startIssuanceWorld,
} from './issuance-helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
type Json = any;

const pidQuery = {
  id: 'pid',
  format: 'dc+sd-jwt',
  meta: { vct_values: [PID_VCT] },
  claims: [{ path: ['given_name'] }],
};

/** The claims a Wallet Attestation may carry: nothing that tells one issuance from another. */
const ATTESTATION_CLAIMS = ['cnf', 'exp', 'iat', 'iss', 'sub'];

const thumbprintOf = (jwk: unknown) => calculateJwkThumbprint(jwk as JWK);

/** The issuer offers a PID by the authorization code grant; the person opens the offer. */
async function offeredPid(world: IssuanceWorld): Promise<string> {
  const { byReferenceQuery } = await world.issuer.createOffer({
    configurationIds: ['pid-sd-jwt'],
    grant: 'authorization_code',
  });
  return startIssuance(world, byReferenceQuery);
}

/** Approves an interaction, goes through the issuer's authorization page and back. */
async function authorizeAndReturn(world: IssuanceWorld, interactionPath: string, body: object = {}) {
  const answer = await decideIssuance(world, interactionPath, { decision: 'approve', ...body });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.ok(answer.body.redirect_to, JSON.stringify(answer.body));
  const callback = await followAuthorization(world, answer.body.redirect_to);
  const done = await fetch(callback, { headers: { cookie: world.cookie!, accept: 'application/json' } });
  return { status: done.status, body: (await done.json()) as Json };
}

/** The person asks the issuer from their wallet (no offer) and logs in the first time. */
async function startFromWallet(world: IssuanceWorld, query: Record<string, string>) {
  const started = await fetch(
    `${world.server.url}/v1/oid4vci/start?${new URLSearchParams({ credential_issuer: world.issuer.credentialIssuer, ...query })}`,
    {
      redirect: 'manual',
      headers: { ...(world.cookie ? { cookie: world.cookie } : {}), accept: 'application/json' },
    },
  );
  return { status: started.status, location: started.headers.get('location'), text: await started.text() };
}

function attestationsAt(world: IssuanceWorld, from: number): SeenAttestation[] {
  return world.issuer.events.attestations.slice(from);
}

for (const kind of DATABASE_KINDS) {
  describe(`HAIP 1.0 issuance: PAR, PKCE, DPoP, scope, Wallet Attestation and key attestations, on ${kind}`, () => {
    let provider: WalletProviderFiles;
    let world: IssuanceWorld;
    let close: () => Promise<void>;
    before(async () => {
      ({ world, provider, close } = await startHaipWorld(
        kind,
        {},
        { batchSize: 3, signedMetadata: 'trusted' },
      ));
    });
    after(async () => {
      await close?.();
    });

    test('an offer: the wallet authenticates with a Wallet Attestation at PAR and token, attests the batch keys, and the credential is stored and presentable', async () => {
      const interactionPath = await offeredPid(world);
      const view = await issuanceView(world, interactionPath);
      assert.equal(view.issuer.verified, true, 'the signed metadata chains to ISSUER_TRUST_ANCHORS');
      const done = await authorizeAndReturn(world, interactionPath);
      assert.equal(done.status, 200, JSON.stringify(done.body));
      assert.equal(done.body.received.length, 1);

      const [authorization] = world.issuer.events.authorizationRequests;
      assert.equal(authorization!.viaPar, true);
      assert.equal(authorization!.codeChallengeMethod, 'S256');
      const token = world.issuer.events.tokenRequests.at(-1)!;
      assert.equal(token.ok, true, token.error);
      assert.equal(token.dpop, true);

      const seen = world.issuer.events.attestations;
      assert.deepEqual(
        seen.map((a) => a.endpoint),
        ['par', 'token'],
      );
      for (const attestation of seen) {
        assert.equal(attestation.header['typ'], 'oauth-client-attestation+jwt');
        assert.equal(attestation.header['alg'], 'ES256');
        assert.deepEqual(attestation.header['x5c'], provider.x5c, 'the whole provider chain is in x5c');
        assert.equal(attestation.payload['iss'], world.server.env['PUBLIC_URL']);
        assert.equal(attestation.payload['sub'], world.server.env['PUBLIC_URL'], 'sub is the client_id');
        assert.deepEqual(Object.keys(attestation.payload).sort(), ATTESTATION_CLAIMS);
        assert.equal(attestation.pop['iss'], attestation.payload['sub']);
        assert.equal(attestation.pop['aud'], world.issuer.credentialIssuer);
      }
      assert.equal(
        authorization!.clientId,
        seen[0]!.payload['sub'],
        'the PAR client_id is the attestation sub',
      );
      assert.notEqual(seen[0]!.pop['jti'], seen[1]!.pop['jti'], 'a fresh proof of possession each time');
      assert.equal(
        await thumbprintOf((seen[0]!.payload['cnf'] as Json).jwk),
        await thumbprintOf((seen[1]!.payload['cnf'] as Json).jwk),
        'one instance key through the issuance',
      );

      const request = world.issuer.events.credentialRequests.at(-1)!;
      assert.equal(request.ok, true, request.error);
      assert.equal(request.proofs, 3, 'a proof per copy of the batch');
      const keyAttestations = world.issuer.events.keyAttestations;
      assert.equal(keyAttestations.length, 3, 'every proof carries the key attestation');
      const [keyAttestation] = keyAttestations;
      assert.equal(keyAttestation!.header['typ'], 'key-attestation+jwt');
      assert.deepEqual(keyAttestation!.header['x5c'], provider.x5c);
      const attested = keyAttestation!.payload['attested_keys'] as JsonWebKey[];
      assert.equal(attested.length, 3, 'one attestation names every key of the batch');
      assert.deepEqual(
        await Promise.all(attested.map(thumbprintOf)),
        await Promise.all((request.holderKeys as JsonWebKey[]).map(thumbprintOf)),
      );
      assert.equal(keyAttestation!.payload['key_storage'], undefined, 'no attack resistance is claimed');
      assert.equal(keyAttestation!.payload['user_authentication'], undefined);
      assert.equal(typeof keyAttestation!.payload['nonce'], 'string');
      assert.ok(!attested.some((k) => 'd' in k), 'no private member');

      const entries = await listed(world);
      assert.equal(entries.length, 1);
      const { received, audience } = await presentToVerifier(world, { credentials: [pidQuery] });
      const presentation = received.vpToken!['pid']![0] as string;
      const cnf = (decodeJwt(presentation.split('~')[0]!)['cnf'] as { jwk: JsonWebKey }).jwk;
      await checkSdJwtPresentation(presentation, world.issuer.identity, cnf, audience);
      assert.ok(
        attested.some((k) => k.x === cnf.x),
        'the presented copy is bound to an attested key',
      );
    });

    test('wallet-initiated: an issuer address and a configuration start the same flow, with its scope; nothing links it to the first issuance', async () => {
      const from = world.issuer.events.attestations.length;
      const keyAttestationsBefore = world.issuer.events.keyAttestations.length;
      const started = await startFromWallet(world, { credential_configuration_id: 'mdl-mdoc' });
      assert.equal(started.status, 303, started.text);
      const interactionPath = started.location!;
      const view = await issuanceView(world, interactionPath);
      assert.equal(view.wallet_initiated, true);
      assert.deepEqual(
        view.credentials.map((c: Json) => c.id),
        ['mdl-mdoc'],
      );
      const done = await authorizeAndReturn(world, interactionPath);
      assert.equal(done.status, 200, JSON.stringify(done.body));
      assert.equal(done.body.received[0].format, 'mso_mdoc');
      const authorization = world.issuer.events.authorizationRequests.at(-1)!;
      assert.equal(authorization.issuerState, undefined, 'no offer, no issuer_state');

      const first = world.issuer.events.attestations[0]!;
      const second = attestationsAt(world, from)[0]!;
      assert.equal(second.payload['sub'], first.payload['sub']);
      assert.notEqual(
        await thumbprintOf((second.payload['cnf'] as Json).jwk),
        await thumbprintOf((first.payload['cnf'] as Json).jwk),
        'a fresh instance key per issuance',
      );
      const before = new Set(
        world.issuer.events.keyAttestations
          .slice(0, keyAttestationsBefore)
          .flatMap((k) => (k.payload['attested_keys'] as JsonWebKey[]).map((j) => j.x)),
      );
      const now = world.issuer.events.keyAttestations
        .slice(keyAttestationsBefore)
        .flatMap((k) => (k.payload['attested_keys'] as JsonWebKey[]).map((j) => j.x));
      assert.ok(now.length > 0 && now.every((x) => !before.has(x)), 'no key is attested twice');
    });

    test('wallet-initiated without a configuration: the person chooses; the choice is checked', async () => {
      const started = await startFromWallet(world, {});
      assert.equal(started.status, 303, started.text);
      const interactionPath = started.location!;
      const view = await issuanceView(world, interactionPath);
      assert.deepEqual(
        view.credentials.map((c: Json) => c.id),
        ['pid-sd-jwt', 'mdl-mdoc', 'degree-jwt-vc'],
      );
      const page = await fetch(`${world.server.url}${interactionPath}`, {
        headers: { cookie: world.cookie! },
      });
      const html = await page.text();
      assert.match(html, /Which credentials do you want\?/);
      assert.equal(html.match(/type="checkbox" name="credential"/g)?.length, 3);

      const unchosen = await decideIssuance(world, interactionPath, { decision: 'approve' });
      assert.equal(unchosen.status, 400);
      assert.equal(unchosen.body.details[0].path, '/body/credential_configuration_ids');
      const unknown = await decideIssuance(world, interactionPath, {
        decision: 'approve',
        credential_configuration_ids: ['passport'],
      });
      assert.equal(unknown.status, 400);
      assert.match(unknown.body.error_description, /listed no credential passport/);
      const empty = await decideIssuance(world, interactionPath, {
        decision: 'approve',
        credential_configuration_ids: [],
      });
      assert.equal(empty.status, 400);

      const pars = world.issuer.events.parRequests;
      const done = await authorizeAndReturn(world, interactionPath, {
        credential_configuration_ids: ['pid-sd-jwt'],
      });
      assert.equal(done.status, 200, JSON.stringify(done.body));
      assert.equal(world.issuer.events.parRequests, pars + 1);
      assert.deepEqual(
        done.body.received.map((r: Json) => r.format),
        ['dc+sd-jwt'],
      );
    });

    test('an offer takes no credential_configuration_ids; a start without a usable issuer address is refused', async () => {
      const interactionPath = await offeredPid(world);
      const refused = await decideIssuance(world, interactionPath, {
        decision: 'approve',
        credential_configuration_ids: ['pid-sd-jwt'],
      });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.details[0].path, '/body/credential_configuration_ids');

      for (const [query, pattern] of [
        [{ credential_issuer: 'http://issuer.example' }, /https address/],
        [{ credential_issuer: 'not an address' }, /not an address/],
        [{ credential_issuer: `${world.issuer.credentialIssuer}?x=1` }, /without query/],
        [
          { credential_issuer: world.issuer.credentialIssuer, credential_configuration_id: 'passport' },
          /no credential configuration passport/,
        ],
      ] as const) {
        const answer = await fetch(`${world.server.url}/v1/oid4vci/start?${new URLSearchParams(query)}`, {
          headers: { accept: 'application/json' },
        });
        assert.equal(answer.status, 400, JSON.stringify(query));
        const body = (await answer.json()) as Json;
        assert.equal(body.error, 'invalid_request');
        assert.match(body.error_description, pattern);
      }
      const missing = await fetch(`${world.server.url}/v1/oid4vci/start`, {
        headers: { accept: 'application/json' },
      });
      assert.equal(missing.status, 400);
      const page = await fetch(`${world.server.url}/v1/oid4vci/start?credential_issuer=http%3A%2F%2Fx`);
      assert.equal(page.status, 400);
      assert.match(await page.text(), /Credentials cannot be added from this issuer/);
    });

    test('the issuer refuses a replayed proof of possession, a PAR without attestation, and an expired attestation', async () => {
      const par = world.issuer.events.attestations.find((a) => a.endpoint === 'par')!;
      const {
        'content-length': _length,
        host: _host,
        connection: _connection,
        ...headers
      } = par.request.headers;
      const replayed = await postToIssuer(world, '/par', headers, par.request.body);
      assert.equal(replayed.status, 401, replayed.text);
      assert.match(replayed.text, /used before/);

      const { 'oauth-client-attestation': _a, 'oauth-client-attestation-pop': _p, ...bare } = headers;
      const missing = await postToIssuer(world, '/par', bare, par.request.body);
      assert.ok([400, 401].includes(missing.status), missing.text);
      assert.match(missing.text, /invalid_client/);
      assert.match(missing.text, /Missing required client attestation/);

      // The attestation lives 10 minutes: judged an hour later, it has expired.
      world.issuer.setAttestationClockSkew(3600);
      try {
        const interactionPath = await offeredPid(world);
        const before = (await listed(world)).length;
        const answer = await decideIssuance(world, interactionPath, { decision: 'approve' });
        assert.equal(answer.status, 400, JSON.stringify(answer.body));
        assert.match(
          answer.body.error_description,
          /authorization server did not take the authorization request/,
        );
        assert.match(
          world.issuer.events.errors.at(-1)!,
          /Error verifying client attestation\. client attestation jwt verification failed\. jwt 'exp' is in the past/,
        );
        assert.equal((await listed(world)).length, before);
      } finally {
        world.issuer.setAttestationClockSkew(0);
      }
    });

    test('a wallet whose provider the issuer does not trust, and one without a provider key, get nothing', async () => {
      const stranger = await createWalletProvider('Stranger');
      const untrusted = await startIssuanceWorld(kind, { shared: world.issuer }, stranger.env);
      const withoutProvider = await startIssuanceWorld(kind, { shared: world.issuer });
      try {
        const errors = world.issuer.events.errors.length;
        const path1 = await offeredPid(untrusted);
        const refused = await decideIssuance(untrusted, path1, { decision: 'approve' });
        assert.equal(refused.status, 400, JSON.stringify(refused.body));
        assert.match(refused.body.error_description, /did not take the authorization request/);
        assert.match(
          world.issuer.events.errors.slice(errors).join('\n'),
          /Error verifying client attestation\. client attestation jwt verification failed/,
        );
        assert.equal((await listed(untrusted)).length, 0);

        const pars = world.issuer.events.parRequests;
        const path2 = await offeredPid(withoutProvider);
        const unable = await decideIssuance(withoutProvider, path2, { decision: 'approve' });
        assert.equal(unable.status, 400);
        assert.match(
          unable.body.error_description,
          /admits only wallets that authenticate with a Wallet Attestation/,
        );
        assert.equal(world.issuer.events.parRequests, pars, 'nothing was sent to the issuer');
      } finally {
        await untrusted.close();
        await withoutProvider.close();
        await rm(stranger.dir, { recursive: true, force: true });
      }
    });
  });
}

/** A raw POST to the test issuer over its TLS CA (for replay and tampering). */
async function postToIssuer(
  world: IssuanceWorld,
  endpoint: string,
  headers: Record<string, string>,
  body: string,
) {
  const https = await import('node:https');
  const url = new URL(`${world.issuer.credentialIssuer}${endpoint}`);
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = https.request(url, { method: 'POST', headers, ca: world.issuer.tlsCaPem }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    request.on('error', reject);
    request.end(body);
  });
}

for (const kind of DATABASE_KINDS) {
  describe(`HAIP 1.0 issuance with the attestation proof type, on ${kind}`, () => {
    let world: IssuanceWorld;
    let close: () => Promise<void>;
    before(async () => {
      ({ world, close } = await startHaipWorld(kind, { proofType: 'attestation' }, { batchSize: 2 }));
    });
    after(async () => {
      await close?.();
    });

    test('one key attestation names both keys of the batch, without a proof of possession; both copies are kept and presentable', async () => {
      const done = await authorizeAndReturn(world, await offeredPid(world));
      assert.equal(done.status, 200, JSON.stringify(done.body));
      const request = world.issuer.events.credentialRequests.at(-1)!;
      assert.equal(request.ok, true, request.error);
      assert.equal(request.proofs, 1, 'a single attestation proof');
      const [keyAttestation] = world.issuer.events.keyAttestations;
      assert.equal((keyAttestation!.payload['attested_keys'] as unknown[]).length, 2);
      assert.equal(world.issuer.issuedHolderKeys.length, 2, 'a credential per attested key');

      const { received, audience } = await presentToVerifier(world, { credentials: [pidQuery] });
      const presentation = received.vpToken!['pid']![0] as string;
      const cnf = (decodeJwt(presentation.split('~')[0]!)['cnf'] as { jwk: JsonWebKey }).jwk;
      await checkSdJwtPresentation(presentation, world.issuer.identity, cnf, audience);
    });
  });
}

for (const kind of DATABASE_KINDS) {
  describe(`HAIP 1.0 issuance from an issuer that demands certified key storage, on ${kind}`, () => {
    let world: IssuanceWorld;
    let close: () => Promise<void>;
    before(async () => {
      ({ world, close } = await startHaipWorld(kind, { keyStorage: ['iso_18045_high'] }));
    });
    after(async () => {
      await close?.();
    });

    test("the demand read from the library's metadata is refused before the person is sent to the issuer", async () => {
      const answer = await decideIssuance(world, await offeredPid(world), { decision: 'approve' });
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.match(
        answer.body.error_description,
        /issued only to keys attested as iso_18045_high \(key_storage\).*claims none/,
      );
      assert.equal(world.issuer.events.parRequests, 0, 'nothing was sent to the issuer');
      assert.equal((await listed(world)).length, 0);
    });
  });
}
