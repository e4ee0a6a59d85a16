import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DcqlQuery } from 'dcql';
import type { FormatId } from '../../src/formats/credential-format.ts';
import { evaluateDcql, type HeldCredential } from '../../src/oid4vp/dcql-matching.ts';

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

test('trusted_authorities: no stored credential carries an authority (did:key issuers), so none is offered', () => {
  for (const authority of [
    { type: 'aki', values: ['s9tIpPmhxdiuNkHMEWNpYim8S8Y'] },
    { type: 'etsi_tl', values: ['https://lotl.example.com'] },
    { type: 'openid_federation', values: ['https://trustanchor.example.com'] },
  ]) {
    const [match] = evaluateDcql(personQuery({ trusted_authorities: [authority] }), held).queries;
    assert.deepEqual(match?.candidates, [], authority.type);
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
