import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createClient } from '../../src/clients/client-admin.ts';
import { logInUser } from '../credentials/helpers.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { holderJwkOf } from '../helpers/issuers/holder.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { createJwtVcIssuer } from '../helpers/issuers/jwt-vc-issuer.ts';
import { issueMdoc, MDL_DOCTYPE, MDL_NAMESPACE } from '../helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { keyIdentifierOf } from './certificates.ts';
import {
  type Audience,
  checkJwtVpPresentation,
  checkMdocPresentation,
  checkSdJwtPresentation,
  selectivelyDisclosed,
} from './format-checks.ts';
import { type Transaction, VERIFIER_FRONTEND } from './verifier.ts';
import {
  approve,
  consentView,
  decide,
  logInWithSiweInConsent,
  startConsent,
  startWalletWorld,
  type WalletWorld,
} from './wallet-helpers.ts';

/** What a verifier that takes the contract's formats lists (client_metadata.vp_formats_supported). */
const ALL_FORMATS = {
  'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['EdDSA', 'ES256'] },
  mso_mdoc: { issuerauth_alg_values: [-7, -9], deviceauth_alg_values: [-8, -7] },
  jwt_vc_json: { alg_values: ['ES256', 'EdDSA'] },
};

const pidQuery = {
  id: 'pid',
  format: 'dc+sd-jwt',
  meta: { vct_values: [PID_VCT] },
  claims: [{ path: ['given_name'] }, { path: ['address', 'locality'] }],
};
const mdlQuery = {
  id: 'mdl',
  format: 'mso_mdoc',
  meta: { doctype_value: MDL_DOCTYPE },
  claims: [
    { path: [MDL_NAMESPACE, 'given_name'] },
    { path: [MDL_NAMESPACE, 'age_over_18'], intent_to_retain: true },
  ],
};
const degreeQuery = {
  id: 'degree',
  format: 'jwt_vc_json',
  meta: { type_values: [['https://www.w3.org/2018/credentials#VerifiableCredential']] },
  claims: [{ path: ['credentialSubject', 'given_name'] }],
};

const audienceOf = (transaction: Transaction, responseUri = transaction.responseUri): Audience => ({
  clientId: transaction.clientId,
  nonce: transaction.nonce,
  responseUri,
  encryptionJwk: transaction.encryptionKey?.publicJwk ?? null,
});

