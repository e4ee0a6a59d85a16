import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import {
  type ListServer,
  newListSigner,
  PID_PROVIDER,
  signEtsiList,
  startListServer,
} from '../trust/test-trusted-lists.ts';
import { type Certified, KeyUsage, makeCertificate } from './certificates.ts';
import type { SigningIdentity } from './verifier.ts';
import {
  approve,
  authorize,
  consentView,
  errorPage,
  logInWithSiweInConsent,
  personWithCredential,
  startConsent,
  startWalletWorld,
  type WalletWorld,
} from './wallet-helpers.ts';

/**
 * The hosted wallet trusts an x509_san_dns verifier whose certificate chains to a granted
 * relying-party access (WRPAC) service of TRUSTED_LISTS, with no VERIFIER_TRUST_ANCHORS at all;
 * a verifier under a CA that the list names only as a PID provider is refused.
 */
const WRPAC = 'http://uri.etsi.org/19602/SvcType/WRPAC/Issuance';

for (const kind of DATABASE_KINDS) {
  describe(`hosted wallet: verifiers trusted through a trusted list (WRPAC), on ${kind}`, () => {
    let lists: ListServer;
    let world: WalletWorld;
    let accessCa: Certified;
    let pidCa: Certified;

    before(async () => {
      lists = await startListServer();
      const signer = await newListSigner();
      accessCa = await makeCertificate({ subject: 'CN=Access Certificate Authority', ca: true });
      pidCa = await makeCertificate({ subject: 'CN=PID Provider CA', ca: true });
      lists.put(
        '/tl.xml',
        await signEtsiList(
          {
            services: [
              { type: WRPAC, name: 'Relying party access', certificates: [accessCa] },
              { type: PID_PROVIDER, name: 'PID issuance', certificates: [pidCa] },
            ],
          },
          signer,
        ),
      );
      const dir = tmpdir();
      const signerFile = path.join(dir, `coffer-wrpac-signer-${process.pid}.pem`);
      const listsFile = path.join(dir, `coffer-wrpac-lists-${process.pid}.json`);
      await writeFile(signerFile, signer.pem);
      await writeFile(
        listsFile,
        JSON.stringify([{ url: `${lists.url}/tl.xml`, signers: signerFile, kind: 'etsi-119612' }]),
      );
      world = await startWalletWorld(kind, { TRUSTED_LISTS: listsFile }, [lists.ca.pem]);
    });
    after(async () => {
      await world?.close();
      await lists?.close();
    });

    const identity = async (ca: Certified): Promise<SigningIdentity> => ({
      leaf: await makeCertificate({
        subject: 'CN=Localhost Verifier, O=Example',
        issuer: ca,
        dnsNames: ['localhost'],
        keyUsage: KeyUsage.digitalSignature,
      }),
      chain: [],
      clientId: 'x509_san_dns:localhost',
    });

    test('a verifier under the granted access CA is verified and named with that CA', async () => {
      const ada = await personWithCredential(world, privateKeyToAccount(generatePrivateKey()));
      const transaction = await world.verifier.createRequest({
        identity: await identity(accessCa),
        host: 'localhost',
      });
      const consentPath = await startConsent(world.server, transaction.query);
      await logInWithSiweInConsent(world.server, consentPath, ada.account);
      const consent = await consentView(world.server, consentPath);
      assert.equal(consent.verifier.verified, true);
      assert.equal(consent.verifier.certificate.anchor, 'CN=Access Certificate Authority');
      await approve(world.server, consentPath, transaction);
    });

    test('a verifier under a CA the list names only as a PID provider is refused', async () => {
      const transaction = await world.verifier.createRequest({
        identity: await identity(pidCa),
        host: 'localhost',
      });
      await errorPage(
        await authorize(world.server, transaction.query),
        transaction,
        /does not chain to an authority/,
      );
    });
  });
}
