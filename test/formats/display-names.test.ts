import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  claimDisplayName,
  credentialTypeName,
  issuerName,
  namesInCredential,
  readableSegment,
  shortIdentifier,
  subjectAttribute,
} from '../../src/formats/display-names.ts';

const ED25519_DID = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';
const BBS_DID =
  'did:key:zUC73pznsL5QfwgMppVfp7JEj7jq4Dw6CJUh21fEGgXHfHemz8x14TJ4mLqe31wDvDoArGDiu8JEJduFZpApcneLxLWc8TXJWaj3awg1vFZoCtWsWzoZB8kv5W5oDrJsM2fM1K3';

test('a long DID keeps its method and both ends; a short DID, a URL host and short text stay whole', () => {
  assert.equal(shortIdentifier(ED25519_DID), 'did:key:z6MkhaXg…ta2doK');
  assert.equal(shortIdentifier(BBS_DID), 'did:key:zUC73pzn…2fM1K3');
  assert.equal(shortIdentifier('did:web:issuer.example.com'), 'did:web:issuer.example.com');
  assert.equal(shortIdentifier('https://issuer.example.com/'), 'issuer.example.com');
  assert.equal(shortIdentifier('https://issuer.example.com/tenants/a'), 'issuer.example.com/tenants/a');
  assert.equal(
    shortIdentifier('https://issuer.example.com/a/very/long/path/that/goes/on/and/on'),
    'issuer.example.com/…',
  );
  assert.equal(shortIdentifier('x'.repeat(60)), `${'x'.repeat(24)}…${'x'.repeat(8)}`);
});

test("a certificate subject's attributes, commas escaped as Node prints them", () => {
  const subject = 'C=GB, O=Example\\, Ltd, CN=Example Document Signer';
  assert.equal(subjectAttribute(subject, 'O'), 'Example, Ltd');
  assert.equal(subjectAttribute(subject, 'cn'), 'Example Document Signer');
  assert.equal(subjectAttribute(subject, 'OU'), undefined);
});

test("the issuer's display name first, then its certificate's O, then CN, then the shortened identifier", () => {
  assert.deepEqual(issuerName({ id: 'https://issuer.example', displayName: 'Example Issuer' }), {
    label: 'Example Issuer',
    short: 'issuer.example',
    full: 'https://issuer.example',
  });
  assert.deepEqual(
    issuerName({
      id: 'https://issuer.example.com',
      certificateSubject: 'CN=Bank Issuer Document Signer, O=Bank Issuer, C=GB',
    }),
    { label: 'Bank Issuer', short: 'issuer.example.com', full: 'https://issuer.example.com' },
  );
  // An mdoc's issuer is known by its certificate subject only: no shortened form beside the name.
  const subject = 'CN=Only A Common Name, C=GB';
  assert.deepEqual(issuerName({ id: subject, certificateSubject: subject }), {
    label: 'Only A Common Name',
    short: null,
    full: subject,
  });
  assert.deepEqual(issuerName({ id: BBS_DID }), {
    label: 'did:key:zUC73pzn…2fM1K3',
    short: null,
    full: BBS_DID,
  });
  assert.deepEqual(issuerName({ id: 'did:web:issuer.example' }), {
    label: 'did:web:issuer.example',
    short: null,
    full: 'did:web:issuer.example',
  });
});

test("an issuer's name is cleaned: no control or direction characters, no runaway length", () => {
  assert.equal(issuerName({ id: ED25519_DID, displayName: '  Evil\u202e Corp\n\t ' }).label, 'Evil Corp');
  assert.equal(issuerName({ id: ED25519_DID, displayName: '   ' }).label, 'did:key:z6MkhaXg…ta2doK');
  assert.equal(issuerName({ id: ED25519_DID, displayName: 'n'.repeat(500) }).label.length, 100);
});

