import assert from 'node:assert/strict';
import { generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { DcqlQuery } from 'dcql';
import type { CredentialFormat, FormatId } from '../../src/formats/credential-format.ts';
import { createJwtVcJsonFormat } from '../../src/formats/jwt-vc-json/index.ts';
import { createDocumentLoader } from '../../src/formats/ldp-vc/contexts/document-loader.ts';
import { msoMdocFormat } from '../../src/formats/mso-mdoc/index.ts';
import { sdJwtVcFormat } from '../../src/formats/sd-jwt-vc/index.ts';
import { chooseCredentials, evaluateDcql, type HeldCredential } from '../../src/oid4vp/dcql-matching.ts';
import { type IssuerIdentity, makeIssuerIdentity } from '../helpers/issuers/issuer-ca.ts';
import { createJwtVcIssuer } from '../helpers/issuers/jwt-vc-issuer.ts';
import { issueMdoc, MDL_DOCTYPE, MDL_NAMESPACE } from '../helpers/issuers/mdoc-issuer.ts';
import { issueSdJwtVc, PID_VCT } from '../helpers/issuers/sd-jwt-issuer.ts';
import { keyIdentifierOf } from './certificates.ts';

/** DCQL evaluation as a pure function: what a stored credential answers, without a server. */
const PERSON = 'https://issuer.example/vocab#PersonCredential';
const personClaims = {
  id: 'urn:uuid:1',
  type: ['VerifiableCredential', 'PersonCredential'],
  issuer: 'did:key:zIssuer',
  credentialSubject: { id: 'did:key:zHolder', first_name: 'Ada', last_name: 'Lovelace' },
};
const summary = (format: FormatId, id: string, claims: Record<string, unknown>, type: string | string[]) => ({
  format,
  id,
  issuer: 'did:key:zIssuer',
  type,
  validFrom: null,
  validUntil: null,
  claims,
  issuerCertificate: null,
});
const ldpVc: HeldCredential = {
  id: 'urn:uuid:1',
  format: 'ldp_vc',
  // What claims paths select from is the credential without its proof.
  summary: summary('ldp_vc', 'urn:uuid:1', personClaims, personClaims.type),
  dcql: {
    credential_format: 'ldp_vc',
    type: ['https://www.w3.org/2018/credentials#VerifiableCredential', PERSON],
    claims: personClaims,
  },
  holderBinding: true,
};
const PID = 'https://credentials.example.com/identity_credential';
const sdJwtClaims = {
  vct: PID,
  given_name: 'Ada',
  nationalities: ['GB', 'FR'],
  address: { locality: 'London' },
};
const sdJwt: HeldCredential = {
  id: 'sd-1',
  format: 'dc+sd-jwt',
  summary: summary('dc+sd-jwt', 'sd-1', sdJwtClaims, PID),
  dcql: { credential_format: 'dc+sd-jwt', vct: PID, claims: sdJwtClaims },
  holderBinding: true,
};
const MDL = 'org.iso.18013.5.1.mDL';
const mdocClaims = { 'org.iso.18013.5.1': { given_name: 'Ada', age_over_18: true } };
const mdoc: HeldCredential = {
  id: 'mdoc-1',
  format: 'mso_mdoc',
  summary: summary('mso_mdoc', 'mdoc-1', mdocClaims, MDL),
  dcql: { credential_format: 'mso_mdoc', doctype: MDL, namespaces: mdocClaims },
  holderBinding: true,
};
const held: HeldCredential[] = [ldpVc];
const personQuery = (extra: object = {}) =>
  DcqlQuery.parse({
    credentials: [
      {
        id: 'person',
        format: 'ldp_vc',
        meta: { type_values: [[PERSON]] },
        claims: [{ path: ['credentialSubject', 'first_name'] }],
        ...extra,
      },
    ],
  });

test('a matching credential is a candidate, with the pointer and value of the requested claim', () => {
  const [match] = evaluateDcql(personQuery(), held).queries;
  assert.equal(match?.candidates.length, 1);
  assert.deepEqual(match?.candidates[0]?.claims, [
    {
      path: ['credentialSubject', 'first_name'],
      pointers: ['/credentialSubject/first_name'],
      values: ['Ada'],
      intentToRetain: false,
    },
  ]);
});

test('trusted_authorities: an ldp_vc credential (did:key issuer, no certificate chain) matches no type of them', () => {
  for (const authority of [
    { type: 'aki', values: ['s9tIpPmhxdiuNkHMEWNpYim8S8Y'] },
    { type: 'etsi_tl', values: ['https://lotl.example.com'] },
    { type: 'openid_federation', values: ['https://trustanchor.example.com'] },
  ]) {
    const evaluation = evaluateDcql(personQuery({ trusted_authorities: [authority] }), held);
    assert.deepEqual(evaluation.queries[0]?.candidates, [], authority.type);
    const choice = chooseCredentials(evaluation);
    assert.equal(choice.ok, false);
    assert.match((choice as { reason: string }).reason, /request person/, authority.type);
  }
});

test('a claim the credential lacks, or only inside the proof, matches nothing', () => {
  for (const path of [
    ['credentialSubject', 'nickname'],
    ['proof', 'type'],
  ]) {
    const query = DcqlQuery.parse({
      credentials: [
        { id: 'person', format: 'ldp_vc', meta: { type_values: [[PERSON]] }, claims: [{ path }] },
      ],
    });
    assert.deepEqual(evaluateDcql(query, held).queries[0]?.candidates, [], path.join('.'));
  }
});

const anyFormatQuery = () =>
  DcqlQuery.parse({
    credentials: [
      {
        id: 'pid',
        format: 'dc+sd-jwt',
        meta: { vct_values: [PID] },
        claims: [{ path: ['nationalities', null] }],
      },
      {
        id: 'mdl',
        format: 'mso_mdoc',
        meta: { doctype_value: MDL },
        claims: [{ path: ['org.iso.18013.5.1', 'age_over_18'], intent_to_retain: true }],
      },
    ],
  });

test('each query matches only credentials of its format and meta, with null wildcards and intent_to_retain', () => {
  const [pid, mdl] = evaluateDcql(anyFormatQuery(), [ldpVc, sdJwt, mdoc]).queries;
  assert.deepEqual(
    pid?.candidates.map((c) => [c.credentialId, c.claims[0]?.pointers]),
    [['sd-1', ['/nationalities/0', '/nationalities/1']]],
  );
  assert.deepEqual(
    mdl?.candidates.map((c) => [c.credentialId, c.claims[0]?.pointers, c.claims[0]?.intentToRetain]),
    [['mdoc-1', ['/org.iso.18013.5.1/age_over_18'], true]],
  );
});

test('values keep only matching array elements; another vct or doctype matches nothing', () => {
  const query = DcqlQuery.parse({
    credentials: [
      {
        id: 'pid',
        format: 'dc+sd-jwt',
        meta: { vct_values: [PID] },
        claims: [{ path: ['nationalities', null], values: ['FR'] }],
      },
      { id: 'other', format: 'dc+sd-jwt', meta: { vct_values: ['https://other.example/vct'] } },
      { id: 'mdl', format: 'mso_mdoc', meta: { doctype_value: 'org.example.other' } },
    ],
  });
  const [pid, other, mdl] = evaluateDcql(query, [sdJwt, mdoc]).queries;
  assert.deepEqual(pid?.candidates[0]?.claims[0]?.pointers, ['/nationalities/1']);
  assert.deepEqual(other?.candidates, []);
  assert.deepEqual(mdl?.candidates, []);
});

test('a credential the verifier cannot verify is no candidate', () => {
  const refuseSdJwt = (credential: HeldCredential) => credential.format !== 'dc+sd-jwt';
  const [pid, mdl] = evaluateDcql(anyFormatQuery(), [sdJwt, mdoc], refuseSdJwt).queries;
  assert.deepEqual(pid?.candidates, []);
  assert.equal(mdl?.candidates.length, 1);
});

describe('trusted_authorities against the chains of real credentials (§6.1.1)', () => {
  const jsonLd = { documentLoader: createDocumentLoader(async () => undefined) };
  const formats = { sdJwt: sdJwtVcFormat, mdoc: msoMdocFormat, jwtVc: createJwtVcJsonFormat(jsonLd) };
  const VC = 'https://www.w3.org/2018/credentials#VerifiableCredential';
  const deviceJwk = () =>
    generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }) as JsonWebKey;
  let issuer: IssuerIdentity;
  let chained: IssuerIdentity;
  let other: IssuerIdentity;
  let credentials: HeldCredential[];
  let chainedCredentials: HeldCredential[];

  /** A stored credential as the wallet holds it: parsed by its format, matched by what the format gives. */
  async function heldOf(format: CredentialFormat, value: string, id: string): Promise<HeldCredential> {
    const parsed = format.parse(value, { now: new Date(), issuerTrustAnchors: [] });
    return {
      id,
      format: format.id,
      summary: parsed.summary,
      dcql: await format.dcqlInput(value, parsed.summary),
      holderBinding: true,
    };
  }

  /** One SD-JWT VC, one mdoc and one VC-JWT (x5c) of the identity; for `issuer`, also a VC-JWT with no x5c. */
  async function credentialsOf(identity: IssuerIdentity, prefix: string): Promise<HeldCredential[]> {
    const holder = deviceJwk();
    return Promise.all([
      heldOf(formats.sdJwt, await issueSdJwtVc(identity, { holderJwk: holder }), `${prefix}-sd`),
      heldOf(formats.mdoc, await issueMdoc(identity, { deviceJwk: holder }), `${prefix}-mdoc`),
      heldOf(
        formats.jwtVc,
        await (await createJwtVcIssuer(identity)).issue({ subject: 'did:key:zHolder' }),
        `${prefix}-jwt`,
      ),
    ]);
  }

  before(async () => {
    [issuer, chained, other] = await Promise.all([
      makeIssuerIdentity('Held Issuer'),
      makeIssuerIdentity('Chained Issuer', { intermediate: true }),
      makeIssuerIdentity('Other Issuer'),
    ]);
    const didJwkVc = await heldOf(
      formats.jwtVc,
      await (await createJwtVcIssuer()).issue({ subject: 'did:key:zHolder' }),
      'no-x5c-jwt',
    );
    credentials = [...(await credentialsOf(issuer, 'held')), didJwkVc];
    chainedCredentials = await credentialsOf(chained, 'chained');
  });

  /** A query for each format, every one carrying the same trusted_authorities. */
  const trustedBy = (authorities: object[]) =>
    DcqlQuery.parse({
      credentials: [
        {
          id: 'pid',
          format: 'dc+sd-jwt',
          meta: { vct_values: [PID_VCT] },
          claims: [{ path: ['given_name'] }],
          trusted_authorities: authorities,
        },
        {
          id: 'mdl',
          format: 'mso_mdoc',
          meta: { doctype_value: MDL_DOCTYPE },
          claims: [{ path: [MDL_NAMESPACE, 'given_name'] }],
          trusted_authorities: authorities,
        },
        {
          id: 'degree',
          format: 'jwt_vc_json',
          meta: { type_values: [[VC]] },
          multiple: true,
          trusted_authorities: authorities,
        },
      ],
    } as DcqlQuery.Input);
  const candidatesOf = (authorities: object[], held: HeldCredential[]) =>
    Object.fromEntries(
      evaluateDcql(trustedBy(authorities), held).queries.map((q) => [
        q.queryId,
        q.candidates.map((c) => c.credentialId),
      ]),
    );
  const aki = async (...certified: Array<IssuerIdentity['ca']>) => ({
    type: 'aki',
    values: await Promise.all(certified.map(keyIdentifierOf)),
  });

  test("aki: the key identifier of the CA that issued the signer's certificate matches SD-JWT VC, mdoc and VC-JWT", async () => {
    assert.deepEqual(candidatesOf([await aki(issuer.ca)], credentials), {
      pid: ['held-sd'],
      mdl: ['held-mdoc'],
      degree: ['held-jwt'],
    });
    // Among other values, and as padded base64url: the bytes are compared.
    const [identifier] = (await aki(issuer.ca)).values;
    const padded = { type: 'aki', values: [await keyIdentifierOf(other.ca), `${identifier}=`] };
    assert.equal(identifier?.length, 27, 'a SHA-1 key identifier is 27 base64url characters');
    assert.deepEqual(candidatesOf([padded], credentials), {
      pid: ['held-sd'],
      mdl: ['held-mdoc'],
      degree: ['held-jwt'],
    });
  });

  test('aki: another CA matches nothing, and the reason says the authorities are why', async () => {
    const evaluation = evaluateDcql(trustedBy([await aki(other.ca)]), credentials);
    assert.deepEqual(
      evaluation.queries.map((q) => q.candidates),
      [[], [], []],
    );
    const choice = chooseCredentials(evaluation);
    assert.deepEqual(choice, {
      ok: false,
      reason: 'no credential you hold was issued under the certification authorities request pid names',
    });
  });

  test("aki: every certificate of the chain counts (the root's key via the intermediate), not the signer's own key", async () => {
    assert.deepEqual(candidatesOf([await aki(chained.ca)], chainedCredentials), {
      pid: ['chained-sd'],
      mdl: ['chained-mdoc'],
      degree: ['chained-jwt'],
    });
    const intermediate = chained.intermediates![0]!;
    assert.deepEqual(candidatesOf([await aki(intermediate)], chainedCredentials), {
      pid: ['chained-sd'],
      mdl: ['chained-mdoc'],
      degree: ['chained-jwt'],
    });
    // §6.1.1 matches the AuthorityKeyIdentifier of a certificate in the chain, and no certificate
    // in it was issued by the signer; nor does the root's key match credentials of another root.
    assert.deepEqual(candidatesOf([await aki(chained.signer)], chainedCredentials), {
      pid: [],
      mdl: [],
      degree: [],
    });
    assert.deepEqual(candidatesOf([await aki(chained.ca)], credentials), { pid: [], mdl: [], degree: [] });
  });

  test('etsi_tl without TRUSTED_LISTS cannot be checked: alone it matches nothing; beside a matching aki, the aki decides', async () => {
    const trustedList = { type: 'etsi_tl', values: ['https://lotl.example.com'] };
    const evaluation = evaluateDcql(trustedBy([trustedList]), credentials);
    assert.deepEqual(
      evaluation.queries.map((q) => q.candidates),
      [[], [], []],
    );
    assert.deepEqual(chooseCredentials(evaluation), {
      ok: false,
      reason:
        'request pid accepts only issuers of the ETSI trusted lists it names, which this wallet cannot check',
    });
    assert.deepEqual(candidatesOf([trustedList, await aki(issuer.ca)], credentials), {
      pid: ['held-sd'],
      mdl: ['held-mdoc'],
      degree: ['held-jwt'],
    });
  });

  test('etsi_tl: matches the credentials under a named list the wallet reads; an unread list cannot be checked', async () => {
    const lotl = 'https://lotl.example.eu/eu-lotl.xml';
    const member = 'https://tl.example.it/tl.xml';
    // The caller read its TRUSTED_LISTS: the mdoc's issuer is a granted service of the member list.
    const trust = {
      federationEntities: () => [],
      trustedLists: (index: number) => (credentials[index]!.id === 'held-mdoc' ? [member, lotl] : []),
      trustedListKnown: (url: string) => url === lotl || url === member,
    };
    const byList = (values: string[]) =>
      evaluateDcql(trustedBy([{ type: 'etsi_tl', values }]), credentials, undefined, trust);
    for (const values of [[lotl], [member], ['https://elsewhere.example', member]]) {
      assert.deepEqual(
        byList(values).queries.map((q) => q.candidates.map((c) => c.credentialId)),
        [[], ['held-mdoc'], []],
      );
    }
    assert.deepEqual(chooseCredentials(byList([lotl])), {
      ok: false,
      reason: 'no credential you hold was issued under the authorities request pid names',
    });
    assert.deepEqual(chooseCredentials(byList(['https://elsewhere.example'])), {
      ok: false,
      reason:
        'request pid accepts only issuers of the ETSI trusted lists it names, which this wallet cannot check',
    });
  });

  test("openid_federation: matches the credentials whose issuer's trust chain holds a named entity", async () => {
    const anchor = 'https://anchor.federation.example';
    const intermediate = 'https://intermediate.federation.example';
    // The caller resolved the issuers' chains: here the SD-JWT VC's issuer is a member, via an intermediate.
    const trust = {
      federationEntities: (index: number) =>
        credentials[index]!.id === 'held-sd' ? ['https://issuer.example', intermediate, anchor] : [],
    };
    const byFederation = (values: string[]) =>
      evaluateDcql(trustedBy([{ type: 'openid_federation', values }]), credentials, undefined, trust);
    for (const values of [[anchor], [intermediate], ['https://elsewhere.example', anchor]]) {
      assert.deepEqual(
        byFederation(values).queries.map((q) => q.candidates.map((c) => c.credentialId)),
        [['held-sd'], [], []],
      );
    }
    const none = byFederation(['https://elsewhere.example']);
    assert.deepEqual(
      none.queries.map((q) => q.candidates),
      [[], [], []],
    );
    assert.deepEqual(chooseCredentials(none), {
      ok: false,
      reason: 'no credential you hold was issued under the authorities request pid names',
    });
    // Entries are alternatives: a federation beside an aki of another CA still matches the member.
    const either = evaluateDcql(
      trustedBy([{ type: 'openid_federation', values: [anchor] }, await aki(other.ca)]),
      credentials,
      undefined,
      trust,
    );
    assert.deepEqual(
      either.queries.map((q) => q.candidates.map((c) => c.credentialId)),
      [['held-sd'], [], []],
    );
  });

  test('a credential that fails the claims as well gets no trust reason; credential sets name the trust reason', async () => {
    const query = DcqlQuery.parse({
      credentials: [
        {
          id: 'pid',
          format: 'dc+sd-jwt',
          meta: { vct_values: [PID_VCT] },
          claims: [{ path: ['no_such_claim'] }],
          trusted_authorities: [await aki(other.ca)],
        },
        {
          id: 'mdl',
          format: 'mso_mdoc',
          meta: { doctype_value: MDL_DOCTYPE },
          trusted_authorities: [await aki(other.ca)],
        },
      ],
      credential_sets: [{ options: [['pid'], ['mdl']] }],
    } as DcqlQuery.Input);
    const evaluation = evaluateDcql(query, credentials);
    assert.equal(evaluation.queries[0]?.reasonForNone, undefined);
    assert.deepEqual(chooseCredentials(evaluation), {
      ok: false,
      reason:
        'no credentials satisfy a required set (pid or mdl): no credential you hold was issued under the certification authorities request mdl names',
    });
  });
});
