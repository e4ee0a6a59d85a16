import { conformancePlan } from '../harness.ts';
import { vciIssuerModules } from '../suite-vci-wallet/modules.ts';
import {
  type IssuerWorld,
  PLAIN_MDOC,
  PLAIN_SD_JWT,
  startPlainVciWorld,
} from '../suite-vci-wallet/worlds.ts';

/**
 * The OpenID4VCI issuer plan (VCIIssuerTestPlan): the suite as a wallet against a tenant issuer
 * enabled with plain `coffer issuer enable`, issuing on the tenant's offers — the pre-authorized
 * code grant with a tx_code (issuer-initiated), DPoP, no client authentication (anonymous
 * pre-authorized access), credential formats sd_jwt_vc and mso_mdoc, plain and encrypted
 * credential requests.
 */
conformancePlan<IssuerWorld>('oid4vci-1_0-issuer-test-plan', {
  file: import.meta.filename,
  setup: () => startPlainVciWorld('vci'),
  teardown: (world) => world.close(),
  modules: vciIssuerModules({
    grant: 'pre_authorized_code',
    batchConfigurationId: PLAIN_SD_JWT,
    mdocConfigurationId: PLAIN_MDOC,
  }),
});
