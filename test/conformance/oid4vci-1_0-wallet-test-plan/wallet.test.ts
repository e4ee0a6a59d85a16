import assert from 'node:assert/strict';
import { calculateJwkThumbprint } from 'jose';
import { conformancePlan } from '../harness.ts';
import {
  checkIssuanceRequests,
  checkNotifications,
  issuedAccessToken,
} from '../suite-vci-issuer/flow-checks.ts';
import { receiveOffer, startWalletWorld, type WalletWorld } from '../suite-vci-issuer/world.ts';

/**
 * oid4vci-1_0-wallet-test-plan (vci10wallet/VCIWalletTestPlan): Coffer's hosted wallet receives
 * a credential from the suite's emulated issuer (plain_oauth, plain_response; no client
 * authentication, Bearer tokens), dc+sd-jwt, by the pre-authorized code (offer by value, tx_code
 * 123456) and by the authorization code (offer by reference, PAR since the server has it).
 */

const received = async (
  c: Parameters<typeof checkIssuanceRequests>[0],
  outcome: { status: number; body: unknown; after: number; before: number },
  copies = 1,
) =>
  c.check('EnsureWalletStoredTheCredential', () => {
    assert.equal(outcome.status, 200, JSON.stringify(outcome.body));
    assert.equal((outcome.body as { next?: string }).next, 'done', JSON.stringify(outcome.body));
    assert.equal(outcome.after, outcome.before + 1, 'one credential (with its copies) is stored');
    assert.equal((outcome.body as { received: unknown[] }).received.length, 1);
    void copies;
  });

conformancePlan<WalletWorld>('oid4vci-1_0-wallet-test-plan', {
  file: import.meta.filename,
  setup: startWalletWorld,
  teardown: (world) => world.close(),
  modules: {
    'oid4vci-1_0-wallet-test-credential-issuance': async (c, world) => {
      c.variant('dc+sd-jwt, pre-authorized code, offer by value, tx_code');
      let outcome = await receiveOffer(world, {}, { grant: 'pre-authorized', byReference: false });
      await received(c, outcome);
      await checkIssuanceRequests(c, world, outcome, { grant: 'pre-authorized' });
      c.variant('dc+sd-jwt, authorization code, offer by reference, PAR, PKCE S256');
      outcome = await receiveOffer(world, {}, { grant: 'authorization_code', byReference: true });
      await received(c, outcome);
      await checkIssuanceRequests(c, world, outcome, { grant: 'authorization_code' });
      c.variant('mso_mdoc (mDL), pre-authorized code, offer by value');
      outcome = await receiveOffer(
        world,
        { format: 'mso_mdoc' },
        { grant: 'pre-authorized', byReference: false },
      );
      await received(c, outcome);
      await checkIssuanceRequests(c, world, outcome, { grant: 'pre-authorized' });
      // AuthorizationRequestType rar: no scope, so authorization_details, and credential_identifiers back.
      for (const grant of ['authorization_code', 'pre-authorized'] as const) {
        c.variant(
          `dc+sd-jwt, ${grant}, authorization_details (rar), credential_identifier in the Credential Request`,
        );
        outcome = await receiveOffer(world, { rar: true }, { grant, byReference: true });
        await received(c, outcome);
        await checkIssuanceRequests(c, world, outcome, { grant });
        await c.check('VCIResolveRequestedCredentialConfigurationFromRequest', () => {
          const request = world.suite.requests.find((r) => r.endpoint === 'credential' && r.status === 200)!;
          assert.match(request.json.credential_identifier, /^eu\.europa\.ec\.eudi\.pid\.1:/);
          assert.equal(request.json.credential_configuration_id, undefined);
        });
      }
    },

    'oid4vci-1_0-wallet-test-credential-issuance-notification': async (c, world) => {
      c.variant('dc+sd-jwt, authorization code, notification_endpoint');
      const outcome = await receiveOffer(
        world,
        { notifications: true },
        { grant: 'authorization_code', byReference: true },
      );
      await received(c, outcome);
      await checkIssuanceRequests(c, world, outcome, { grant: 'authorization_code' });
      const notifications = await checkNotifications(c, world, issuedAccessToken(world));
      await c.check('VCIValidateNotificationRequest', () =>
        assert.equal(notifications.find((n) => n.status === 204)!.json.event, 'credential_accepted'),
      );
    },

    'oid4vci-1_0-wallet-happy-path-with-scopes-without-authorization-details-in-token-response': async (
      c,
      world,
    ) => {
      c.variant('dc+sd-jwt, authorization code with scope, token response without authorization_details');
      const outcome = await receiveOffer(
        world,
        { authorizationDetailsInTokenResponse: false },
        { grant: 'authorization_code', byReference: true },
      );
      await received(c, outcome);
      await checkIssuanceRequests(c, world, outcome, { grant: 'authorization_code' });
    },

    'oid4vci-1_0-wallet-test-client-attestation-challenge': async (c, world) => {
      // The module runs only with ClientAuthType client_attestation (VariantNotApplicable for the
      // others): the emulated AS takes attest_jwt_client_auth (with DPoP, as Coffer's HAIP path
      // has it) and advertises a challenge_endpoint (ATCA draft 07 §8).
      c.variant('dc+sd-jwt, authorization code, client_attestation, challenge_endpoint');
      const outcome = await receiveOffer(
        world,
        { haip: true, challengeEndpoint: true },
        { grant: 'authorization_code', byReference: true },
      );
      await received(c, outcome);
      await checkIssuanceRequests(c, world, outcome, { grant: 'authorization_code' });
    },

    'oid4vci-1_0-wallet-test-batch-credential-issuance': async (c, world) => {
      c.variant('dc+sd-jwt, pre-authorized code, batch_size 10, credentials in reverse order');
      const outcome = await receiveOffer(
        world,
        { batchSize: 10, reverseOrder: true },
        { grant: 'pre-authorized', byReference: true },
      );
      await received(c, outcome);
      const keys = await checkIssuanceRequests(c, world, outcome, { grant: 'pre-authorized' });
      await c.check('VCIBatchDelivered', () =>
        assert.ok(keys.length >= 2, `${keys.length} proofs: not a batch`),
      );
      await c.check('VCIReverseCredentialIssuanceOrder', async () => {
        // The wallet pairs each copy with its key by cnf, not by position (the order is reversed).
        const issued = await Promise.all(world.suite.state.issuedKeys.map((k) => calculateJwkThumbprint(k)));
        const proved = await Promise.all(keys.map((k) => calculateJwkThumbprint(k)));
        assert.deepEqual([...issued].sort(), [...proved].sort());
        const copies = await world.server.request('GET', '/v1/openidc/credentials', {
          headers: world.user.bearer,
        });
        assert.equal(copies.status, 200);
      });
    },
  },
});
