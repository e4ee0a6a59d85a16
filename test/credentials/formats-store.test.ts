import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { base64url, IssuerSigned } from '@owf/mdoc';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { holderJwkOf } from '../helpers/issuers/holder.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { createJwtVcIssuer, type JwtVcIssuer } from '../helpers/issuers/jwt-vc-issuer.ts';
import { issueMdoc, MDL_DOCTYPE, MDL_NAMESPACE } from '../helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { makeCertificate } from '../oid4vp/certificates.ts';
import { registerRelyingParty } from '../oidc/flow-helpers.ts';
import { type LoggedInUser, logInUser } from './helpers.ts';
import { createStockIssuer, personCredential, type StockIssuer } from './stock-issuer.ts';

const STORE = '/v1/vc/issuer/store';
const LIST = '/v1/openidc/credentials';
const PROOF = '/v1/openidc/credentials/proof';

/** Replaces the value inside one disclosure (re-encoded), keeping its salt and name. */
function alterDisclosure(sdJwt: string, name: string, value: unknown): string {
  const [jwt, ...disclosures] = sdJwt.split('~');
  const altered = disclosures.map((d) => {
    if (!d) return d;
    const decoded = JSON.parse(Buffer.from(d, 'base64url').toString());
    if (decoded[1] !== name) return d;
    return Buffer.from(JSON.stringify([decoded[0], name, value])).toString('base64url');
  });
  return [jwt, ...altered].join('~');
}

/** Changes one element value of an IssuerSigned and re-encodes it: the MSO digest no longer matches. */
function alterMdocElement(value: string, element: string, newValue: unknown): string {
  const issuerSigned = IssuerSigned.decode(base64url.decode(value));
  const items = issuerSigned.issuerNamespaces!.issuerNamespaces.get(MDL_NAMESPACE)!;
  const item = items.find((i) => i.elementIdentifier === element)!;
  (item as unknown as { structure: Map<string, unknown> }).structure.set('elementValue', newValue);
  return base64url.encode(issuerSigned.encode());
}

