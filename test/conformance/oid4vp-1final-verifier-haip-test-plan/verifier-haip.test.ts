import { conformancePlan } from '../harness.ts';
import { verifierPlanModules } from '../suite-vp-wallet/modules.ts';
import { startSuiteWalletWorld, stopSuiteWalletWorld } from '../suite-vp-wallet/world.ts';

/**
 * oid4vp-1final-verifier-haip-test-plan: the same modules with vp_profile haip, x509_hash, signed
 * request_uri and direct_post.jwt (direct_post is not applicable with haip), for sd_jwt_vc and
 * iso_mdl. The tenant asks as a HAIP verifier does: same-device, with a redirect_uri for the
 * response_uri's answer (HAIP §5), and reads the result with the redirect's response_code.
 */
conformancePlan('oid4vp-1final-verifier-haip-test-plan', {
  file: import.meta.filename,
  setup: startSuiteWalletWorld,
  teardown: stopSuiteWalletWorld,
  modules: verifierPlanModules('haip'),
});
