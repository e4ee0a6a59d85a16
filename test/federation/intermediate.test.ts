// biome-ignore-all lint/suspicious/noExplicitAny: tests read arbitrary JSON
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { resolveTrustChains } from '@openid-federation/core';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, type JWK } from 'jose';
import { federationKeysOf } from '../../src/federation/federation-keys.ts';
import { listFederationKeys } from '../../src/federation/federation-repository.ts';
import { createOutboundClient } from '../../src/http/outbound.ts';
import { createFieldCipher } from '../../src/keys/field-cipher.ts';
import {
  createFederationResolver,
  outboundStatementFetcher,
} from '../../src/trust/federation/federation-resolver.ts';
import { coffer } from '../helpers/cli.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startSecondInstance } from '../helpers/server.ts';
import { type InteropIssuer, startInteropIssuer } from '../issuer/test-wallet.ts';
import { startTestFederation, type TestEntity, type TestFederation } from '../trust/test-federation.ts';
import { es256Verifies, fetchTrusting } from './federation-test-helpers.ts';

/**
 * Coffer as its tenants' federation intermediate (issue #41): after `coffer federation enable`
 * under a test anchor (a federation made in the test, served on 127.0.0.1), a tenant issuer's
 * trust chain — its Entity Configuration, Coffer's Subordinate Statement about it, the anchor's
 * about Coffer — is resolved by @openid-federation/core, an independent resolver, and by Coffer's
 * own; the resolved metadata names the key that signs the tenant's credentials. Keys rotate with
 * an overlap; bad fetches are 4xx.
 */