for (const kind of DATABASE_KINDS) {
  describe(`hosted wallet: dc+sd-jwt, mso_mdoc and jwt_vc_json to an independent verifier, on ${kind}`, () => {
    let world: WalletWorld;
    let identity: IssuerIdentity;
    let anchorFile: string;
    const account = privateKeyToAccount(generatePrivateKey());
    let did: string;
    let jwtVc: string;
    let cookie: string | undefined;

    before(async () => {
      identity = await makeIssuerIdentity('Trusted Issuer');
      anchorFile = path.join(tmpdir(), `coffer-issuers-${randomBytes(6).toString('hex')}.pem`);
      await writeFile(anchorFile, identity.ca.pem);
      world = await startWalletWorld(kind, { ISSUER_TRUST_ANCHORS: anchorFile });
      did = (await logInUser(world.server, world.rp, account)).did;
      const jwtIssuer = await createJwtVcIssuer();
      jwtVc = await jwtIssuer.issue({ subject: did });
      for (const vc of [
        await issueSdJwtVc(identity, { holderJwk: holderJwkOf(did) }),
        await issueMdoc(identity, { deviceJwk: holderJwkOf(did) }),
        jwtVc,
      ]) {
        const stored = await world.server.request('POST', '/v1/vc/issuer/store', {
          headers: { 'x-api-token': world.issuerToken },
          body: { vc },
        });
        assert.equal(stored.status, 201, stored.text);
      }
    });
    after(async () => {
      await world?.close();
      if (anchorFile) await rm(anchorFile, { force: true });
    });

    /** Opens the consent with the person's session (logging in inside the first consent). */
    async function consentFor(transaction: Transaction): Promise<string> {
      const consentPath = await startConsent(world.server, transaction.query, cookie);
      if (!cookie) {
        const login = await logInWithSiweInConsent(world.server, consentPath, account);
        cookie = login.cookie ?? undefined;
      }
      return consentPath;
    }

    const request = (dcql: object, formats: Record<string, unknown> = ALL_FORMATS) =>
      world.verifier.createRequest({ by: 'reference', responseMode: 'direct_post.jwt', dcql, formats });

    test('dc+sd-jwt over x509_hash and direct_post.jwt: only the requested disclosures, a key binding JWT for this request', async () => {
      const transaction = await request({ credentials: [pidQuery] });
      const consentPath = await consentFor(transaction);
      const consent = await consentView(world.server, consentPath);
      const [candidate] = consent.requests[0].candidates;
      assert.equal(candidate.format, 'dc+sd-jwt');
      assert.equal(candidate.issuer_certificate.trusted, true, 'the issuer chains to ISSUER_TRUST_ANCHORS');
      assert.match(candidate.issuer_certificate.subject, /Trusted Issuer Document Signer/);
      // Readable names beside the raw ones (issue #29): the certificate's organisation, the vct's last segment.
      assert.equal(candidate.issuer_name, 'Trusted Issuer');
      assert.equal(candidate.type_name, 'Identity credential');
      assert.equal(candidate.types[0], PID_VCT);
      assert.equal(candidate.discloses_everything, false);
      assert.deepEqual(
        candidate.claims.map((c: { path: string[]; values: unknown[] }) => [c.path.join('.'), c.values]),
        [
          ['given_name', ['Ada']],
          ['address.locality', ['London']],
        ],
      );
      const received = await approve(world.server, consentPath, transaction);
      assert.deepEqual(Object.keys(received.vpToken!), ['pid']);
      const claims = await checkSdJwtPresentation(
        received.vpToken!['pid']![0],
        identity,
        holderJwkOf(did),
        audienceOf(transaction),
      );
      assert.deepEqual(selectivelyDisclosed(claims), { given_name: 'Ada', address: { locality: 'London' } });
    });

    test('mso_mdoc: a DeviceResponse with only the requested elements, signed over the SessionTranscript with the encryption key thumbprint', async () => {
      const transaction = await request({ credentials: [mdlQuery] });
      const consentPath = await consentFor(transaction);
      const consent = await consentView(world.server, consentPath);
      const [candidate] = consent.requests[0].candidates;
      assert.equal(candidate.format, 'mso_mdoc');
      assert.equal(candidate.type_name, 'Mobile driving licence');
      assert.equal(candidate.issuer_name, 'Trusted Issuer');
      assert.deepEqual(
        candidate.claims.map((c: { intent_to_retain?: boolean }) => c.intent_to_retain === true),
        [false, true],
        'the verifier says it will keep age_over_18',
      );
      const page = await fetch(`${world.server.url}${consentPath}`);
      assert.match(await page.text(), /the verifier will keep this/);

      const received = await approve(world.server, consentPath, transaction);
      const disclosed = await checkMdocPresentation(
        received.vpToken!['mdl']![0],
        identity,
        audienceOf(transaction),
      );
      assert.deepEqual(disclosed, { [MDL_NAMESPACE]: ['age_over_18', 'given_name'] });
    });

    test('jwt_vc_json: the consent says the whole credential is shared; a VP JWT bound to this request', async () => {
      const transaction = await request({ credentials: [degreeQuery] });
      const consentPath = await consentFor(transaction);
      const consent = await consentView(world.server, consentPath);
      assert.equal(consent.requests[0].candidates[0].discloses_everything, true);
      assert.equal(consent.requests[0].candidates[0].type_name, 'University degree credential');
      assert.match(consent.requests[0].candidates[0].issuer_name, /^did:jwk:\S{8}…\S{6}$/);
      const page = await fetch(`${world.server.url}${consentPath}`);
      assert.match(await page.text(), /The whole credential/);
      const received = await approve(world.server, consentPath, transaction);
      await checkJwtVpPresentation(
        received.vpToken!['degree']![0],
        did,
        holderJwkOf(did),
        audienceOf(transaction),
        jwtVc,
      );
    });

    test('one request asks for an SD-JWT and an mdoc together', async () => {
      const transaction = await request({ credentials: [pidQuery, mdlQuery] });
      const consentPath = await consentFor(transaction);
      const received = await approve(world.server, consentPath, transaction);
      assert.deepEqual(Object.keys(received.vpToken!).sort(), ['mdl', 'pid']);
      const audience = audienceOf(transaction);
      const claims = await checkSdJwtPresentation(
        received.vpToken!['pid']![0],
        identity,
        holderJwkOf(did),
        audience,
      );
      assert.deepEqual(Object.keys(selectivelyDisclosed(claims)).sort(), ['address', 'given_name']);
      assert.deepEqual(await checkMdocPresentation(received.vpToken!['mdl']![0], identity, audience), {
        [MDL_NAMESPACE]: ['age_over_18', 'given_name'],
      });
    });

    test("trusted_authorities: a verifier naming the issuing CA's key (aki) gets the SD-JWT and the mdoc; another CA or a trusted list gets nothing", async () => {
      const trustedBy = (authorities: object[]) => ({
        credentials: [pidQuery, mdlQuery].map((query) => ({ ...query, trusted_authorities: authorities })),
      });
      const transaction = await request(
        trustedBy([{ type: 'aki', values: [await keyIdentifierOf(identity.ca)] }]),
      );
      const consentPath = await consentFor(transaction);
      const received = await approve(world.server, consentPath, transaction);
      assert.deepEqual(Object.keys(received.vpToken!).sort(), ['mdl', 'pid']);
      const audience = audienceOf(transaction);
      await checkSdJwtPresentation(received.vpToken!['pid']![0], identity, holderJwkOf(did), audience);
      await checkMdocPresentation(received.vpToken!['mdl']![0], identity, audience);

      const other = await makeIssuerIdentity('Other Issuer');
      const refusals: Array<[object[], RegExp]> = [
        [
          [{ type: 'aki', values: [await keyIdentifierOf(other.ca)] }],
          /no credential you hold was issued under the certification authorities request pid names/,
        ],
        [
          [{ type: 'etsi_tl', values: ['https://lotl.example.com'] }],
          /request pid accepts only issuers of the ETSI trusted lists it names, which this wallet cannot check/,
        ],
      ];
      for (const [authorities, reason] of refusals) {
        const refused = await request(trustedBy(authorities));
        const path = await consentFor(refused);
        const consent = await consentView(world.server, path);
        assert.deepEqual(
          consent.requests.map((r: { candidates: unknown[] }) => r.candidates),
          [[], []],
        );
        assert.equal(consent.satisfiable, false);
        assert.match(consent.unsatisfiable_reason, reason);
        const page = await fetch(`${world.server.url}${path}`);
        assert.match(await page.text(), reason);
        const answer = await decide(world.server, path, { decision: 'approve' });
        assert.equal(answer.status, 400);
        assert.match(answer.body.error_description, reason);
        assert.equal(refused.received.length, 0, 'nothing was presented');
      }
    });

    test('a pre-registered verifier with fragment: SD-JWT and mdoc in the redirect, the transcript with no thumbprint', async () => {
      const registered = await createClient(world.server.database.db, {
        name: 'Registered Verifier',
        verifier: true,
        redirectUris: [`${VERIFIER_FRONTEND}/cb`],
      });
      const transaction = world.verifier.createRegisteredRequest(String(registered.client_id), 'fragment', {
        dcql: { credentials: [pidQuery, mdlQuery] },
      });
      const consentPath = await consentFor(transaction);
      const answer = await decide(world.server, consentPath, { decision: 'approve' });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const received = world.verifier.receiveFragment(transaction, answer.body.redirect_to);
      assert.equal(received.refusal, null, received.refusal ?? '');
      const audience = audienceOf(transaction, `${VERIFIER_FRONTEND}/cb`);
      const claims = await checkSdJwtPresentation(
        received.vpToken!['pid']![0],
        identity,
        holderJwkOf(did),
        audience,
      );
      assert.deepEqual(Object.keys(selectivelyDisclosed(claims)).sort(), ['address', 'given_name']);
      await checkMdocPresentation(received.vpToken!['mdl']![0], identity, audience);
    });

    test('a verifier whose kb-jwt_alg_values exclude the holder key algorithm (EdDSA) gets no presentation', async () => {
      const transaction = await request(
        { credentials: [pidQuery] },
        { 'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['ES256'] } },
      );
      const consentPath = await consentFor(transaction);
      const consent = await consentView(world.server, consentPath);
      assert.deepEqual(consent.requests[0].candidates, []);
      assert.equal(consent.satisfiable, false);
      const answer = await decide(world.server, consentPath, { decision: 'approve' });
      assert.equal(answer.status, 400);
      assert.equal(transaction.received.length, 0, 'nothing was presented');
    });

    test('a verifier that takes ES256 issuers only for mdoc gets no mdoc it cannot verify (issuerauth_alg_values)', async () => {
      const transaction = await request(
        { credentials: [mdlQuery] },
        { mso_mdoc: { issuerauth_alg_values: [-35], deviceauth_alg_values: [-8] } },
      );
      const consent = await consentView(world.server, await consentFor(transaction));
      assert.deepEqual(consent.requests[0].candidates, []);
    });
  });
}
