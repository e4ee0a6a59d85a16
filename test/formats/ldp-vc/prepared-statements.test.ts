import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import * as dagCbor from '@ipld/dag-cbor';
import { fastBbs } from '../../../src/bbs/index.ts';
import { verifyBaseProof } from '../../../src/formats/ldp-vc/bbs-2023/base-proof.ts';
import { deriveDisclosure, planDisclosure } from '../../../src/formats/ldp-vc/bbs-2023/disclosure.ts';
import type { PreparedStatements } from '../../../src/formats/ldp-vc/bbs-2023/prepared-statements.ts';
import type { SecuredDocument } from '../../../src/formats/ldp-vc/bbs-2023/shared.ts';
import { createStockIssuer, personCredential, verifyWithStock } from '../../credentials/stock-issuer.ts';
import { benchJsonLd } from '../../helpers/credential-factory.ts';

const SUBJECT = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';
const deps = { bbs: fastBbs, jsonLd: benchJsonLd };

/** Selections a person might make: single claims, nested ones, an array element, a whole object. */
const SELECTIONS = [
  ['/credentialSubject/first_name'],
  ['/credentialSubject/first_name', '/credentialSubject/location'],
  ['/validFrom', '/credentialSubject/claim_0/claim_1'],
  ['/credentialSubject/claim_0/claim_2/1'],
  ['/credentialSubject/claim_0'],
  ['/credentialSubject'],
];

describe('prepared statements: a disclosure from what the store kept equals one computed afresh', () => {
  let signed: SecuredDocument;
  let publicKey: Uint8Array;
  let prepared: PreparedStatements;

  before(async () => {
    // Issued by the stock Digital Bazaar stack, with a nested object (blank nodes) and an array.
    const issuer = await createStockIssuer();
    publicKey = issuer.publicKey;
    const claims = {
      first_name: 'Ada',
      location: 'London',
      claim_0: { claim_1: 'nested', claim_2: ['first', 'second'] },
    };
    signed = (await issuer.issue(personCredential(issuer.did, SUBJECT, claims), [
      '/issuer',
      '/credentialSubject/id',
    ])) as unknown as SecuredDocument;
    const check = await verifyBaseProof(signed, publicKey, deps, { prepare: true });
    assert.ok(check.ok && check.prepared, 'a valid base proof comes with prepared statements');
    prepared = check.prepared;
  });

  it('a check that does not ask for them (a status list) brings none back', async () => {
    const check = await verifyBaseProof(signed, publicKey, deps);
    assert.deepEqual(check, { ok: true });
  });

  it("they survive the block store's encoding (dag-cbor) and the worker threads' (structured clone)", () => {
    assert.deepEqual(dagCbor.decode(dagCbor.encode(prepared)), prepared);
    assert.deepEqual(structuredClone(prepared), prepared);
    assert.ok(prepared.nquads.some((statement) => statement.includes('"nested"')));
  });

  for (const selection of SELECTIONS) {
    it(`selecting ${selection.join(', ')}: the same plan, and a proof the stock verifier accepts`, async () => {
      const { base: _fresh, ...fresh } = await planDisclosure(signed, selection, deps);
      const { base: _kept, ...kept } = await planDisclosure(signed, selection, deps, prepared);
      assert.deepEqual(kept, fresh);
      const header = new TextEncoder().encode(`verifier ${selection.length}`);
      const { credential } = await deriveDisclosure(signed, selection, header, deps, prepared);
      const verdict = await verifyWithStock(credential, header);
      assert.equal(verdict.verified, true, JSON.stringify(verdict.error ?? verdict));
      assert.equal((await verifyWithStock(credential, new Uint8Array([1]))).verified, false);
    });
  }

  it("another credential's prepared statements are ignored, not used", async () => {
    const issuer = await createStockIssuer();
    const other = (await issuer.issue(personCredential(issuer.did, SUBJECT))) as unknown as SecuredDocument;
    const header = new Uint8Array([9]);
    // `prepared` belongs to `signed`; used for `other` it would make a proof that never verifies.
    const { credential } = await deriveDisclosure(
      other,
      ['/credentialSubject/first_name'],
      header,
      deps,
      prepared,
    );
    assert.equal((await verifyWithStock(credential, header)).verified, true);
  });

  it('kept data whose B is not a point is refused rather than used', async () => {
    const tampered = { ...prepared, signatureBase: Buffer.from(new Uint8Array(48)).toString('base64url') };
    await assert.rejects(
      deriveDisclosure(signed, ['/credentialSubject/first_name'], new Uint8Array(), deps, tampered),
      /B does not decode/,
    );
  });
});
