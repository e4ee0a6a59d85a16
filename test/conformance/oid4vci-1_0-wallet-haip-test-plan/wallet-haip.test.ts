import assert from 'node:assert/strict';
import { calculateJwkThumbprint } from 'jose';
import { type Conditions, conformancePlan } from '../harness.ts';
import { at } from '../suite-vci-issuer/conditions.ts';
import {
  checkDeferred,
  checkIssuanceRequests,
  checkNotifications,
  issuedAccessToken,
} from '../suite-vci-issuer/flow-checks.ts';
import type { SuiteBehaviour } from '../suite-vci-issuer/issuer.ts';
import {
  callbackPage,
  type Outcome,
  receiveOffer,
  startWalletWorld,
  type WalletWorld,
} from '../suite-vci-issuer/world.ts';

/**
 * oid4vci-1_0-wallet-haip-test-plan (vci10wallet/VCIWalletTestPlanHaip): Coffer's hosted wallet
 * receives from the suite's emulated HAIP issuer — authorization code (offer by reference, with
 * issuer_state), PAR, PKCE S256, DPoP with nonces, Wallet Attestation (attest_jwt_client_auth)
 * at PAR and token, key attestations in the jwt proofs, scope — and the FAPI 2.0 Security
 * Profile client modules the plan adds (fapi2spfinal/FAPI2SPFinalClientTest*: vci_haip,
 * plain_oauth, plain_response, dpop, unsigned, client_attestation).
 */

const HAIP: Partial<SuiteBehaviour> = { haip: true };
const OFFER = { grant: 'authorization_code', byReference: true } as const;

async function stored(c: Conditions, outcome: Outcome) {
  await c.check('EnsureWalletStoredTheCredential', () => {
    assert.equal(outcome.status, 200, JSON.stringify(outcome.body));
    assert.equal(outcome.body.next, 'done', JSON.stringify(outcome.body));
    assert.equal(outcome.after, outcome.before + 1);
  });
}

/** A happy flow of the plan: the credential stored, every request checked. */
async function happy(c: Conditions, world: WalletWorld, behaviour: Partial<SuiteBehaviour> = {}) {
  const outcome = await receiveOffer(world, { ...HAIP, ...behaviour }, OFFER);
  await stored(c, outcome);
  return { outcome, keys: await checkIssuanceRequests(c, world, outcome, { grant: 'authorization_code' }) };
}

/**
 * AbstractFAPI2SPFinalClientExpectNothingAfterAuthorizationResponse and the state modules: the
 * wallet refuses the authorization response, tells the person, stores nothing and calls no
 * other endpoint of the server.
 */
async function refusedAfterAuthorization(
  c: Conditions,
  world: WalletWorld,
  behaviour: Partial<SuiteBehaviour>,
  says: RegExp,
) {
  const outcome = await receiveOffer(world, { ...HAIP, ...behaviour }, OFFER);
  await c.check('EnsureClientRefusesAuthorizationResponse', () => {
    assert.ok(
      outcome.status >= 400 && outcome.status < 500,
      `${outcome.status} ${JSON.stringify(outcome.body)}`,
    );
    assert.match(JSON.stringify(outcome.body), says);
  });
  await c.check('EnsureNoCredentialStored', () => assert.equal(outcome.after, outcome.before));
  await c.check('EnsureTokenEndpointNotCalled', () => {
    assert.equal(at(world.suite, 'token').length, 0, 'the client called the token endpoint');
    assert.equal(at(world.suite, 'nonce').length, 0, 'the client called the nonce endpoint');
    assert.equal(at(world.suite, 'credential').length, 0, 'the client called the credential endpoint');
  });
  const page = await callbackPage(world, outcome.callback!);
  await c.check('EnsureClientShowsError', () => {
    assert.ok(page.status >= 400, String(page.status));
    assert.match(page.text, says);
  });
}

