import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DcqlQuery } from 'dcql';
import { evaluateDcql, type HeldCredential } from '../../src/oid4vp/dcql-matching.ts';

/** DCQL evaluation as a pure function: what a stored credential answers, without a server. */
const PERSON = 'https://issuer.example/vocab#PersonCredential';
const held: HeldCredential[] = [
  {
    id: 'urn:uuid:1',
    document: {
      id: 'urn:uuid:1',
      type: ['VerifiableCredential', 'PersonCredential'],
      issuer: 'did:key:zIssuer',
      credentialSubject: { id: 'did:key:zHolder', first_name: 'Ada', last_name: 'Lovelace' },
      proof: { type: 'DataIntegrityProof' },
    },
    expandedTypes: ['https://www.w3.org/2018/credentials#VerifiableCredential', PERSON],
    holderBinding: true,
  },
];
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
