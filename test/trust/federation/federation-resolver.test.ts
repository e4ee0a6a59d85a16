import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { createOutboundClient } from '../../../src/http/outbound.ts';
import {
  createFederationResolver,
  type FederationResolver,
  outboundStatementFetcher,
} from '../../../src/trust/federation/federation-resolver.ts';
import { TrustError } from '../../../src/trust/trust-error.ts';
import { startTestFederation, type TestEntity, type TestFederation } from '../test-federation.ts';

/**
 * Federation trust chains resolved as OpenID Federation 1.0 §10 says, against a federation made
 * in the test (its statements signed with jose, served over HTTPS): a good chain with its
 * metadata policy, and each way a chain can lie — a rogue key, an expired statement, an anchor
 * not configured, an anchor's own keys not the configured ones, constraints, loops, fetches that
 * fail — refused with a stable code.
 */

const rejectsWith = async (promise: Promise<unknown>, code: string, message?: RegExp) => {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof TrustError, String(error));
    assert.equal(error.code, code, error.message);
    if (message) assert.match(error.message, message);
    return true;
  });
};

describe('federation trust chains', () => {
  let federation: TestFederation;
  let anchor: TestEntity;
  let intermediate: TestEntity;
  let verifier: TestEntity;
  const resolverFor = (anchors: TestEntity[], now = () => new Date()): FederationResolver =>
    createFederationResolver({
      anchors: anchors.map((a) => federation.anchorOf(a)),
      fetchStatement: outboundStatementFetcher(
        createOutboundClient({ allowPrivateTargets: true, ca: [federation.ca.pem] }),
      ),
      now,
    });

  before(async () => {
    federation = await startTestFederation();
    anchor = await federation.entity('anchor');
    intermediate = await federation.entity('intermediate', { superiors: [anchor] });
    verifier = await federation.entity('verifier-leaf', {
      superiors: [intermediate],
      metadata: {
        openid_credential_verifier: { client_name: 'Library', contacts: ['desk@library.example'] },
      },
    });
    // The intermediate adds a contact and fixes the response types for its subordinates.
    verifier.about.set(intermediate.id, {
      metadata_policy: {
        openid_credential_verifier: {
          contacts: { add: ['federation@intermediate.example'] },
          response_types: { value: ['vp_token'] },
        },
      },
    });
  });
  after(() => federation.close());

  it('resolves a leaf through an intermediate to the anchor, with its metadata policy applied', async () => {
    const chain = await resolverFor([anchor]).resolve(verifier.id);
    assert.equal(chain.subject, verifier.id);
    assert.equal(chain.anchor, anchor.id);
    assert.deepEqual(chain.entities, [verifier.id, intermediate.id, anchor.id]);
    assert.deepEqual(chain.metadata['openid_credential_verifier'], {
      client_name: 'Library',
      contacts: ['desk@library.example', 'federation@intermediate.example'],
      response_types: ['vp_token'],
    });
    assert.equal(chain.statements.length, 4, 'configuration, two subordinate statements, anchor');
  });

  it('validates the chain given whole, and refuses it with a statement swapped', async () => {
    const resolver = resolverFor([anchor]);
    const { statements } = await resolver.resolve(verifier.id);
    assert.equal((await resolver.validate(statements)).subject, verifier.id);
    const other = await federation.entity('other-leaf', { superiors: [intermediate] });
    const swapped = [...statements];
    swapped[1] = await federation.statement(intermediate, other);
    await rejectsWith(resolver.validate(swapped), 'invalid_trust_chain');
  });

  it('refuses an entity that signs with a key its superior did not vouch for', async () => {
    const rogue = await federation.entity('rogue-leaf', { superiors: [intermediate] });
    const stolen = await generateKeyPair('ES256', { extractable: true });
    const rogueJwk = { ...(await exportJWK(stolen.publicKey)), kid: 'rogue', alg: 'ES256' };
    // Its configuration is self-consistent (signed by the key it lists) but not the key the
    // intermediate's statement lists for it.
    rogue.configurationClaims = { jwks: { keys: [rogueJwk] } };
    rogue.signConfigurationWith = { keys: stolen, kid: 'rogue' };
    await rejectsWith(resolverFor([anchor]).resolve(rogue.id), 'invalid_trust_chain');
  });

  it('refuses a chain with an expired subordinate statement', async () => {
    const stale = await federation.entity('stale-leaf', { superiors: [intermediate] });
    const past = Math.floor(Date.now() / 1000) - 7200;
    stale.about.set(intermediate.id, { iat: past - 3600, exp: past });
    await rejectsWith(resolverFor([anchor]).resolve(stale.id), 'invalid_trust_chain', /expired|exp/);
  });

  it('refuses an entity anchored in a federation that is not configured', async () => {
    const elsewhere = await federation.entity('elsewhere-anchor');
    const theirs = await federation.entity('their-leaf', { superiors: [elsewhere] });
    await rejectsWith(resolverFor([anchor]).resolve(theirs.id), 'invalid_trust_anchor');
    // And a chain to the configured anchor is not one to another that is asked for.
    await rejectsWith(
      resolverFor([anchor, elsewhere]).resolve(verifier.id, [elsewhere.id]),
      'invalid_trust_anchor',
    );
  });

  it("checks the anchor's configuration with the configured keys, never the ones it sends", async () => {
    const impostor = await federation.entity('impostor-anchor');
    const leaf = await federation.entity('impostor-leaf', { superiors: [impostor] });
    const configured = { ...federation.anchorOf(impostor) };
    const other = await generateKeyPair('ES256', { extractable: true });
    configured.jwks = { keys: [{ ...(await exportJWK(other.publicKey)), kid: impostor.kid, alg: 'ES256' }] };
    const resolver = createFederationResolver({
      anchors: [configured],
      fetchStatement: outboundStatementFetcher(
        createOutboundClient({ allowPrivateTargets: true, ca: [federation.ca.pem] }),
      ),
      now: () => new Date(),
    });
    await rejectsWith(resolver.resolve(leaf.id), 'invalid_trust_chain');
  });

  it('applies constraints: max_path_length and naming_constraints', async () => {
    const strict = await federation.entity('strict-anchor');
    const middle = await federation.entity('strict-intermediate', { superiors: [strict] });
    const leaf = await federation.entity('strict-leaf', { superiors: [middle] });
    middle.about.set(strict.id, { constraints: { max_path_length: 0 } });
    await rejectsWith(resolverFor([strict]).resolve(leaf.id), 'invalid_trust_chain', /max_path_length/);
    middle.about.set(strict.id, { constraints: { naming_constraints: { permitted: ['.example.org'] } } });
    await rejectsWith(resolverFor([strict]).resolve(leaf.id), 'invalid_trust_chain', /naming_constraints/);
    middle.about.set(strict.id, { constraints: { max_path_length: 1 } });
    assert.equal((await resolverFor([strict]).resolve(leaf.id)).anchor, strict.id);
  });

  it('ends a loop of authority hints, and a chain longer than five hops', async () => {
    const a = await federation.entity('loop-a');
    const b = await federation.entity('loop-b', { superiors: [a] });
    a.superiors.push(b.id);
    const leaf = await federation.entity('loop-leaf', { superiors: [a] });
    await rejectsWith(resolverFor([anchor]).resolve(leaf.id), 'invalid_trust_anchor');

    const deep = await federation.entity('deep-anchor');
    let above = deep;
    for (let level = 0; level < 6; level++)
      above = await federation.entity(`deep-${level}`, { superiors: [above] });
    const deepLeaf = await federation.entity('deep-leaf', { superiors: [above] });
    await rejectsWith(resolverFor([deep]).resolve(deepLeaf.id), 'invalid_trust_anchor');
  });

  it('says a fetch failed when the entity or its only superior cannot be reached', async () => {
    const resolver = resolverFor([anchor]);
    await rejectsWith(resolver.resolve(`${federation.url}/nobody`), 'fetch_failed');
    const orphan = await federation.entity('orphan-leaf');
    orphan.superiors.push('https://127.0.0.1:1/gone');
    await rejectsWith(resolver.resolve(orphan.id), 'fetch_failed');
    await rejectsWith(resolver.resolve('http://127.0.0.1/not-https'), 'invalid_trust_chain');
  });

  it('resolves one entity asked for several times at once with one set of fetches', async () => {
    const resolver = resolverFor([anchor]);
    const before = federation.served.length;
    const chains = await Promise.all([1, 2, 3, 4].map(() => resolver.resolve(verifier.id)));
    const fetched = federation.served.length - before;
    assert.ok(chains.every((chain) => chain === chains[0]));
    const alone = federation.served.length;
    await resolverFor([anchor]).resolve(verifier.id);
    assert.equal(fetched, federation.served.length - alone, 'four at once fetch what one does');
  });

  it('keeps a resolved chain until it expires, without fetching again', async () => {
    const resolver = resolverFor([anchor]);
    await resolver.resolve(verifier.id);
    const fetched = federation.served.length;
    await resolver.resolve(verifier.id);
    assert.equal(federation.served.length, fetched);
    const later = resolverFor([anchor], () => new Date(Date.now() + 2 * 3600 * 1000));
    await assert.rejects(later.resolve(verifier.id), 'two hours on, every statement has expired');
  });
});