test("a credential type's name: its display name, a known doctype, else its last segment made readable", () => {
  const name = (type: string | string[], displayName?: string) => credentialTypeName({ type, displayName });
  assert.equal(name('https://credentials.example.com/identity_credential', 'Personal ID'), 'Personal ID');
  assert.equal(name('https://credentials.example.com/identity_credential'), 'Identity credential');
  assert.equal(name('https://issuer.example/vocab#PersonCredential'), 'Person credential');
  assert.equal(name('https://example.com/credentials/driving-licence/v2'), 'Driving licence');
  assert.equal(name('urn:example:eHealthCard:1'), 'eHealth card');
  assert.equal(name('org.iso.18013.5.1.mDL'), 'Mobile driving licence');
  assert.equal(name('eu.europa.ec.eudi.pid.1'), 'Person identification data (PID)');
  assert.equal(name('org.example.membership.1'), 'Membership');
  assert.equal(name(['VerifiableCredential', 'UniversityDegreeCredential']), 'University degree credential');
  assert.equal(
    name(['VerifiableCredential', 'https://example.org/examples#AlumniCredential']),
    'Alumni credential',
  );
  assert.equal(name(['VerifiableCredential']), 'Credential');
  assert.equal(name([]), 'Credential');
});

test('segments become words; acronyms and mixed-case words keep their case', () => {
  assert.equal(readableSegment('identity_credential'), 'Identity credential');
  assert.equal(readableSegment('UniversityDegreeCredential'), 'University degree credential');
  assert.equal(readableSegment('PIDCredential'), 'PID credential');
  assert.equal(readableSegment('mDL'), 'mDL');
  assert.equal(readableSegment('over-18'), 'Over 18');
});

test('only the W3C formats name their issuer and themselves; language maps give English first', () => {
  const claims = {
    name: 'Bachelor of Science',
    issuer: {
      id: ED25519_DID,
      name: [
        { '@value': 'Beispiel-Universität', '@language': 'de' },
        { '@value': 'Example University', '@language': 'en' },
      ],
    },
  };
  assert.deepEqual(namesInCredential('ldp_vc', claims), {
    issuer: 'Example University',
    credential: 'Bachelor of Science',
  });
  assert.deepEqual(namesInCredential('jwt_vc_json', { issuer: ED25519_DID }), {});
  // An SD-JWT VC's `name` is the person's.
  assert.deepEqual(namesInCredential('dc+sd-jwt', { name: 'Ada Lovelace' }), {});
});

test("claims get the issuer's names by path into the credential, W3C ones from credentialSubject", () => {
  const names = [
    { path: ['credentialSubject', 'given_name'], name: 'Given name' },
    { path: ['credentialSubject', 'degree'], name: 'Degree' },
    { path: ['credentialSubject', 'degree', 'name'], name: ' Degree\u202e name ' },
    { path: ['credentialSubject', 'nationalities', null], name: 'Nationalities' },
    { path: ['credentialSubject', 'jobs', null, 'title'], name: 'Job title' },
    { path: ['family_name'], name: 'Family name' },
    { path: ['org.iso.18013.5.1', 'birth_date'], name: 'Date of birth' },
  ];
  assert.equal(claimDisplayName(names, ['credentialSubject', 'given_name']), 'Given name');
  assert.equal(claimDisplayName(names, ['credentialSubject', 'degree', 'name']), 'Degree name');
  assert.equal(claimDisplayName(names, ['credentialSubject', 'degree', 'type']), 'Degree.type');
  assert.equal(claimDisplayName(names, ['credentialSubject', 'nationalities']), 'Nationalities');
  assert.equal(claimDisplayName(names, ['credentialSubject', 'jobs', 1, 'title']), 'Job title');
  assert.equal(claimDisplayName(names, ['credentialSubject', 'jobs', 1, 'since']), undefined);
  assert.equal(claimDisplayName(names, ['org.iso.18013.5.1', 'birth_date']), 'Date of birth');
  // Paths apply from the credential's root: a W3C subject claim is not the root's `family_name`.
  assert.equal(claimDisplayName(names, ['credentialSubject', 'family_name']), undefined);
  assert.equal(claimDisplayName(names, ['family_name']), 'Family name');
  assert.equal(
    claimDisplayName([{ path: ['a'], name: '\u0000 ' }], ['a']),
    undefined,
    'an empty name is none',
  );
});
