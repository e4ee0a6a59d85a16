import { conformancePlan } from '../harness.ts';
import { verifierPlanModules } from '../suite-vp-wallet/modules.ts';
import { startSuiteWalletWorld, stopSuiteWalletWorld } from '../suite-vp-wallet/world.ts';

/**
 * oid4vp-1final-verifier-test-plan: Coffer as a tenant's OpenID4VP 1.0 verifier, the suite's mock
 * web wallet played by test/conformance/suite-vp-wallet/. Every module runs over the variants
 * Coffer offers: sd_jwt_vc and iso_mdl (as the module applies), x509_san_dns and x509_hash, signed
 * request_uri, direct_post and direct_post.jwt. (Coffer signs every request, so the plan's
 * redirect_uri + url_query combination is not one a tenant can ask for.)
 */
conformancePlan('oid4vp-1final-verifier-test-plan', {
  file: import.meta.filename,
  setup: startSuiteWalletWorld,
  teardown: stopSuiteWalletWorld,
  modules: verifierPlanModules('plain'),
});
