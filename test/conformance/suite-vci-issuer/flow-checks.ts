import assert from 'node:assert/strict';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { listed } from '../../oid4vci/issuance-helpers.ts';
import type { Conditions } from '../harness.ts';
import {
  type AttestationExpectation,
  at,
  checkAuthorizationEndpointAfterPar,
  checkAuthorizationRequest,
  checkClientAttestation,
  checkCredentialRequest,
  checkDpopProof,
  checkMetadataRequests,
  checkNotification,
} from './conditions.ts';
import { configurationIdOf, type SeenRequest } from './issuer.ts';
import type { Outcome, WalletWorld } from './world.ts';

/**
 * Every request of one run, checked in the order the suite meets them (AbstractVCIWalletTest's
 * endpoints): metadata, the attestation challenge, PAR and the authorization endpoint, the token
 * endpoint (client attestation, DPoP, PKCE), the nonce endpoint, the credential endpoint (proofs,
 * key attestations, DPoP at the resource), the notification endpoint. Returns the holder keys.
 */
export async function checkIssuanceRequests(
  c: Conditions,
  world: WalletWorld,
  outcome: Outcome,
  options: { grant: 'pre-authorized' | 'authorization_code' },
): Promise<JWK[]> {
  const { suite } = world;
  const behaviour = suite.behaviour;
  const asIssuer = suite.asMetadata().issuer;
  await checkMetadataRequests(c, suite);
  await c.check('EnsureIncomingTls12WithSecureCipherOrTls13', () => {
    for (const r of suite.requests)
      assert.ok(r.tls === 'TLSv1.3' || r.tls === 'TLSv1.2', `${r.endpoint}: ${r.tls}`);
  });
  await c.check('EnsureIncomingTls13', () => {
    for (const r of suite.requests) assert.equal(r.tls, 'TLSv1.3', r.endpoint);
  });
  const dpopJtis = new Set<string>();
  const attestation: AttestationExpectation = {
    rootPem: world.provider.rootPem,
    issuer: world.clientId,
    clientId: world.clientId,
    asIssuer,
    jtis: new Set(),
    challenges: behaviour.challengeEndpoint ? suite.state.attestationChallenges : undefined,
  };

  if (behaviour.challengeEndpoint) {
    const challenges = at(suite, 'challenge');
    await c.check('EnsureIncomingRequestMethodIsPost', () => {
      assert.ok(challenges.length > 0, 'the wallet did not call the challenge_endpoint');
      for (const r of challenges) assert.equal(r.method, 'POST');
    });
    await c.check('EnsureIncomingUrlQueryIsEmpty', () => {
      for (const r of challenges) assert.deepEqual(r.query, {});
    });
    await c.check('EnsureIncomingRequestBodyIsEmpty', () => {
      for (const r of challenges) assert.equal(r.body, '');
    });
  }

  let parJkt: string | undefined;
  if (options.grant === 'authorization_code') {
    const pars = at(suite, 'par');
    const authorizations = at(suite, 'authorize');
    if (behaviour.haip) {
      await c.check('EnsureParIsUsed', () => assert.ok(pars.length > 0, 'no pushed authorization request'));
    }
    // A DPoP nonce retry makes two PAR requests: both are checked as the suite does each.
    for (const par of pars) {
      await c.check('EnsureIncomingRequestMethodIsPost', () => assert.equal(par.method, 'POST'));
      if (behaviour.haip) {
        const cnf = await checkClientAttestation(c, par, attestation);
        const nonce = par === pars[0] || !behaviour.dpopNonce ? undefined : suite.state.asDpopNonce;
        parJkt = await checkDpopProof(c, par, { jtis: dpopJtis, nonce }, 'ValidateParEndpointDpopProofNonce');
        await c.check('ExtractParAuthorizationCodeDpopBindingKey', async () =>
          // HAIP 1.0 §4.4: the same instance key attests the client and binds DPoP.
          assert.equal(parJkt, await calculateJwkThumbprint(cnf)),
        );
      }
      await checkAuthorizationRequest(c, par.form, {
        clientId: world.clientId,
        issuerState: suite.state.issuerState,
        scope: configurationIdOf(behaviour),
        haip: behaviour.haip,
      });
    }
    await c.check('EnsureAuthorizationEndpointCalled', () => assert.equal(authorizations.length, 1));
    if (pars.length > 0) await checkAuthorizationEndpointAfterPar(c, authorizations[0]!, world.clientId);
    else {
      await checkAuthorizationRequest(c, authorizations[0]!.query, {
        clientId: world.clientId,
        issuerState: suite.state.issuerState,
        scope: configurationIdOf(behaviour),
        haip: behaviour.haip,
      });
    }
  }

  const tokens = at(suite, 'token');
  await c.check('EnsureTokenEndpointCalled', () =>
    assert.ok(
      tokens.some((t) => t.status === 200),
      'no token issued',
    ),
  );
  let accessToken = '';
  let credentialIdentifiers: string[] | undefined;
  for (const token of tokens) {
    await c.check('EnsureIncomingRequestMethodIsPost', () => assert.equal(token.method, 'POST'));
    await c.check('CheckClientIdMatchesOnTokenRequestIfPresent', () => {
      if (token.form['client_id'] !== undefined) assert.equal(token.form['client_id'], world.clientId);
    });
    if (behaviour.haip) {
      await checkClientAttestation(c, token, attestation);
      const nonce =
        token === tokens[0] && !behaviour.dpopNonce
          ? undefined
          : behaviour.dpopNonce
            ? suite.state.asDpopNonce
            : undefined;
      const jkt = await checkDpopProof(
        c,
        token,
        { jtis: dpopJtis, nonce },
        'ValidateTokenEndpointDpopProofNonce',
      );
      await c.check('ValidateAuthorizationCodeDpopBindingKey', () => assert.equal(jkt, parJkt));
    }
    if (options.grant === 'pre-authorized') {
      await c.check('VCIValidatePreAuthorizationCode', () =>
        assert.equal(token.form['pre-authorized_code'], suite.state.preAuthorizedCode),
      );
      await c.check('VCIValidateTxCode', () => assert.equal(token.form['tx_code'], '123456'));
    } else {
      await c.check('ValidateAuthorizationCode', () => {
        assert.equal(token.form['grant_type'], 'authorization_code');
        assert.ok(suite.state.codes.has(token.form['code'] ?? ''), 'unknown code');
      });
      await c.check('ValidateRedirectUriForTokenEndpointRequest', () => {
        const code = suite.state.codes.get(token.form['code']!)!;
        assert.equal(token.form['redirect_uri'], code.params['redirect_uri']);
      });
      await c.check('CheckPkceCodeVerifier', () => {
        const verifier = token.form['code_verifier'] ?? '';
        assert.match(verifier, /^[A-Za-z0-9\-._~]{43,128}$/);
      });
    }
    if (token.status === 200) {
      accessToken = token.answer.access_token;
      credentialIdentifiers = token.answer.authorization_details?.[0]?.credential_identifiers;
    }
  }

  const nonces = at(suite, 'nonce');
  await c.check('EnsureIncomingRequestMethodIsPost', () => {
    assert.ok(nonces.length > 0, 'the wallet did not call the nonce endpoint');
    for (const r of nonces) assert.equal(r.method, 'POST');
  });

  const credentials = at(suite, 'credential');
  const resourceNonce = (r: SeenRequest, list: SeenRequest[]) =>
    behaviour.haip && behaviour.dpopNonce && r !== list[0] ? suite.state.rsDpopNonce : undefined;
  const keys: JWK[] = [];
  for (const credential of credentials) {
    if (behaviour.haip) {
      await checkDpopProof(
        c,
        credential,
        { jtis: dpopJtis, accessToken, nonce: resourceNonce(credential, credentials) },
        'ValidateResourceEndpointDpopProofNonce',
      );
    }
    if (credential.status === 401) continue; // a DPoP nonce answer; the retry is checked in full
    keys.push(
      ...(await checkCredentialRequest(c, credential, {
        accessToken,
        credentialIssuer: suite.credentialIssuer,
        clientId: options.grant === 'authorization_code' ? world.clientId : undefined,
        cNonces: suite.state.cNonces,
        batchSize: behaviour.batchSize,
        credentialIdentifiers,
        configurationId: configurationIdOf(behaviour),
        keyAttestationRoot: behaviour.haip ? world.provider.rootPem : undefined,
      })),
    );
  }
  await c.check('EnsureCredentialEndpointCalled', () =>
    assert.ok(
      credentials.some((r) => r.status === (behaviour.deferred ? 202 : 200)),
      `no credential was issued: ${credentials.map((r) => r.status).join(', ')} (deferred ${behaviour.deferred})`,
    ),
  );
  void outcome; // the caller asserts what the person saw; here only what the wallet sent
  return keys;
}

