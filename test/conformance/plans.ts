/**
 * The OpenID Foundation conformance suite's test plans that Coffer can be the subject of, with
 * every module each plan runs, by the names the suite gives them (its public source:
 * openid-certification/conformance-suite, src/main/java/net/openid/conformance/{vci10issuer,
 * vci10wallet,vp1finalverifier,vp1finalwallet}). Each plan has a folder of the same name here,
 * whose tests are one per module, named after it (test/conformance/harness.ts).
 */

export interface Plan {
  /** The suite's testPlanName. */
  name: string;
  /** What Coffer is in this plan, and who the suite plays. */
  subject: string;
  modules: readonly string[];
}

const VCI_ISSUER_MODULES = [
  'oid4vci-1_0-issuer-metadata-test',
  'oid4vci-1_0-issuer-metadata-test-signed',
  'oid4vci-1_0-issuer-happy-flow',
  'oid4vci-1_0-issuer-happy-flow-additional-requests',
  'oid4vci-1_0-issuer-happy-flow-multiple-clients',
  'oid4vci-1_0-issuer-happy-flow-skip-notification',
  'oid4vci-1_0-issuer-batch-issuance',
  'oid4vci-1_0-issuer-fail-invalid-nonce',
  'oid4vci-1_0-issuer-fail-invalid-jwt-proof-signature',
  'oid4vci-1_0-issuer-fail-invalid-key-attestation-signature',
  'oid4vci-1_0-issuer-fail-invalid-client-attestation-signature',
  'oid4vci-1_0-issuer-fail-invalid-client-attestation-pop-signature',
  'oid4vci-1_0-issuer-fail-client-attestation-exp-in-past',
  'oid4vci-1_0-issuer-fail-client-attestation-no-sub',
  'oid4vci-1_0-issuer-fail-client-attestation-pop-wrong-aud',
  'oid4vci-1_0-issuer-fail-mismatched-client-attestation-pop-key',
  'oid4vci-1_0-issuer-fail-missing-proof',
  'oid4vci-1_0-issuer-fail-unsupported-encryption-algorithm',
  'oid4vci-1_0-issuer-fail-unknown-credential-configuration',
  'oid4vci-1_0-issuer-fail-unknown-credential-identifier',
  'oid4vci-1_0-issuer-fail-on-access-token-in-query',
] as const;