for (const kind of DATABASE_KINDS) {
  describe(`credential formats: store and list dc+sd-jwt, mso_mdoc, jwt_vc_json, on ${kind}`, () => {
    let server: TestServer;
    let issuerToken: string;
    let identity: IssuerIdentity;
    let jwtIssuer: JwtVcIssuer;
    let ldpIssuer: StockIssuer;
    let ada: LoggedInUser;
    let grace: LoggedInUser;

    before(async () => {
      server = await startTestServer(kind);
      const rp = await registerRelyingParty(server);
      issuerToken = (await server.createMaster('Issuer')).token;
      identity = await makeIssuerIdentity();
      jwtIssuer = await createJwtVcIssuer();
      ldpIssuer = await createStockIssuer();
      ada = await logInUser(server, rp, privateKeyToAccount(generatePrivateKey()));
      grace = await logInUser(server, rp, privateKeyToAccount(generatePrivateKey()));
    });
    after(() => server?.close());

    const store = (vc: unknown, format?: string) =>
      server.request('POST', STORE, {
        headers: { 'x-api-token': issuerToken },
        body: format === undefined ? { vc } : { vc, format },
      });
    const refused = async (vc: unknown, pattern: RegExp, format?: string) => {
      const answer = await store(vc, format);
      assert.equal(answer.status, 422, answer.text);
      assert.equal(answer.body.error, 'invalid_credential');
      assert.match(answer.body.error_description, pattern);
    };

    test('each format is stored for the user its holder key or subject names, listed newest first', async () => {
      const sdJwt = await issueSdJwtVc(identity, { holderJwk: holderJwkOf(ada.did) });
      const mdoc = await issueMdoc(identity, { deviceJwk: holderJwkOf(ada.did) });
      const jwtVc = await jwtIssuer.issue({ subject: ada.did });

      const first = await store(sdJwt, 'dc+sd-jwt');
      assert.equal(first.status, 201, first.text);
      assert.equal(first.body.data.format, 'dc+sd-jwt');
      assert.equal(first.body.data.vc, sdJwt);
      assert.match(first.body.data.cid, /^bafy/);
      const again = await store(sdJwt);
      assert.equal(again.status, 200, 'the same credential again, recognised without format');
      assert.equal(again.body.data.cid, first.body.data.cid);

      const second = await store(mdoc);
      assert.equal(second.status, 201, second.text);
      assert.equal(second.body.data.format, 'mso_mdoc');
      const third = await store(jwtVc);
      assert.equal(third.status, 201, third.text);
      assert.equal(third.body.data.format, 'jwt_vc_json');

      const listed = await server.request('GET', LIST, { headers: ada.bearer });
      assert.equal(listed.status, 200, listed.text);
      const [vcJwt, md, sd] = listed.body.data;
      assert.deepEqual(
        listed.body.data.map((c: { format: string }) => c.format),
        ['jwt_vc_json', 'mso_mdoc', 'dc+sd-jwt'],
      );
      assert.equal(sd.type, PID_VCT);
      assert.equal(sd.issuer, 'https://issuer.example.com');
      assert.equal(sd.claims.given_name, 'Ada');
      assert.equal(sd.claims.address.locality, 'London', 'disclosures are decoded into the claims');
      assert.equal(sd.credential, sdJwt);
      assert.equal(md.type, MDL_DOCTYPE);
      assert.deepEqual(md.claims[MDL_NAMESPACE].birth_date, '1815-12-10');
      assert.match(md.issuer, /Document Signer/);
      assert.equal(vcJwt.issuer, jwtIssuer.did);
      assert.deepEqual(vcJwt.type, ['VerifiableCredential', 'UniversityDegreeCredential']);
      assert.equal(vcJwt.claims.credentialSubject.id, ada.did);
      for (const entry of listed.body.data) {
        assert.deepEqual(Object.keys(entry).sort(), [
          'claims',
          'credential',
          'format',
          'id',
          'issuer',
          'type',
          'validFrom',
          'validUntil',
        ]);
      }

      const others = await server.request('GET', LIST, { headers: grace.bearer });
      assert.deepEqual(others.body.data, [], "nobody else's list shows them");

      const proof = await server.request('POST', PROOF, {
        headers: ada.bearer,
        body: { vcIdFields: { [sd.id]: ['/given_name'] } },
      });
      assert.equal(proof.status, 400, proof.text);
      assert.match(proof.body.error_description, /OpenID4VP/);
    });

    test("a stored SD-JWT VC stays listed after its issuer's signing certificate expires", async () => {
      const ca = identity.ca;
      const signer = await makeCertificate({
        subject: 'CN=Short-lived Signer, O=Example Issuer, C=GB',
        issuer: ca,
        dnsNames: ['issuer.example.com'],
        notAfter: new Date(Date.now() + 2500),
      });
      const sdJwt = await issueSdJwtVc({ ca, signer }, { holderJwk: holderJwkOf(grace.did) });
      assert.equal((await store(sdJwt)).status, 201);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const listed = await server.request('GET', LIST, { headers: grace.bearer });
      assert.equal(listed.status, 200, listed.text);
      assert.equal(listed.body.data[0].credential, sdJwt);
      await refused(
        await issueSdJwtVc({ ca, signer }, { holderJwk: holderJwkOf(grace.did) }),
        /certificate is not valid at this time/,
      );
    });

    test('the same identifier with other content is 409', async () => {
      const jti = `urn:uuid:${crypto.randomUUID()}`;
      const one = await issueSdJwtVc(identity, { holderJwk: holderJwkOf(ada.did), jti });
      const other = await issueSdJwtVc(identity, {
        holderJwk: holderJwkOf(ada.did),
        jti,
        claims: { given_name: 'Augusta' },
      });
      assert.equal((await store(one)).status, 201);
      const conflict = await store(other);
      assert.equal(conflict.status, 409, conflict.text);
    });

    test('refusals: altered disclosure, unreferenced disclosure, broken signature, another holder, expired, altered mdoc element', async () => {
      const holderJwk = holderJwkOf(ada.did);
      const sdJwt = await issueSdJwtVc(identity, { holderJwk });
      await refused(
        alterDisclosure(sdJwt, 'given_name', 'Eve'),
        /disclosure of given_name matches no digest/,
      );
      const smuggled = `${sdJwt}${Buffer.from(JSON.stringify(['c2FsdA', 'is_admin', true])).toString('base64url')}~`;
      await refused(smuggled, /disclosure of is_admin matches no digest/);
      const [header, payload, signature] = sdJwt.split('~')[0]!.split('.');
      const forged = sdJwt.replace(
        `${header}.${payload}.${signature}`,
        `${header}.${payload}.${signature!.slice(0, -6)}AAAAAA`,
      );
      await refused(forged, /signature does not verify/);
      const stranger = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
      await refused(await issueSdJwtVc(identity, { holderJwk: stranger }), /not a user's hosted holder key/);
      // A holder key of the wrong size (found by the fuzz suite: it was a 500).
      const shortKey = { ...stranger, x: Buffer.alloc(31, 7).toString('base64url') };
      await refused(await issueSdJwtVc(identity, { holderJwk: shortKey }), /not a user's hosted holder key/);
      await refused(
        await issueSdJwtVc(identity, { holderJwk, exp: Math.floor(Date.now() / 1000) - 3600 }),
        /expired/,
      );
      await refused(`${sdJwt}eyJhbGciOiJFZERTQSJ9.e30.c2ln`, /key binding JWT/);

      const mdoc = await issueMdoc(identity, { deviceJwk: holderJwk });
      await refused(
        alterMdocElement(mdoc, 'family_name', 'Byron'),
        /element org\.iso\.18013\.5\.1\/family_name does not match/,
      );
      await refused(
        await issueMdoc(identity, {
          deviceJwk: holderJwk,
          validFrom: new Date(Date.now() - 7200_000),
          validUntil: new Date(Date.now() - 3600_000),
        }),
        /expired/,
      );
      await refused(await issueMdoc(identity, { deviceJwk: stranger }), /not a user's hosted holder key/);

      await refused(
        await jwtIssuer.issue({ subject: ada.did, exp: Math.floor(Date.now() / 1000) - 3600 }),
        /expired/,
      );
      const jwtVc = await jwtIssuer.issue({ subject: ada.did });
      await refused(`${jwtVc.slice(0, -6)}AAAAAA`, /signature does not verify/);
      await refused(
        await jwtIssuer.issue({ subject: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK' }),
        /not a user/,
      );

      const listed = await server.request('GET', LIST, { headers: ada.bearer });
      // The claims, not the base64url credentials, in which any short word can occur by chance.
      const claims = JSON.stringify(listed.body.data.map((entry: { claims: unknown }) => entry.claims));
      assert.ok(!claims.includes('"Eve"') && !claims.includes('"Byron"'), 'no refused credential was stored');
    });

    test('a format that does not fit the value is 400; garbage is 400 or 422, never stored', async () => {
      const sdJwt = await issueSdJwtVc(identity, { holderJwk: holderJwkOf(ada.did) });
      for (const [vc, format] of [
        [sdJwt, 'ldp_vc'],
        [{ id: 'x' }, 'dc+sd-jwt'],
      ] as const) {
        const answer = await store(vc, format);
        assert.equal(answer.status, 400, answer.text);
        assert.equal(answer.body.error, 'invalid_request');
      }
      const unknown = await store('not a credential at all');
      assert.equal(unknown.status, 400, unknown.text);
      // The right shape, but nothing of the format inside: a refused credential.
      await refused('AAAA', /CBOR IssuerSigned/, 'mso_mdoc');
      await refused('abc.def.ghi', /cannot be decoded/, 'jwt_vc_json');
      await refused('abc.def.ghi~', /cannot be decoded/, 'dc+sd-jwt');
      await refused(`${sdJwt}eyJhbGciOiJFZERTQSJ9.e30.c2ln`, /key binding JWT/, 'dc+sd-jwt');
    });

    test('every value of one format named as another is 400 invalid_request, naming both; nothing is stored', async () => {
      const holderJwk = holderJwkOf(ada.did);
      const sdJwt = await issueSdJwtVc(identity, { holderJwk });
      const values: Record<string, unknown> = {
        ldp_vc: await ldpIssuer.issue(personCredential(ldpIssuer.did, ada.did)),
        jwt_vc_json: await jwtIssuer.issue({ subject: ada.did }),
        'dc+sd-jwt': sdJwt,
        mso_mdoc: await issueMdoc(identity, { deviceJwk: holderJwk }),
      };
      const before = await server.request('GET', LIST, { headers: ada.bearer });
      const escaped = (text: string) => text.replace(/[+.]/g, '\\$&');
      const doesNotFit = async (vc: unknown, format: string, given: string) => {
        const answer = await store(vc, format);
        assert.equal(answer.status, 400, `${format}: ${answer.text}`);
        assert.equal(answer.body.error, 'invalid_request');
        assert.match(
          answer.body.error_description,
          new RegExp(`^vc does not fit format ${escaped(format)}, `),
        );
        assert.match(answer.body.error_description, new RegExp(`${escaped(given)}\\.$`));
        assert.deepEqual(answer.body.details, [
          { path: '/body/format', message: 'does not fit the value of vc' },
        ]);
      };
      for (const [valueFormat, vc] of Object.entries(values)) {
        for (const format of Object.keys(values).filter((other) => other !== valueFormat)) {
          await doesNotFit(vc, format, `the shape of ${valueFormat}`);
        }
      }
      // An SD-JWT with a key binding JWT is still an SD-JWT (dc+sd-jwt refuses it with 422).
      for (const format of ['ldp_vc', 'jwt_vc_json', 'mso_mdoc']) {
        await doesNotFit(`${sdJwt}eyJhbGciOiJFZERTQSJ9.e30.c2ln`, format, 'the shape of dc+sd-jwt');
      }
      // Words, padding, a length no base64url has, too few or many dots, a bare ~: no format's shape.
      for (const vc of ['not a credential at all', 'QUJD=', 'AAAAA', 'a.b', 'a.b.c.d', '~', 'a~b~']) {
        for (const format of Object.keys(values)) {
          await doesNotFit(vc, format, 'has the shape of no credential format');
        }
      }
      const after = await server.request('GET', LIST, { headers: ada.bearer });
      assert.equal(after.body.data.length, before.body.data.length, 'nothing was stored');
    });
  });
}
