import { conformancePlan } from '../harness.ts';
import { walletPlanModules } from '../suite-vp-verifier/modules.ts';
import { startSuiteVerifierWorld, stopSuiteVerifierWorld } from '../suite-vp-verifier/world.ts';

/**
 * oid4vp-1final-wallet-test-plan: Coffer's hosted wallet answering an OpenID4VP 1.0 verifier, the
 * suite's verifier played by test/conformance/suite-vp-verifier/. Every module runs over
 * sd_jwt_vc and iso_mdl with the client identifier prefixes x509_san_dns, x509_hash and
 * decentralized_identifier (signed request_uri) and redirect_uri (url_query, unsigned
 * request_uri), answering by direct_post and direct_post.jwt, as the module applies; the happy
 * flow also runs pre_registered. The DC API response modes are not for a hosted web wallet.
 */
conformancePlan('oid4vp-1final-wallet-test-plan', {
  file: import.meta.filename,
  setup: startSuiteVerifierWorld,
  teardown: stopSuiteVerifierWorld,
  modules: walletPlanModules('plain'),
});
