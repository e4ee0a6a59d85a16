import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { logInUser } from '../credentials/helpers.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { holderJwkOf } from '../helpers/issuers/holder.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { issueSdJwtVc, PID_CLAIMS } from '../helpers/issuers/sd-jwt-issuer.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { makeCertificate } from '../oid4vp/certificates.ts';
import { registerRelyingParty } from '../oidc/flow-helpers.ts';
import { openWallet, walletJson } from '../wallet/wallet-helpers.ts';

const STORE = '/v1/vc/issuer/store';
const GOVERNMENT = 'https://pid.gov.example';

/**
 * What an issuer's certificate vouches for (DESIGN.md, Rules at the edges). An SD-JWT VC's https
 * `iss` must be named by its x5c leaf: a university holding a certificate from a CA the wallet
 * trusts must not issue a government's PID. And a chain counts only while every certificate in
 * it is valid: a signer certificate that expired vouches for nothing, on the wallet page too.
 */
for (const kind of DATABASE_KINDS) {
  describe(`issuer certificates: the iss they name, the time they are valid (${kind})`, () => {
    let server: TestServer;
    let dir: string;
    let identity: IssuerIdentity;
    let issuerToken: string;
    const account = privateKeyToAccount(generatePrivateKey());
    let did: string;

    before(async () => {
      identity = await makeIssuerIdentity('University');
      dir = await mkdtemp(path.join(tmpdir(), 'coffer-issuer-certificates-'));
      const anchors = path.join(dir, 'anchors.pem');
      await writeFile(anchors, identity.ca.pem);
      server = await startTestServer(kind, { ISSUER_TRUST_ANCHORS: anchors });
      issuerToken = (await server.createMaster('Issuer')).token;
      const rp = await registerRelyingParty(server);
      did = (await logInUser(server, rp, account)).did;
    });
    after(async () => {
      await server?.close();
      await rm(dir, { recursive: true, force: true });
    });

    const store = (vc: string) =>
      server.request('POST', STORE, { headers: { 'x-api-token': issuerToken }, body: { vc } });

    test("a trusted certificate naming one host cannot sign an SD-JWT VC in another issuer's name", async () => {
      const forged = await issueSdJwtVc(identity, {
        holderJwk: holderJwkOf(did),
        claims: { ...PID_CLAIMS, iss: GOVERNMENT },
      });
      const refused = await store(forged);
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.body.error, 'invalid_credential');
      assert.match(
        refused.body.error_description,
        /iss https:\/\/pid\.gov\.example is not named by its x5c certificate/,
      );
      // The same certificate in its own name is taken.
      assert.equal((await store(await issueSdJwtVc(identity, { holderJwk: holderJwkOf(did) }))).status, 201);
    });

    test('a certificate naming the issuer by its URI, or by the dNSName of its host, is taken', async () => {
      for (const names of [{ uris: [`${GOVERNMENT}`] }, { dnsNames: ['pid.gov.example'] }]) {
        const signer = await makeCertificate({
          subject: 'CN=PID Signer, O=Government, C=GB',
          issuer: identity.ca,
          ...names,
        });
        const pid = await issueSdJwtVc(
          { ca: identity.ca, signer },
          { holderJwk: holderJwkOf(did), claims: { ...PID_CLAIMS, iss: GOVERNMENT } },
        );
        const stored = await store(pid);
        assert.equal(stored.status, 201, `${JSON.stringify(names)}: ${stored.text}`);
      }
    });

    test('once the signer certificate expires, the wallet page no longer calls its issuer trusted', async () => {
      const signer = await makeCertificate({
        subject: 'CN=Short-lived Signer, O=University, C=GB',
        issuer: identity.ca,
        dnsNames: ['issuer.example.com'],
        notAfter: new Date(Date.now() + 2500),
      });
      const credential = await issueSdJwtVc(
        { ca: identity.ca, signer },
        { holderJwk: holderJwkOf(did), claims: { ...PID_CLAIMS, given_name: 'Short' } },
      );
      assert.equal((await store(credential)).status, 201);
      const cookie = await openWallet(server, account);
      const shown = async () =>
        (await walletJson(server, cookie)).credentials.find(
          (c: { claims: { label: string; value: unknown }[] }) =>
            c.claims.some((claim) => claim.value === 'Short'),
        ).issuer.certificate;
      assert.equal((await shown()).trusted, true, 'while the certificate is valid');
      await sleep(3000);
      assert.equal((await shown()).trusted, false, 'after it expired');
    });
  });
}
