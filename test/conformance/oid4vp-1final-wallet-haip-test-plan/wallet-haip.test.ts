import { conformancePlan } from '../harness.ts';
import { walletPlanModules } from '../suite-vp-verifier/modules.ts';
import { startSuiteVerifierWorld, stopSuiteVerifierWorld } from '../suite-vp-verifier/world.ts';

/**
 * oid4vp-1final-wallet-haip-test-plan: Coffer's hosted wallet answering a HAIP verifier — the plan's
 * direct_post.jwt entry: x509_hash, signed request_uri, encrypted responses, over sd_jwt_vc and
 * iso_mdl. (The plan's dc_api.jwt entries need the Digital Credentials API, which a wallet
 * reached by URL does not answer.)
 */
conformancePlan('oid4vp-1final-wallet-haip-test-plan', {
  file: import.meta.filename,
  setup: startSuiteVerifierWorld,
  teardown: stopSuiteVerifierWorld,
  modules: walletPlanModules('haip'),
});
