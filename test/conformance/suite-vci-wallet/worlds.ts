import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { coffer } from '../../helpers/cli.ts';
import { startTestServer } from '../../helpers/server.ts';
import { makeCertificate, privateKeyPem } from '../../oid4vp/certificates.ts';
import { startTlsFront } from '../../verifier/tls-front.ts';
import { type HaipIssuerWorld, startHaipIssuerWorld } from '../suite-fapi2-client/haip-world.ts';

/**
 * The issuers the suite's wallet (the VCI modules of both issuer plans) is run against. Both
 * have the shape of the FAPI modules' world (HaipIssuerWorld), so the FAPI client's steps
 * (fetchServerConfiguration, the PAR flow, the token endpoint, DPoP) serve them too.
 */
export type IssuerWorld = HaipIssuerWorld & {
  haip: boolean;
  /** Another world on the same server, set to ask for another configuration. */
  asking(configurationId: string): IssuerWorld;
};

/** The plain plan's sd_jwt_vc configuration: claims come with each offer; three copies per request. */
export const PLAIN_SD_JWT = 'membership';
export const PLAIN_SD_JWT_CONFIGURATION = {
  format: 'dc+sd-jwt',
  vct: 'urn:example:conformance:membership',
  claims: [{ path: ['given_name'] }, { path: ['member_number'] }],
  validity_seconds: 30 * 86400,
  batch_size: 3,
  status: true,
};
export const PLAIN_MDOC = 'membership_mdoc';
export const PLAIN_MDOC_CONFIGURATION = {
  format: 'mso_mdoc',
  doctype: 'org.example.conformance.membership.1',
  claims: [{ path: ['org.example.conformance.membership.1', 'given_name'] }],
  status: true,
};
/** The claims each offer of the plain plan carries, per configuration. */
export const OFFER_CLAIMS: Record<string, Record<string, unknown>> = {
  [PLAIN_SD_JWT]: { given_name: 'Ada', member_number: '1815' },
  [PLAIN_MDOC]: { 'org.example.conformance.membership.1': { given_name: 'Ada' } },
};

/** The HAIP plan's batch configuration: wallet-initiated (from_profile), three copies per request. */
export const HAIP_BATCH = 'membership_batch';
export const HAIP_BATCH_CONFIGURATION = {
  format: 'dc+sd-jwt',
  vct: 'urn:example:conformance:membership',
  scope: 'membership_batch',
  claims: [{ path: ['email'] }],
  from_profile: { email: 'email_address' },
  validity_seconds: 30 * 86400,
  batch_size: 3,
  status: true,
};

const withAsking = (world: HaipIssuerWorld, haip: boolean): IssuerWorld => {
  const self: IssuerWorld = {
    ...world,
    haip,
    asking: (configurationId) => ({ ...self, configurationId }),
  };
  return self;
};

/** `coffer issuer enable --haip` (the FAPI modules' world) with a batch configuration added. */
export async function startHaipVciWorld(name: string): Promise<IssuerWorld> {
  const world = await startHaipIssuerWorld(name);
  const put = await world.api('PUT', `/v1/issuer/configurations/${HAIP_BATCH}`, HAIP_BATCH_CONFIGURATION);
  if (put.status !== 201) throw new Error(`configuration refused: ${put.status} ${put.text}`);
  return withAsking(world, true);
}

const der = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, '');

/**
 * A tenant issuer enabled with plain `coffer issuer enable` (no HAIP) behind TLS, with its own
 * certificate chain, the plan's two configurations, and offers made through the tenant API.
 */
export async function startPlainVciWorld(name: string): Promise<IssuerWorld> {
  const dir = await mkdtemp(path.join(tmpdir(), 'coffer-vci-'));
  const attesterRoot = await makeCertificate({ subject: 'CN=Conformance Attester Root', ca: true });
  const attesterLeaf = await makeCertificate({ subject: 'CN=Conformance Attester', issuer: attesterRoot });
  const issuerCa = await makeCertificate({ subject: 'C=GB, CN=Test Issuer CA', ca: true });
  const issuerLeaf = await makeCertificate({
    subject: 'C=GB, O=Club, CN=Club Issuer',
    issuer: issuerCa,
    ipAddresses: ['127.0.0.1'],
  });
  await writeFile(path.join(dir, 'key.pem'), await privateKeyPem(issuerLeaf.keys.privateKey));
  await writeFile(path.join(dir, 'chain.pem'), issuerLeaf.pem);
  const clock = { aheadMs: 0 };
  const front = await startTlsFront();
  const server = await startTestServer(
    'sqlite',
    { ALLOW_PRIVATE_TARGETS: 'true', PUBLIC_URL: front.url },
    { issuerClock: () => new Date(Date.now() + clock.aheadMs) },
  );
  front.target = server.url;
  const { clientId, token } = await server.createMaster('Club');
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
    '--json',
  );
  if (enabled.code !== 0) throw new Error(`issuer enable failed: ${enabled.stderr}`);
  const { credential_issuer: issuerId } = JSON.parse(enabled.stdout) as { credential_issuer: string };
  const api: HaipIssuerWorld['api'] = (method, p, body) =>
    server.request(method, p, { headers: { 'x-api-token': token }, ...(body === undefined ? {} : { body }) });
  for (const [id, configuration] of [
    [PLAIN_SD_JWT, PLAIN_SD_JWT_CONFIGURATION],
    [PLAIN_MDOC, PLAIN_MDOC_CONFIGURATION],
  ] as const) {
    const put = await api('PUT', `/v1/issuer/configurations/${id}`, configuration);
    if (put.status !== 201) throw new Error(`configuration refused: ${put.status} ${put.text}`);
  }
  let people = 0;
  return withAsking(
    {
      server,
      front,
      clientId,
      issuerId,
      api,
      attester: { x5c: [der(attesterLeaf.pem)], privateKey: attesterLeaf.keys.privateKey },
      clock,
      configurationId: PLAIN_SD_JWT,
      suiteBaseUrl: `https://suite.example/test/a/coffer-${name}`,
      nextEmail: () => `person-${name}-${++people}@example.org`,
      async close() {
        await server.close();
        await front.close();
        await rm(dir, { recursive: true, force: true });
      },
    },
    false,
  );
}