conformancePlan<WalletWorld>('oid4vci-1_0-wallet-haip-test-plan', {
  file: import.meta.filename,
  setup: startWalletWorld,
  teardown: (world) => world.close(),
  modules: {
    'oid4vci-1_0-wallet-test-credential-issuance': async (c, world) => {
      c.variant('dc+sd-jwt, authorization code, immediate, plain');
      await happy(c, world);
      c.variant('dc+sd-jwt, authorization code, immediate, encrypted (request and response)');
      await happy(c, world, { encryption: true });
      await c.check('VCIEnsureCredentialRequestEncryptedIfResponseEncryptionRequested', () => {
        for (const r of at(world.suite, 'credential'))
          assert.match(r.headers['content-type'] ?? '', /^application\/jwt/);
      });
      c.variant('mso_mdoc (mDL), authorization code, immediate, plain');
      await happy(c, world, { format: 'mso_mdoc' });
      for (const encryption of [false, true]) {
        c.variant(`dc+sd-jwt, authorization code, deferred, ${encryption ? 'encrypted' : 'plain'}`);
        const outcome = await receiveOffer(world, { ...HAIP, deferred: true, encryption }, OFFER);
        await c.check('EnsureWalletAwaitsTheDeferredCredential', () => {
          assert.equal(outcome.status, 200, JSON.stringify(outcome.body));
          assert.deepEqual(outcome.body.received, []);
          assert.equal(outcome.body.pending, 1);
        });
        await checkIssuanceRequests(c, world, outcome, { grant: 'authorization_code' });
        await checkDeferred(c, world, outcome.before);
      }
    },

    'oid4vci-1_0-wallet-test-credential-issuance-notification': async (c, world) => {
      c.variant('dc+sd-jwt, authorization code, notification_endpoint');
      await happy(c, world, { notifications: true });
      await checkNotifications(c, world, issuedAccessToken(world));
    },

    'oid4vci-1_0-wallet-test-client-attestation-challenge': async (c, world) => {
      c.variant('dc+sd-jwt, authorization code, challenge_endpoint (ATCA draft 07 §8)');
      await happy(c, world, { challengeEndpoint: true });
    },

    'oid4vci-1_0-wallet-test-batch-credential-issuance': async (c, world) => {
      c.variant('dc+sd-jwt, batch_size 10, credentials in reverse order, one key attestation for the batch');
      const { keys } = await happy(c, world, { batchSize: 10, reverseOrder: true });
      await c.check('VCIBatchDelivered', () =>
        assert.ok(keys.length >= 2, `${keys.length} proofs: not a batch`),
      );
      await c.check('VCIReverseCredentialIssuanceOrder', async () => {
        const issued = await Promise.all(world.suite.state.issuedKeys.map((k) => calculateJwkThumbprint(k)));
        const proved = await Promise.all(keys.map((k) => calculateJwkThumbprint(k)));
        assert.deepEqual([...issued].sort(), [...proved].sort());
      });
    },

    'fapi2-security-profile-final-client-test-happy-path': async (c, world) => {
      await happy(c, world);
      await c.check('CheckForInvalidCharsInState', () => {
        const state = [...world.suite.state.pushed.values()][0]!.params['state']!;
        assert.match(state, /^[\x20-\x7E]+$/);
      });
      await c.check('CheckStateLength', () => {
        const state = [...world.suite.state.pushed.values()][0]!.params['state']!;
        assert.ok(state.length <= 384, `${state.length} characters`);
      });
    },

    'fapi2-security-profile-final-client-test-discovery-issuer-mismatch': async (c, world) => {
      // ChangeIssuerInServerConfigurationToBeInvalid: the wallet must refuse the metadata (RFC 8414 §3.3).
      world.suite.reset({ ...HAIP, discoveryIssuerMismatch: true });
      const query = world.suite.createOffer(OFFER);
      const opened = await fetch(`${world.server.url}/v1/oid4vci/offer?${query}`, {
        redirect: 'manual',
        headers: { cookie: world.wallet.cookie ?? '', accept: 'application/json' },
      });
      const body = await opened.text();
      await c.check('EnsureClientRefusesMismatchedIssuer', () => {
        assert.equal(opened.status, 400, body);
        assert.match(body, /does not match the provided issuer/);
      });
      // The person's browser gets a page saying so (and nothing is stored).
      const page = await fetch(`${world.server.url}/v1/oid4vci/offer?${world.suite.createOffer(OFFER)}`, {
        redirect: 'manual',
        headers: { cookie: world.wallet.cookie ?? '', accept: 'text/html' },
      });
      const html = await page.text();
      await c.check('EnsureClientShowsError', () => {
        assert.equal(page.status, 400);
        assert.match(html, /This credential offer cannot be used/);
        assert.match(html, /does not match the provided issuer/);
      });
      await c.check('EnsureNothingAfterDiscovery', () => {
        for (const endpoint of ['par', 'authorize', 'token', 'credential'])
          assert.equal(at(world.suite, endpoint).length, 0, `the wallet called ${endpoint}`);
      });
    },

    'fapi2-security-profile-final-client-test-invalid-authorization-response-iss': (c, world) =>
      refusedAfterAuthorization(c, world, { authorizationResponse: 'invalid-iss' }, /iss/),

    'fapi2-security-profile-final-client-test-remove-authorization-response-iss': (c, world) =>
      refusedAfterAuthorization(c, world, { authorizationResponse: 'no-iss' }, /iss/),

    'fapi2-security-profile-final-client-test-ensure-authorization-response-with-invalid-state-fails': (
      c,
      world,
    ) => refusedAfterAuthorization(c, world, { authorizationResponse: 'invalid-state' }, /does not belong/),

    'fapi2-security-profile-final-client-test-ensure-authorization-response-with-invalid-missing-state-fails':
      async (c, world) => {
        await c.check('EnsureClientSendsState', async () => {
          // The module is skipped for a client that sends no state; Coffer always sends one.
          await refusedAfterAuthorization(c, world, { authorizationResponse: 'no-state' }, /does not belong/);
          const state = [...world.suite.state.pushed.values()][0]?.params['state'];
          assert.ok(state, 'the wallet sent no state');
        });
      },

    'fapi2-security-profile-final-client-test-token-endpoint-response-without-expires_in': (c, world) =>
      happy(c, world, { tokenWithoutExpiresIn: true }).then(() => undefined),

    'fapi2-security-profile-final-client-test-token-type-case-insensitivity': async (c, world) => {
      await happy(c, world, { tokenTypeInvertedCase: true });
      await c.check('SetTokenResponseTokenTypeToInvertedCase', () => {
        const token = at(world.suite, 'token').find((t) => t.status === 200)!;
        assert.equal(token.answer.token_type, 'dpOp');
        // The token is still used as a DPoP token (RFC 6749 §5.1: token_type is case insensitive).
        const credential = at(world.suite, 'credential').find((r) => r.status === 200)!;
        assert.match(credential.headers['authorization']!, /^DPoP /);
      });
    },

    'fapi2-security-profile-final-client-test-rs-dpop-auth-scheme-case-insensitivity': async (c, world) => {
      await happy(c, world, { rsDpopSchemeCase: true });
      await c.check('CreateResourceEndpointDpopErrorAltSchemeCaseResponse', () => {
        const credentials = at(world.suite, 'credential');
        assert.equal(credentials[0]!.status, 401, 'the first credential request had no nonce error');
        assert.equal(credentials.at(-1)!.status, 200);
      });
    },

    'fapi2-security-profile-final-client-test-happy-path-no-dpop-nonce': async (c, world) => {
      await happy(c, world, { dpopNonce: false });
      await c.check('EnsureNoDpopNonceRequired', () => {
        assert.equal(at(world.suite, 'par').length, 1);
        assert.equal(at(world.suite, 'token').length, 1);
      });
    },
  },
});
