import type { ModuleRun } from '../harness.ts';
import { runVerifierModule, type VerifierModule } from './flow.ts';
import { type CredentialFormat, haipVariants, plainVariants } from './variants.ts';
import type { SuiteWalletWorld } from './world.ts';

/**
 * The twelve modules of the OpenID4VP 1.0 verifier plans (VP1FinalVerifierTestPlan; the HAIP plan
 * runs the same classes), each over the variants the plan runs for the formats it applies to:
 * four positive ones, and eight negative ones with the check of Coffer's that must name the
 * failure.
 */
export function verifierPlanModules(plan: 'plain' | 'haip'): Record<string, ModuleRun<SuiteWalletWorld>> {
  const variantsOf = plan === 'plain' ? plainVariants : haipVariants;
  const both: CredentialFormat[] = ['sd_jwt_vc', 'iso_mdl'];
  const sdJwt: CredentialFormat[] = ['sd_jwt_vc'];
  const mdl: CredentialFormat[] = ['iso_mdl'];
  const module =
    (formats: CredentialFormat[], spec: VerifierModule): ModuleRun<SuiteWalletWorld> =>
    (c, world) =>
      runVerifierModule(c, world, variantsOf(formats), spec, plan);
  return {
    'oid4vp-1final-verifier-happy-flow': module(both, { expect: 'verified', nonceChecks: true }),
    'oid4vp-1final-verifier-minimal-cnf-jwk': module(sdJwt, {
      expect: 'verified',
      sdJwt: 'CreateSdJwtKbCredentialWithMinimalCnf',
    }),
    'oid4vp-1final-verifier-request-uri-method-post': module(both, {
      expect: 'verified',
      requestUri: 'post',
    }),
    'oid4vp-1final-verifier-request-uri-fetched-twice': module(both, {
      expect: 'verified',
      requestUri: 'get-twice',
    }),
    'oid4vp-1final-verifier-invalid-session-transcript': module(mdl, {
      expect: { rejectedAt: 'device_signature' },
      invalidateNonce: true,
    }),
    'oid4vp-1final-verifier-invalid-kb-jwt-signature': module(sdJwt, {
      expect: { rejectedAt: 'holder_binding' },
      spoil: 'InvalidateSdJwtKbSignature',
    }),
    'oid4vp-1final-verifier-invalid-credential-signature': module(sdJwt, {
      expect: { rejectedAt: 'issuer_signature' },
      spoil: 'InvalidateSdJwtCredentialSignature',
    }),
    'oid4vp-1final-verifier-invalid-sd-hash': module(sdJwt, {
      expect: { rejectedAt: 'sd_hash' },
      sdJwt: 'CreateSdJwtKbCredentialWithInvalidSdHash',
    }),
    'oid4vp-1final-verifier-invalid-kb-jwt-nonce': module(sdJwt, {
      expect: { rejectedAt: 'nonce' },
      invalidateNonce: true,
    }),
    'oid4vp-1final-verifier-invalid-kb-jwt-aud': module(sdJwt, {
      expect: { rejectedAt: 'audience' },
      sdJwt: 'CreateSdJwtKbCredentialWithInvalidAud',
    }),
    'oid4vp-1final-verifier-kb-jwt-iat-in-past': module(sdJwt, {
      expect: { rejectedAt: 'freshness' },
      sdJwt: 'CreateSdJwtKbCredentialWithIatInPast',
    }),
    'oid4vp-1final-verifier-kb-jwt-iat-in-future': module(sdJwt, {
      expect: { rejectedAt: 'freshness' },
      sdJwt: 'CreateSdJwtKbCredentialWithIatInFuture',
    }),
  };
}
