import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPolicy, resolvePolicy } from '../../../src/trust/federation/metadata-policy.ts';
import { TrustError } from '../../../src/trust/trust-error.ts';

const conflictOf = (run: () => unknown) =>
  assert.throws(run, (error: unknown) => error instanceof TrustError && error.code === 'invalid_metadata');

/** OpenID Federation 1.0 §6.1: policies merged top-down, then applied in operator order. */
describe('metadata policy (OpenID Federation 1.0 §6.1)', () => {
  it('an anchor and an intermediate constrain a verifier: subset_of narrows, add creates, essential holds', () => {
    const anchor = {
      openid_credential_verifier: {
        request_object_signing_alg_values_supported: { subset_of: ['ES256', 'ES384'] },
        contacts: { add: ['ops@ta.example'] },
      },
    };
    const intermediate = { openid_credential_verifier: { client_name: { essential: true } } };
    const policy = resolvePolicy([anchor, intermediate], new Set());
    const resolved = applyPolicy(
      {
        openid_credential_verifier: {
          client_name: 'Shop',
          request_object_signing_alg_values_supported: ['ES256', 'RS256'],
        },
        federation_entity: { organization_name: 'Shop Ltd' },
      },
      policy,
    );
    assert.deepEqual(resolved, {
      openid_credential_verifier: {
        client_name: 'Shop',
        request_object_signing_alg_values_supported: ['ES256'],
        contacts: ['ops@ta.example'],
      },
      federation_entity: { organization_name: 'Shop Ltd' },
    });
    conflictOf(() => applyPolicy({ openid_credential_verifier: {} }, policy));
  });

  it('essential with subset_of, as §6.1.3.1.8 tabulates it', () => {
    for (const essential of [true, false]) {
      const policy = resolvePolicy([{ t: { p: { subset_of: ['a', 'b', 'c'], essential } } }], new Set());
      assert.deepEqual(applyPolicy({ t: { p: ['a', 'e'] } }, policy), { t: { p: ['a'] } });
      assert.deepEqual(
        applyPolicy({ t: { p: ['d', 'e'] } }, policy),
        { t: { p: [] } },
        'an empty intersection stays',
      );
      if (essential) conflictOf(() => applyPolicy({ t: {} }, policy));
      else assert.deepEqual(applyPolicy({ t: {} }, policy), { t: {} });
    }
  });

  it('operators apply in their order: value, add, default, one_of, subset_of, superset_of, essential', () => {
    const policy = resolvePolicy(
      [
        {
          t: {
            fixed: { value: ['x', 'y'], add: ['y'] },
            removed: { value: null },
            defaulted: { default: 'd' },
            kept: { default: 'd' },
            chosen: { one_of: ['a', 'b'] },
            wide: { superset_of: ['a'] },
          },
        },
      ],
      new Set(),
    );
    assert.deepEqual(
      applyPolicy({ t: { fixed: ['z'], removed: 1, kept: 'k', chosen: 'b', wide: ['a', 'b'] } }, policy),
      { t: { fixed: ['x', 'y'], kept: 'k', chosen: 'b', wide: ['a', 'b'], defaulted: 'd' } },
    );
    conflictOf(() => applyPolicy({ t: { chosen: 'c' } }, policy));
    conflictOf(() => applyPolicy({ t: { wide: ['b'] } }, policy));
    conflictOf(() => applyPolicy({ t: { wide: 'a' } }, policy));
  });

  it('merging: equal values, unions, intersections and OR; a conflict anywhere invalidates', () => {
    const merged = resolvePolicy(
      [
        {
          t: {
            p: { subset_of: ['a', 'b', 'c'] },
            q: { one_of: ['x', 'y'] },
            r: { add: ['1'] },
            s: { essential: false },
          },
        },
        {
          t: {
            p: { subset_of: ['b', 'c', 'd'] },
            q: { one_of: ['y', 'z'] },
            r: { add: ['2'] },
            s: { essential: true },
          },
        },
      ],
      new Set(),
    );
    assert.deepEqual(merged, {
      t: {
        p: { subset_of: ['b', 'c'] },
        q: { one_of: ['y'] },
        r: { add: ['1', '2'] },
        s: { essential: true },
      },
    });
    conflictOf(() => resolvePolicy([{ t: { p: { value: 'a' } } }, { t: { p: { value: 'b' } } }], new Set()));
    conflictOf(() =>
      resolvePolicy([{ t: { p: { default: 'a' } } }, { t: { p: { default: 'b' } } }], new Set()),
    );
    conflictOf(() =>
      resolvePolicy([{ t: { p: { one_of: ['a'] } } }, { t: { p: { one_of: ['b'] } } }], new Set()),
    );
    // A subordinate's add must stay within the superior's subset_of once merged.
    conflictOf(() =>
      resolvePolicy([{ t: { p: { subset_of: ['a'] } } }, { t: { p: { add: ['b'] } } }], new Set()),
    );
    conflictOf(() =>
      resolvePolicy([{ t: { p: { value: 'c' } } }, { t: { p: { one_of: ['a', 'b'] } } }], new Set()),
    );
  });

  it('combinations and operator values the spec does not allow are refused', () => {
    for (const policy of [
      { value: null, essential: true },
      { value: null, default: 'a' },
      { one_of: ['a'], subset_of: ['a'] },
      { add: ['a'], one_of: ['a'] },
      { subset_of: ['a'], superset_of: ['b'] },
      { value: ['a'], add: ['b'] },
      { essential: 'yes' },
      { subset_of: 'a' },
      { default: null },
      { value: { nested: true } },
    ]) {
      conflictOf(() => resolvePolicy([{ t: { p: policy } }], new Set()));
    }
  });

  it('unknown operators are ignored unless a statement names them in metadata_policy_crit', () => {
    const policy = { t: { p: { regexp: '^a', essential: true } } };
    assert.deepEqual(resolvePolicy([policy], new Set()), { t: { p: { essential: true } } });
    conflictOf(() => resolvePolicy([policy], new Set(['regexp'])));
  });

  it('scope is a space-separated string the operators treat as a list', () => {
    const policy = resolvePolicy([{ t: { scope: { subset_of: ['openid', 'email'] } } }], new Set());
    assert.deepEqual(applyPolicy({ t: { scope: 'openid profile email' } }, policy), {
      t: { scope: 'openid email' },
    });
  });

  it('parameters named like built-ins (constructor, toString, __proto__) are data: no global object changes', () => {
    // Statements are parsed JSON: "__proto__" arrives as an own member, as a superior may send it.
    const anchor = JSON.parse(
      '{"openid_credential_verifier": {"constructor": {"value": "from the anchor"}, "toString": {"add": ["x"]}, "__proto__": {"value": "a parameter"}}, "__proto__": {"polluted": {"value": 1}}}',
    );
    const intermediate = JSON.parse('{"openid_credential_verifier": {"constructor": {"essential": true}}}');
    const before = {
      objectKeys: Object.getOwnPropertyNames(Object),
      prototypeKeys: Object.getOwnPropertyNames(Object.prototype),
      toStringKeys: Object.getOwnPropertyNames(Object.prototype.toString),
    };
    const policy = resolvePolicy([anchor, intermediate], new Set());
    const resolved = applyPolicy(
      JSON.parse('{"openid_credential_verifier": {"client_name": "Shop", "toString": ["y"]}}'),
      policy,
    );
    assert.deepEqual(
      {
        objectKeys: Object.getOwnPropertyNames(Object),
        prototypeKeys: Object.getOwnPropertyNames(Object.prototype),
        toStringKeys: Object.getOwnPropertyNames(Object.prototype.toString),
      },
      before,
      'no built-in gained a member',
    );
    const verifier = resolved['openid_credential_verifier'] as Record<string, unknown>;
    assert.equal(Object.getOwnPropertyDescriptor(verifier, 'constructor')?.value, 'from the anchor');
    assert.deepEqual(Object.getOwnPropertyDescriptor(verifier, 'toString')?.value, ['y', 'x']);
    assert.equal(Object.getOwnPropertyDescriptor(verifier, '__proto__')?.value, 'a parameter');
    assert.equal(Object.getPrototypeOf(verifier), Object.prototype, 'the metadata keeps its prototype');
  });

  it('a policy for an entity type the subject does not declare changes nothing', () => {
    const policy = resolvePolicy([{ openid_credential_issuer: { p: { essential: true } } }], new Set());
    assert.deepEqual(applyPolicy({ federation_entity: {} }, policy), { federation_entity: {} });
  });
});