/** The notifications the wallet sent (§11), each checked; waits for them (the wallet sends after storing). */
export async function checkNotifications(c: Conditions, world: WalletWorld, accessToken: string) {
  const { suite } = world;
  const until = Date.now() + 10_000;
  while (at(suite, 'notification').filter((r) => r.status !== 401).length === 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const notifications = at(suite, 'notification');
  await c.check('VCIWalletCalledNotificationEndpoint', () =>
    assert.ok(
      notifications.some((r) => r.status === 204),
      'the wallet did not call the notification endpoint',
    ),
  );
  const dpopJtis = new Set<string>();
  for (const n of notifications) {
    if (suite.behaviour.haip) {
      await checkDpopProof(
        c,
        n,
        {
          jtis: dpopJtis,
          accessToken,
          nonce: suite.behaviour.dpopNonce && n !== notifications[0] ? suite.state.rsDpopNonce : undefined,
        },
        'ValidateResourceEndpointDpopProofNonce',
      );
    }
    if (n.status === 401) continue;
    await checkNotification(c, n, { notificationIds: suite.state.notificationIds, accessToken });
  }
  return notifications;
}

/** The access token the token endpoint issued in this run. */
export const issuedAccessToken = (world: WalletWorld): string =>
  at(world.suite, 'token').find((t) => t.status === 200)?.answer.access_token ?? '';

/**
 * Deferred issuance (VCICredentialIssuanceMode deferred, §9): the wallet polls the Deferred
 * Credential Endpoint in the background with the transaction_id it was given; waits for the
 * credential to be stored, then checks every poll (deferredCredentialEndpoint's conditions).
 */
export async function checkDeferred(c: Conditions, world: WalletWorld, before: number): Promise<void> {
  const { suite } = world;
  const issued = at(suite, 'credential').find((r) => r.status === 202);
  await c.check('VCICreateDeferredCredentialResponse', () =>
    assert.ok(issued, 'no deferred answer was given'),
  );
  const transactionId = [...suite.state.transactions.keys()][0];
  const until = Date.now() + 20_000;
  let stored = before;
  while (Date.now() < until) {
    stored = (await listed(world.wallet)).length;
    if (stored > before) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await c.check('EnsureWalletStoredTheDeferredCredential', () => assert.equal(stored, before + 1));
  const polls = at(suite, 'deferred_credential');
  const accessToken = issuedAccessToken(world);
  const jtis = new Set<string>();
  for (const poll of polls) {
    await c.check('EnsureIncomingRequestMethodIsPost', () => assert.equal(poll.method, 'POST'));
    if (suite.behaviour.haip) {
      await checkDpopProof(
        c,
        poll,
        {
          jtis,
          accessToken,
          nonce: suite.behaviour.dpopNonce && poll !== polls[0] ? suite.state.rsDpopNonce : undefined,
        },
        'ValidateResourceEndpointDpopProofNonce',
      );
    }
    if (poll.status === 401) continue;
    const encrypted = (poll.headers['content-type'] ?? '').startsWith('application/jwt');
    await c.check(
      suite.behaviour.encryption
        ? 'VCIEnsureCredentialRequestUsesApplicationJwt'
        : 'VCIEnsureCredentialRequestUsesApplicationJson',
      () => assert.equal(encrypted, suite.behaviour.encryption === true),
    );
    await c.check('VCIValidateDeferredCredentialRequest', () => {
      assert.equal(typeof poll.json?.transaction_id, 'string', 'no transaction_id');
      if (transactionId !== undefined) assert.equal(poll.json.transaction_id, transactionId);
      const unexpected = Object.keys(poll.json).filter(
        (k) => !['transaction_id', 'credential_response_encryption'].includes(k),
      );
      assert.deepEqual(unexpected, []);
    });
  }
  await c.check('EnsureDeferredCredentialDelivered', () => assert.ok(polls.some((p) => p.status === 200)));
}