/** The FAPI 2.0 Security Profile authorization-server modules the HAIP issuer plan adds. */
const FAPI2_SERVER_MODULES = [
  'fapi2-security-profile-final-discovery-end-point-verification',
  'fapi2-security-profile-final-happy-flow',
  'fapi2-security-profile-final-user-rejects-authentication',
  'fapi2-security-profile-final-ensure-authorization-request-without-state-success',
  'fapi2-security-profile-final-access-token-type-header-case-sensitivity',
  'fapi2-security-profile-final-check-dpop-proof-nbf-exp',
  'fapi2-security-profile-final-ensure-dpopproof-with-iat-10seconds-before-succeeds',
  'fapi2-security-profile-final-ensure-dpopproof-with-iat-10seconds-after-succeeds',
  'fapi2-security-profile-final-ensure-mismatched-dpop-jkt-fails',
  'fapi2-security-profile-final-ensure-token-endpoint-fails-with-mismatched-dpop-proof-jkt',
  'fapi2-security-profile-final-ensure-token-endpoint-fails-with-mismatched-dpop-jkt',
  'fapi2-security-profile-final-ensure-dpopproof-at-par-endpoint-binding-success',
  'fapi2-security-profile-final-ensure-dpop-auth-code-binding-success',
  'fapi2-security-profile-final-ensure-different-state-inside-and-outside-request-object',
  'fapi2-security-profile-final-ensure-authorization-request-with-long-state',
  'fapi2-security-profile-final-state-only-outside-request-object-not-used',
  'fapi2-security-profile-final-ensure-request-object-without-redirect-uri-fails',
  'fapi2-security-profile-final-plain-fapi-tolerate-unregistered-redirect-uri',
  'fapi2-security-profile-final-ensure-unsigned-authorization-request-without-using-par-fails',
  'fapi2-security-profile-final-ensure-redirect-uri-in-authorization-request',
  'fapi2-security-profile-final-ensure-response-type-code-idtoken-fails',
  'fapi2-security-profile-final-ensure-response-type-token-fails',
  'fapi2-security-profile-final-ensure-client-id-in-token-endpoint',
  'fapi2-security-profile-final-ensure-holder-of-key-required',
  'fapi2-security-profile-final-ensure-authorization-code-is-bound-to-client',
  'fapi2-security-profile-final-attempt-reuse-authorization-code-after-one-second',
  'fapi2-security-profile-final-ensure-token-endpoint-fails-with-expired-auth-code',
  'fapi2-security-profile-final-dpop-negative-tests',
  'fapi2-security-profile-final-refresh-token',
  'fapi2-security-profile-final-par-ensure-reused-request-uri-prior-to-auth-completion-succeeds',
  'fapi2-security-profile-final-par-attempt-reuse-request_uri',
  'fapi2-security-profile-final-par-attempt-to-use-expired-request_uri',
  'fapi2-security-profile-final-par-attempt-to-use-request_uri-for-different-client',
  'fapi2-security-profile-final-par-authorization-request-containing-request_uri-form-param',
  'fapi2-security-profile-final-par-attempt-invalid-http-method',
  'fapi2-security-profile-final-par-ensure-pkce-required',
  'fapi2-security-profile-final-ensure-pkce-code-verifier-required',
  'fapi2-security-profile-final-incorrect-pkce-code-verifier-rejected',
  'fapi2-security-profile-final-par-plain-pkce-rejected',
  'fapi2-security-profile-final-par-without-duplicate-parameters',
] as const;

const VCI_WALLET_MODULES = [
  'oid4vci-1_0-wallet-test-credential-issuance',
  'oid4vci-1_0-wallet-test-credential-issuance-notification',
  'oid4vci-1_0-wallet-happy-path-with-scopes-without-authorization-details-in-token-response',
  'oid4vci-1_0-wallet-test-client-attestation-challenge',
  'oid4vci-1_0-wallet-test-batch-credential-issuance',
] as const;

/** The FAPI 2.0 Security Profile client modules the HAIP wallet plan adds. */
const FAPI2_CLIENT_MODULES = [
  'fapi2-security-profile-final-client-test-happy-path',
  'fapi2-security-profile-final-client-test-discovery-issuer-mismatch',
  'fapi2-security-profile-final-client-test-invalid-authorization-response-iss',
  'fapi2-security-profile-final-client-test-remove-authorization-response-iss',
  'fapi2-security-profile-final-client-test-ensure-authorization-response-with-invalid-state-fails',
  'fapi2-security-profile-final-client-test-ensure-authorization-response-with-invalid-missing-state-fails',
  'fapi2-security-profile-final-client-test-token-endpoint-response-without-expires_in',
  'fapi2-security-profile-final-client-test-token-type-case-insensitivity',
  'fapi2-security-profile-final-client-test-rs-dpop-auth-scheme-case-insensitivity',
  'fapi2-security-profile-final-client-test-happy-path-no-dpop-nonce',
] as const;

const VP_VERIFIER_MODULES = [
  'oid4vp-1final-verifier-happy-flow',
  'oid4vp-1final-verifier-minimal-cnf-jwk',
  'oid4vp-1final-verifier-request-uri-method-post',
  'oid4vp-1final-verifier-request-uri-fetched-twice',
  'oid4vp-1final-verifier-invalid-session-transcript',
  'oid4vp-1final-verifier-invalid-kb-jwt-signature',
  'oid4vp-1final-verifier-invalid-credential-signature',
  'oid4vp-1final-verifier-invalid-sd-hash',
  'oid4vp-1final-verifier-invalid-kb-jwt-nonce',
  'oid4vp-1final-verifier-invalid-kb-jwt-aud',
  'oid4vp-1final-verifier-kb-jwt-iat-in-past',
  'oid4vp-1final-verifier-kb-jwt-iat-in-future',
] as const;

