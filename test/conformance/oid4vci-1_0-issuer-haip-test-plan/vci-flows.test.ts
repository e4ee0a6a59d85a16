import { conformancePlan } from '../harness.ts';
import { vciIssuerModulesPart } from '../suite-vci-wallet/modules.ts';
import { HAIP_BATCH, type IssuerWorld, startHaipVciWorld } from '../suite-vci-wallet/worlds.ts';

/**
 * The OpenID4VCI modules of the HAIP issuer plan (VCIIssuerTestPlanHaip): the suite as a wallet
 * against a tenant issuer enabled with `coffer issuer enable --haip`, in the plan's variants —
 * the authorization code grant (wallet-initiated, by scope), client attestation, DPoP, credential
 * format sd_jwt_vc (mso_mdoc recorded as issuer-initiated only), plain and encrypted credential
 * requests. These are the flows; the refusals (fail-*) are in vci-failures.test.ts, the plan's
 * FAPI 2.0 modules in fapi2-*.test.ts.
 */
conformancePlan<IssuerWorld>('oid4vci-1_0-issuer-haip-test-plan', {
  file: import.meta.filename,
  setup: () => startHaipVciWorld('vci-flows'),
  teardown: (world) => world.close(),
  modules: vciIssuerModulesPart({ grant: 'authorization_code', batchConfigurationId: HAIP_BATCH }, 'flows'),
});