for (const kind of DATABASE_KINDS) {
  describe(`Coffer as a federation intermediate, on ${kind}`, () => {
    let world: InteropIssuer;
    let federation: TestFederation;
    let anchor: TestEntity;
    let trustedFetch: typeof fetch;

    before(async () => {
      federation = await startTestFederation();
      anchor = await federation.entity('anchor');
      world = await startInteropIssuer(kind);
      trustedFetch = fetchTrusting([world.front.ca.pem, federation.ca.pem]);
    });
    after(async () => {
      await world?.close();
      await federation?.close();
    });

    test('before enable there is no federation entity: 404 with the error body', async () => {
      for (const path of [
        '/.well-known/openid-federation',
        `/issuers/${world.clientId}/.well-known/openid-federation`,
        '/federation/list',
      ]) {
        const response = await world.front.fetch(`${world.front.url}${path}`);
        assert.equal(response.status, 404, path);
        assert.equal(((await response.json()) as any).error, 'not_found');
      }
    });

    test('a tenant issuer resolves through Coffer to the anchor, by an independent resolver and by Coffer', async () => {
      const enabled = await coffer(
        world.server,
        'federation',
        'enable',
        '--authority-hint',
        anchor.id,
        '--name',
        'Coffer Test',
        '--json',
      );
      assert.equal(enabled.code, 0, enabled.stderr);
      const { entity_id: cofferId, jwks } = JSON.parse(enabled.stdout);
      assert.equal(cofferId, world.front.url);
      // The anchor registers Coffer with the keys the command printed.
      federation.external(cofferId, jwks.keys, [anchor]);

      const list = await world.front.fetch(`${world.front.url}/federation/list`);
      assert.deepEqual(await list.json(), [world.issuerId]);

      // The library fetches with the global fetch in places; for this call it trusts the test CAs.
      const globalFetch = globalThis.fetch;
      globalThis.fetch = trustedFetch;
      let chains: Awaited<ReturnType<typeof resolveTrustChains>>;
      try {
        chains = await resolveTrustChains({
          entityId: world.issuerId,
          trustAnchorEntityIds: [anchor.id],
          verifyJwtCallback: es256Verifies,
          fetchCallback: trustedFetch,
        } as any);
      } finally {
        globalThis.fetch = globalFetch;
      }
      assert.equal(chains.length, 1, 'one chain');
      const [chain] = chains as any[];
      const links = chain.chain.map((statement: any) => `${statement.iss} > ${statement.sub}`);
      assert.ok(links.includes(`${cofferId} > ${world.issuerId}`), 'Coffer vouches for its tenant');
      assert.ok(links.includes(`${anchor.id} > ${cofferId}`), 'the anchor vouches for Coffer');
      assert.equal(chain.trustAnchorEntityConfiguration.sub, anchor.id);
      const issuerMetadata = chain.resolvedLeafMetadata.openid_credential_issuer;
      assert.equal(issuerMetadata.credential_issuer, world.issuerId);
      const expected = await calculateJwkThumbprint(await exportJWK(world.leaf.keys.publicKey));
      assert.equal(
        await calculateJwkThumbprint(issuerMetadata.jwks.keys[0]),
        expected,
        "the key that signs the tenant's credentials",
      );

      const resolver = createFederationResolver({
        anchors: [federation.anchorOf(anchor)],
        fetchStatement: outboundStatementFetcher(
          createOutboundClient({ allowPrivateTargets: true, ca: [world.front.ca.pem, federation.ca.pem] }),
        ),
        now: () => new Date(),
      });
      const own = await resolver.resolve(world.issuerId);
      assert.deepEqual(own.entities, [world.issuerId, cofferId, anchor.id]);
      assert.equal(own.metadata['federation_entity']?.['organization_name'], 'University');
    });

    test('the fetch endpoint: 400 without sub, 404 for an entity that is not a subordinate', async () => {
      const fetchSub = (query: string) => world.front.fetch(`${world.front.url}/federation/fetch${query}`);
      const missing = await fetchSub('');
      assert.equal(missing.status, 400);
      assert.equal(((await missing.json()) as any).error, 'invalid_request');
      for (const sub of [
        `${world.front.url}/issuers/999999`,
        'https://elsewhere.example/issuers/1',
        `${world.front.url}/nobody`,
      ]) {
        const answer = await fetchSub(`?sub=${encodeURIComponent(sub)}`);
        assert.equal(answer.status, 404, sub);
      }
      const good = await fetchSub(`?sub=${encodeURIComponent(world.issuerId)}`);
      assert.equal(good.status, 200);
      assert.equal(good.headers.get('content-type'), 'application/entity-statement+jwt');
      const claims = decodeJwt(await good.text());
      assert.equal(claims.iss, world.front.url);
      assert.equal(claims.sub, world.issuerId);
    });

    test('keys rotate with an overlap: the new key is published at once and signs a day later', async () => {
      const before = decodeProtectedHeader(
        await (await world.front.fetch(`${world.front.url}/.well-known/openid-federation`)).text(),
      );
      const rotated = await coffer(world.server, 'federation', 'keys', 'rotate', '--json');
      assert.equal(rotated.code, 0, rotated.stderr);
      const { new_kid: newKid, jwks } = JSON.parse(rotated.stdout);
      assert.equal(jwks.keys.length, 2, 'old and new published together');
      const now = await (await world.front.fetch(`${world.front.url}/.well-known/openid-federation`)).text();
      assert.equal(decodeProtectedHeader(now).kid, before.kid, 'still signed by the key the anchor knows');
      assert.deepEqual(
        (decodeJwt(now).jwks as { keys: JWK[] }).keys.map((k) => k.kid).sort(),
        [before.kid, newKid].sort(),
      );
      const cipher = createFieldCipher(world.server.masterKey);
      const rows = await listFederationKeys(world.server.database.db);
      assert.equal(federationKeysOf(rows, cipher, new Date(Date.now() + 25 * 3600_000))?.signer.kid, newKid);
      const weekOn = federationKeysOf(rows, cipher, new Date(Date.now() + 9 * 86_400_000));
      assert.deepEqual(
        weekOn?.jwks.map((k) => k.kid),
        [newKid],
        'the old key is gone after the overlap',
      );
    });

    test('two instances racing to make a tenant issuer’s entity key on first use end with one key', async () => {
      const db = world.server.database.db;
      // As before its first use: the key made by the earlier tests goes.
      await db.deleteFrom('federation_entity_keys').where('client_id', '=', world.clientId).execute();
      const second = await startSecondInstance(world.server);
      try {
        const wellKnown = `/issuers/${world.clientId}/.well-known/openid-federation`;
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            i % 2 ? second.request('GET', wellKnown) : world.server.request('GET', wellKnown),
          ),
        );
        for (const answer of answers) assert.equal(answer.status, 200, answer.text);
        assert.equal(new Set(answers.map((answer) => decodeProtectedHeader(answer.text).kid)).size, 1);
        const rows = await db
          .selectFrom('federation_entity_keys')
          .select('kid')
          .where('client_id', '=', world.clientId)
          .execute();
        assert.equal(rows.length, 1);
      } finally {
        await second.close();
      }
    });
  });
}
