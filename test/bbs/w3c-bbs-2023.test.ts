/**
 * The BBS layer under the W3C bbs-2023 baseline example (../shared/vectors/w3c-vc-di-bbs/): the
 * base signature over the non-mandatory statements and the derived proof, at the BBS level only.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fastBbs } from '../../src/bbs/index.ts';
import { hex, toHex } from './fixtures.ts';

const VECTOR_DIR = path.resolve(import.meta.dirname, '../../../shared/vectors/w3c-vc-di-bbs');
const read = <T>(name: string): T => JSON.parse(readFileSync(path.join(VECTOR_DIR, name), 'utf8')) as T;

const keys = read<{ publicKeyHex: string; privateKeyHex: string }>('BBSKeyMaterial.json');
const hashes = read<{ proofHash: string; mandatoryHash: string }>('addHashData.json');
// bbs-2023 signs proofHash || mandatoryHash as the BBS header, the non-mandatory N-Quads as messages.
const header = hex(hashes.proofHash + hashes.mandatoryHash);
const messages = read<{ nonMandatory: { value: Array<[number, string]> } }>(
  'addBaseTransform.json',
).nonMandatory.value.map(([, quad]) => new TextEncoder().encode(quad));
const publicKey = hex(keys.publicKeyHex);

test('the bbs-2023 base signature is reproduced byte for byte and verifies', async () => {
  assert.equal(messages.length, 14);
  const { bbsSignature } = read<{ bbsSignature: string }>('addRawBaseSignatureInfo.json');
  const signature = await fastBbs.sign({ secretKey: hex(keys.privateKeyHex), publicKey, header, messages });
  assert.equal(toHex(signature), bbsSignature);
  assert.equal(await fastBbs.verifySignature({ publicKey, signature, header, messages }), true);
});

test('the bbs-2023 derived BBS proof verifies, and not under another presentation header', async () => {
  const disclosure = read<{
    bbsProof: string;
    adjSelectiveIndexes: number[];
    presentationHeader: Record<string, number>;
  }>('derivedDisclosureData.json');
  const indexes = disclosure.adjSelectiveIndexes;
  const args = {
    publicKey,
    proof: hex(disclosure.bbsProof),
    header,
    presentationHeader: Uint8Array.from(Object.values(disclosure.presentationHeader)),
    disclosedMessages: indexes.map((i) => messages[i]!),
    disclosedMessageIndexes: indexes,
  };
  assert.equal(await fastBbs.verifyProof(args), true);
  assert.equal(await fastBbs.verifyProof({ ...args, presentationHeader: new Uint8Array([1, 2, 3]) }), false);
});