const VP_WALLET_MODULES = [
  'oid4vp-1final-wallet-happy-flow',
  'oid4vp-1final-wallet-alternate-happy-flow',
  'oid4vp-1final-wallet-request-uri-method-post',
  'oid4vp-1final-wallet-ignores-unusable-encryption-key',
  'oid4vp-1final-wallet-fewer-claims-than-available',
  'oid4vp-1final-wallet-optional-credential-set',
  'oid4vp-1final-wallet-no-claims-in-dcql-query',
  'oid4vp-1final-wallet-negative-test-response-uri-not-client-id',
  'oid4vp-1final-wallet-negative-test-invalid-request-object-signature',
  'oid4vp-1final-wallet-multisigned-one-invalid-signature',
  'oid4vp-1final-wallet-negative-test-mismatched-client-id',
  'oid4vp-1final-wallet-negative-test-redirect-uri-with-direct-post',
  'oid4vp-1final-wallet-negative-test-missing-nonce',
  'oid4vp-1final-wallet-negative-test-wrong-expected-origins',
  'oid4vp-1final-wallet-negative-test-invalid-client-id-prefix',
  'oid4vp-1final-wallet-negative-test-unknown-transaction-data-type',
  'oid4vp-1final-wallet-negative-test-required-non-matching-credential',
] as const;

export const PLANS: readonly Plan[] = [
  {
    name: 'oid4vci-1_0-issuer-test-plan',
    subject: "Coffer's credential issuer for a tenant; the suite plays the wallet",
    modules: VCI_ISSUER_MODULES,
  },
  {
    name: 'oid4vci-1_0-issuer-haip-test-plan',
    subject:
      "Coffer's credential issuer for a tenant, `issuer enable --haip`, and its authorization server; the suite plays the wallet",
    modules: [...VCI_ISSUER_MODULES, ...FAPI2_SERVER_MODULES],
  },
  {
    name: 'oid4vci-1_0-wallet-test-plan',
    subject:
      "Coffer's hosted wallet receiving a credential; the suite plays the issuer and its authorization server",
    modules: VCI_WALLET_MODULES,
  },
  {
    name: 'oid4vci-1_0-wallet-haip-test-plan',
    subject:
      "Coffer's hosted wallet receiving from a HAIP issuer; the suite plays the issuer and its authorization server",
    modules: [
      ...VCI_WALLET_MODULES.filter((m) => !m.includes('with-scopes-without-authorization-details')),
      ...FAPI2_CLIENT_MODULES,
    ],
  },
  {
    name: 'oid4vp-1final-verifier-test-plan',
    subject: "Coffer's verifier for a tenant; the suite plays the wallet",
    modules: VP_VERIFIER_MODULES,
  },
  {
    name: 'oid4vp-1final-verifier-haip-test-plan',
    subject:
      "Coffer's verifier for a tenant with x509_hash and signed request objects; the suite plays the wallet",
    modules: VP_VERIFIER_MODULES,
  },
  {
    name: 'oid4vp-1final-wallet-test-plan',
    subject: "Coffer's hosted wallet answering a verifier; the suite plays the verifier",
    modules: VP_WALLET_MODULES,
  },
  {
    name: 'oid4vp-1final-wallet-haip-test-plan',
    subject: "Coffer's hosted wallet answering a HAIP verifier; the suite plays the verifier",
    modules: VP_WALLET_MODULES.filter((m) => !m.endsWith('response-uri-not-client-id')),
  },
];

export const planNamed = (name: string): Plan => {
  const plan = PLANS.find((p) => p.name === name);
  if (!plan) throw new Error(`no conformance plan ${name}`);
  return plan;
};
