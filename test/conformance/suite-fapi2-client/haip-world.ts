import type { KeyObject, webcrypto } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { coffer } from '../../helpers/cli.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { makeCertificate, privateKeyPem } from '../../oid4vp/certificates.ts';
import { startTlsFront, type TlsFront } from '../../verifier/tls-front.ts';

/**
 * What the suite's FAPI 2.0 modules of the HAIP issuer plan are run against: a tenant issuer
 * enabled with `coffer issuer enable --haip`, behind TLS, with a certificate chain of its own
 * (a CA and a leaf, so the credentials' x5c walks to a root that is not the leaf), one
 * wallet-initiated configuration with a scope (HAIP 1.0 §4.1) and a status list, and the
 * tester's attester, whose root the issuer trusts (WALLET_PROVIDER_TRUST_ANCHORS): it signs
 * the suite's client attestations and key attestations. The issuer's clock is the test's
 * (AppContext.issuerClock), so expiry is reached by moving it, never by waiting.
 */
export interface HaipIssuerWorld {
  server: TestServer;
  front: TlsFront;
  clientId: number;
  /** The credential issuer identifier (vci.credential_issuer_url). */
  issuerId: string;
  api: (method: string, p: string, body?: unknown) => ReturnType<TestServer['request']>;
  /** The tester's attester (client_attestation.attester_jwks, key_attestation_jwks): x5c and key. */
  attester: Attester;
  /** How far the issuer's clock is ahead of the real one, in milliseconds. */
  clock: { aheadMs: number };
  /** The configuration the suite is set to ask for (vci.credential_configuration_id). */
  configurationId: string;
  /** The suite's base URL, under which its callback is (CreateRedirectUri). */
  suiteBaseUrl: string;
  /** A new person for the next log-in at the authorization server. */
  nextEmail(): string;
  close(): Promise<void>;
}

export interface Attester {
  /** The chain as x5c carries it: the signing certificate (its root is the issuer's trust anchor). */
  x5c: string[];
  privateKey: webcrypto.CryptoKey | KeyObject;
}

export const CONFIGURATION_ID = 'membership';
export const CONFIGURATION = {
  format: 'dc+sd-jwt',
  vct: 'urn:example:conformance:membership',
  scope: 'membership_card',
  claims: [{ path: ['email'] }],
  from_profile: { email: 'email_address' },
  validity_seconds: 30 * 86400,
  status: true,
};

/**
 * The plan's other credential_format: an mso_mdoc configuration. Coffer issues it on offers only
 * (wallet-initiated issuance takes from_profile configurations, which mdoc ones cannot be).
 */
export const MDOC_CONFIGURATION_ID = 'membership_mdoc';
export const MDOC_CONFIGURATION = {
  format: 'mso_mdoc',
  doctype: 'org.example.conformance.membership.1',
  scope: 'membership_mdoc',
  claims: [{ path: ['org.example.conformance.membership.1', 'email'] }],
  status: true,
};

const der = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, '');

export async function startHaipIssuerWorld(name: string): Promise<HaipIssuerWorld> {
  const dir = await mkdtemp(path.join(tmpdir(), 'coffer-fapi2-'));
  // The tester's attester: a root and a signing certificate under it.
  const attesterRoot = await makeCertificate({ subject: 'CN=Conformance Attester Root', ca: true });
  const attesterLeaf = await makeCertificate({ subject: 'CN=Conformance Attester', issuer: attesterRoot });
  await writeFile(path.join(dir, 'attester-root.pem'), attesterRoot.pem);
  // The issuer's signing certificate, under a CA of its own; it names PUBLIC_URL's host.
  const issuerCa = await makeCertificate({ subject: 'C=GB, CN=Test Issuer CA', ca: true });
  const issuerLeaf = await makeCertificate({
    subject: 'C=GB, O=University, CN=University Issuer',
    issuer: issuerCa,
    ipAddresses: ['127.0.0.1'],
  });
  await writeFile(path.join(dir, 'key.pem'), await privateKeyPem(issuerLeaf.keys.privateKey));
  await writeFile(path.join(dir, 'chain.pem'), issuerLeaf.pem);

  const clock = { aheadMs: 0 };
  const front = await startTlsFront();
  const server = await startTestServer(
    'sqlite',
    {
      ALLOW_PRIVATE_TARGETS: 'true',
      PUBLIC_URL: front.url,
      WALLET_PROVIDER_TRUST_ANCHORS: path.join(dir, 'attester-root.pem'),
    },
    { issuerClock: () => new Date(Date.now() + clock.aheadMs) },
  );
  front.target = server.url;
  const { clientId, token } = await server.createMaster('University');
  const enabled = await coffer(
    server,
    'issuer',
    'enable',
    '--client',
    String(clientId),
    '--key',
    path.join(dir, 'key.pem'),
    '--chain',
    path.join(dir, 'chain.pem'),
    '--haip',
    '--json',
  );
  if (enabled.code !== 0) throw new Error(`issuer enable --haip failed: ${enabled.stderr}`);
  const { credential_issuer: issuerId } = JSON.parse(enabled.stdout) as { credential_issuer: string };
  const api: HaipIssuerWorld['api'] = (method, p, body) =>
    server.request(method, p, { headers: { 'x-api-token': token }, ...(body === undefined ? {} : { body }) });
  const put = await api('PUT', `/v1/issuer/configurations/${CONFIGURATION_ID}`, CONFIGURATION);
  if (put.status !== 201) throw new Error(`configuration refused: ${put.status} ${put.text}`);
  const mdoc = await api('PUT', `/v1/issuer/configurations/${MDOC_CONFIGURATION_ID}`, MDOC_CONFIGURATION);
  if (mdoc.status !== 201) throw new Error(`configuration refused: ${mdoc.status} ${mdoc.text}`);
  let people = 0;
  return {
    server,
    front,
    clientId,
    issuerId,
    api,
    attester: { x5c: [der(attesterLeaf.pem)], privateKey: attesterLeaf.keys.privateKey },
    clock,
    configurationId: CONFIGURATION_ID,
    suiteBaseUrl: `https://suite.example/test/a/coffer-${name}`,
    nextEmail: () => `person-${name}-${++people}@example.org`,
    async close() {
      await server.close();
      await front.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
