import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { createOutboundClient } from '../../../src/http/outbound.ts';
import { logInUser, registerPersonContext } from '../../credentials/helpers.ts';
import { holderJwkOf } from '../../helpers/issuers/holder.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../../helpers/issuers/issuer-ca.ts';
import { issueMdoc, MDL_DOCTYPE, MDL_NAMESPACE } from '../../helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc, PID_VCT } from '../../helpers/issuers/sd-jwt-issuer.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { registerRelyingParty } from '../../oidc/flow-helpers.ts';
import { type CredentialFormat, type Run, type SuiteVerifier, startSuiteVerifier } from './verifier.ts';

/**
 * The world of the OpenID4VP 1.0 wallet plans: Coffer (SQLite, real HTTP) as the hosted wallet of
 * a person who holds an SD-JWT VC (a PID) and an mdoc (an mDL) bound to their hosted key, issued
 * under a CA Coffer trusts (ISSUER_TRUST_ANCHORS, the suite's `credential.trust_anchor_pem`), and
 * the suite's verifier (suite-vp-verifier/verifier.ts) whose TLS certificate Coffer's outbound
 * client trusts and whose x509_san_dns CA is in VERIFIER_TRUST_ANCHORS.
 */
export interface SuiteVerifierWorld {
  server: TestServer;
  suite: SuiteVerifier;
  issuer: IssuerIdentity;
  account: PrivateKeyAccount;
  did: string;
  /** The credentials as issued and stored in the person's wallet. */
  issued: { sdJwt: string; mdoc: string };
  /** The person's session cookie once they logged in inside a consent. */
  cookie: string | undefined;
  files: string[];
}

/**
 * The suite's `client.dcql` for each credential format, as a tester configures it for the
 * person's credentials: two claims (FewerClaimsThanAvailable needs at least two).
 */
export function configuredDcql(format: CredentialFormat): Run['dcql'] {
  if (format === 'sd_jwt_vc') {
    return {
      credentials: [
        {
          id: 'my_credential',
          format: 'dc+sd-jwt',
          meta: { vct_values: [PID_VCT] },
          claims: [{ path: ['given_name'] }, { path: ['family_name'] }],
        },
      ],
    };
  }
  return {
    credentials: [
      {
        id: 'my_credential',
        format: 'mso_mdoc',
        meta: { doctype_value: MDL_DOCTYPE },
        claims: [{ path: [MDL_NAMESPACE, 'given_name'] }, { path: [MDL_NAMESPACE, 'family_name'] }],
      },
    ],
  };
}

export async function startSuiteVerifierWorld(): Promise<SuiteVerifierWorld> {
  const suite = await startSuiteVerifier(configuredDcql);
  const files: string[] = [];
  let server: TestServer | undefined;
  try {
    const issuer = await makeIssuerIdentity('Suite Credential Issuer');
    const issuers = path.join(tmpdir(), `coffer-vpw-issuers-${randomBytes(6).toString('hex')}.pem`);
    const verifiers = path.join(tmpdir(), `coffer-vpw-verifiers-${randomBytes(6).toString('hex')}.pem`);
    files.push(issuers, verifiers);
    await writeFile(issuers, issuer.ca.pem);
    await writeFile(verifiers, suite.anchorPem);
    const outbound = createOutboundClient({ allowPrivateTargets: true, ca: [suite.tlsCertificatePem] });
    server = await startTestServer(
      'sqlite',
      { ALLOW_PRIVATE_TARGETS: 'true', ISSUER_TRUST_ANCHORS: issuers, VERIFIER_TRUST_ANCHORS: verifiers },
      { outbound },
    );
    await registerPersonContext(server);
    const master = await server.createMaster('Issuer');
    const rp = await registerRelyingParty(server);
    const account = privateKeyToAccount(generatePrivateKey());
    const did = (await logInUser(server, rp, account)).did;
    const issued = {
      sdJwt: await issueSdJwtVc(issuer, { holderJwk: holderJwkOf(did) }),
      mdoc: await issueMdoc(issuer, { deviceJwk: holderJwkOf(did) }),
    };
    for (const vc of [issued.sdJwt, issued.mdoc]) {
      const stored = await server.request('POST', '/v1/vc/issuer/store', {
        headers: { 'x-api-token': master.token },
        body: { vc },
      });
      assert.equal(stored.status, 201, stored.text);
    }
    return { server, suite, issuer, account, did, issued, cookie: undefined, files };
  } catch (error) {
    await server?.close();
    await suite.close();
    for (const file of files) await rm(file, { force: true });
    throw error;
  }
}

export async function stopSuiteVerifierWorld(world: SuiteVerifierWorld): Promise<void> {
  await world.server.close();
  await world.suite.close();
  for (const file of world.files) await rm(file, { force: true });
}
