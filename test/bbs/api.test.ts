import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SCALAR_ORDER } from '../../src/bbs/ciphersuite.ts';
import { type BbsSuite, fastBbs } from '../../src/bbs/index.ts';
import { i2osp } from '../../src/bbs/octets.ts';
import { g1Encodings, g2Encodings } from './encodings.ts';
import { hex, readFixture, type SignatureFixture, toHex } from './fixtures.ts';

const bbs: BbsSuite = fastBbs;
const SEED = new TextEncoder().encode('coffer-bbs-api-test-key-material-0001');
const OTHER_SEED = new TextEncoder().encode('coffer-bbs-api-test-key-material-0002');
const header = new TextEncoder().encode('credential header');
const presentationHeader = new TextEncoder().encode('nonce 8c1f');

function messagesOf(count: number): Uint8Array[] {
  // Varied lengths, the empty message included.
  return Array.from({ length: count }, (_, i) => new TextEncoder().encode('m'.repeat(i % 7) + String(i)));
}

function flipBit(bytes: Uint8Array, index: number, bit = 0): Uint8Array {
  const copy = Uint8Array.from(bytes);
  copy[index]! ^= 1 << bit;
  return copy;
}

function replaceAt(bytes: Uint8Array, offset: number, part: Uint8Array): Uint8Array {
  const copy = Uint8Array.from(bytes);
  copy.set(part, offset);
  return copy;
}

const keys = await bbs.generateKeyPair({ seed: SEED });
const otherKeys = await bbs.generateKeyPair({ seed: OTHER_SEED });
const messages = messagesOf(10);
const signature = await bbs.sign({ secretKey: keys.secretKey, header, messages });
const disclosedMessageIndexes = [1, 6];
const disclosedMessages = disclosedMessageIndexes.map((i) => messages[i]!);
const deriveProof = (overrides: Partial<Parameters<BbsSuite['deriveProof']>[0]> = {}) =>
  bbs.deriveProof({
    publicKey: keys.publicKey,
    signature,
    header,
    messages,
    presentationHeader,
    disclosedMessageIndexes,
    ...overrides,
  });
const proof = await deriveProof();
const verifySignature = (overrides: Partial<Parameters<BbsSuite['verifySignature']>[0]> = {}) =>
  bbs.verifySignature({ publicKey: keys.publicKey, signature, header, messages, ...overrides });
const verifyProof = (overrides: Partial<Parameters<BbsSuite['verifyProof']>[0]> = {}) =>
  bbs.verifyProof({
    publicKey: keys.publicKey,
    proof,
    header,
    presentationHeader,
    disclosedMessages,
    disclosedMessageIndexes,
    ...overrides,
  });

describe('keys', () => {
  test('secretKeyToPublicKey and sign reproduce the fixture key pair and signature', async () => {
    const fixture = readFixture<SignatureFixture>('signature/signature004.json');
    const secretKey = hex(fixture.signerKeyPair.secretKey);
    assert.equal(toHex(await bbs.secretKeyToPublicKey({ secretKey })), fixture.signerKeyPair.publicKey);
    const produced = await bbs.sign({
      secretKey,
      header: hex(fixture.header),
      messages: fixture.messages.map(hex),
    });
    assert.equal(toHex(produced), fixture.signature);
  });

  test('generateKeyPair is deterministic for a seed, random without one', async () => {
    assert.equal(keys.secretKey.length, 32);
    assert.equal(keys.publicKey.length, 96);
    assert.deepEqual(await bbs.generateKeyPair({ seed: SEED }), keys);
    assert.deepEqual(await bbs.secretKeyToPublicKey({ secretKey: keys.secretKey }), keys.publicKey);
    const first = await bbs.generateKeyPair();
    const second = await bbs.generateKeyPair();
    assert.notDeepEqual(first.secretKey, second.secretKey);
    await assert.rejects(bbs.generateKeyPair({ seed: new Uint8Array(31) }), RangeError);
  });
});

describe('signatures', () => {
  test('a signature verifies, also with no messages and with the public key passed to sign', async () => {
    assert.equal(await verifySignature(), true);
    const withKey = await bbs.sign({
      secretKey: keys.secretKey,
      publicKey: keys.publicKey,
      header,
      messages,
    });
    assert.deepEqual(withKey, signature);
    const empty = await bbs.sign({ secretKey: keys.secretKey, header: new Uint8Array(), messages: [] });
    assert.equal(
      await bbs.verifySignature({
        publicKey: keys.publicKey,
        signature: empty,
        header: new Uint8Array(),
        messages: [],
      }),
      true,
    );
  });

  test('a flipped bit anywhere in the signature is rejected', async () => {
    for (let index = 0; index < signature.length; index += 5) {
      for (const bit of [0, 7]) {
        assert.equal(
          await verifySignature({ signature: flipBit(signature, index, bit) }),
          false,
          `byte ${index} bit ${bit}`,
        );
      }
    }
  });

  test('a changed header, message, message order or message count is rejected', async () => {
    assert.equal(await verifySignature({ header: flipBit(header, 3) }), false);
    assert.equal(await verifySignature({ header: new Uint8Array() }), false);
    for (const i of [0, 4, 9]) {
      const changed = messages.map((m, j) => (j === i ? flipBit(m, 0) : m));
      assert.equal(await verifySignature({ messages: changed }), false, `message ${i}`);
    }
    assert.equal(
      await verifySignature({ messages: [messages[1]!, messages[0]!, ...messages.slice(2)] }),
      false,
    );
    assert.equal(await verifySignature({ messages: messages.slice(0, -1) }), false);
    assert.equal(await verifySignature({ messages: [...messages, new Uint8Array()] }), false);
  });

  test('a wrong, malformed, identity or non-subgroup public key is rejected', async () => {
    assert.equal(await verifySignature({ publicKey: otherKeys.publicKey }), false);
    assert.equal(await verifySignature({ publicKey: keys.publicKey.subarray(0, 95) }), false);
    assert.equal(await verifySignature({ publicKey: new Uint8Array() }), false);
    const { valid, invalid } = g2Encodings();
    for (const { name, bytes } of invalid) {
      assert.ok(bytes.length === 96);
      assert.equal(await verifySignature({ publicKey: bytes }), false, name);
    }
    assert.equal(await verifySignature({ publicKey: valid[0]!.bytes }), false, 'a valid but unrelated point');
  });

  test('a signature with an invalid A, an out-of-range e or the wrong length is rejected', async () => {
    for (const { name, bytes } of g1Encodings().invalid) {
      assert.equal(await verifySignature({ signature: replaceAt(signature, 0, bytes) }), false, name);
    }
    for (const e of [0n, SCALAR_ORDER, SCALAR_ORDER + 1n, (1n << 256n) - 1n]) {
      assert.equal(
        await verifySignature({ signature: replaceAt(signature, 48, i2osp(e, 32)) }),
        false,
        `e = ${e}`,
      );
    }
    // e and e + r are the same scalar: the encoding must be rejected, not reduced.
    const e = BigInt(`0x${toHex(signature.subarray(48))}`);
    if (e + SCALAR_ORDER < 1n << 256n) {
      assert.equal(
        await verifySignature({ signature: replaceAt(signature, 48, i2osp(e + SCALAR_ORDER, 32)) }),
        false,
      );
    }
    assert.equal(await verifySignature({ signature: signature.subarray(0, 79) }), false);
    assert.equal(await verifySignature({ signature: Uint8Array.from([...signature, 0]) }), false);
    assert.equal(await verifySignature({ signature: new Uint8Array(80) }), false);
  });

  test('verification stays right while the public key cache fills, evicts and refills', async () => {
    // More keys than the cache holds (64), each used twice, in two passes.
    const signers = await Promise.all(
      Array.from({ length: 80 }, async (_, i) => {
        const pair = await bbs.generateKeyPair({
          seed: new TextEncoder().encode(`cache test key ${i} `.repeat(3)),
        });
        const signed = await bbs.sign({ secretKey: pair.secretKey, header, messages: [messages[i % 10]!] });
        return { publicKey: pair.publicKey, signed, message: messages[i % 10]! };
      }),
    );
    for (let pass = 0; pass < 2; pass++) {
      for (const [i, { publicKey, signed, message }] of signers.entries()) {
        const args = { publicKey, signature: signed, header, messages: [message] };
        assert.equal(await bbs.verifySignature(args), true, `key ${i}, pass ${pass}`);
        const other = signers[(i + 1) % signers.length]!.publicKey;
        assert.equal(await bbs.verifySignature({ ...args, publicKey: other }), false, `key ${i} + 1`);
      }
    }
  });

  test('arguments of the wrong type are rejected with a TypeError', async () => {
    await assert.rejects(verifySignature({ signature: 'abc' as never }), TypeError);
    await assert.rejects(verifySignature({ messages: [messages[0]!, 'x' as never] }), TypeError);
    await assert.rejects(verifySignature({ messages: undefined as never }), TypeError);
    await assert.rejects(bbs.verifySignature(undefined as never), TypeError);
    await assert.rejects(bbs.sign({ secretKey: keys.secretKey, header: [] as never, messages }), TypeError);
  });
});

describe('proofs', () => {
  test('a derived proof verifies; proofs are randomised', async () => {
    assert.equal(await verifyProof(), true);
    const again = await deriveProof();
    assert.notDeepEqual(again, proof);
    assert.equal(await verifyProof({ proof: again }), true);
    assert.equal(proof.length, 3 * 48 + (4 + messages.length - disclosedMessageIndexes.length) * 32);
  });

  test('all, none and no messages disclosed', async () => {
    const all = messages.map((_, i) => i);
    for (const indexes of [all, []]) {
      const derived = await deriveProof({ disclosedMessageIndexes: indexes });
      const disclosed = indexes.map((i) => messages[i]!);
      assert.equal(
        await verifyProof({ proof: derived, disclosedMessages: disclosed, disclosedMessageIndexes: indexes }),
        true,
        `${indexes.length} disclosed`,
      );
    }
    const empty = await bbs.sign({ secretKey: keys.secretKey, header, messages: [] });
    const derived = await deriveProof({ signature: empty, messages: [], disclosedMessageIndexes: [] });
    assert.equal(
      await verifyProof({ proof: derived, disclosedMessages: [], disclosedMessageIndexes: [] }),
      true,
    );
  });

  test('a flipped bit anywhere in the proof is rejected', async () => {
    for (let index = 0; index < proof.length; index += 7) {
      assert.equal(await verifyProof({ proof: flipBit(proof, index, index % 8) }), false, `byte ${index}`);
    }
    assert.equal(await verifyProof({ proof: flipBit(proof, proof.length - 1) }), false, 'the challenge');
  });

  test('a changed header, presentation header or disclosed message is rejected', async () => {
    assert.equal(await verifyProof({ header: flipBit(header, 0) }), false);
    assert.equal(await verifyProof({ presentationHeader: flipBit(presentationHeader, 2) }), false);
    assert.equal(await verifyProof({ presentationHeader: new Uint8Array() }), false);
    assert.equal(
      await verifyProof({ disclosedMessages: [disclosedMessages[0]!, flipBit(disclosedMessages[1]!, 0)] }),
      false,
    );
    assert.equal(await verifyProof({ disclosedMessages: [messages[2]!, disclosedMessages[1]!] }), false);
  });

  test('a wrong, identity or non-subgroup public key is rejected', async () => {
    assert.equal(await verifyProof({ publicKey: otherKeys.publicKey }), false);
    for (const { name, bytes } of g2Encodings().invalid) {
      assert.equal(await verifyProof({ publicKey: bytes }), false, name);
    }
    assert.equal(await verifyProof({ publicKey: keys.publicKey.subarray(1) }), false);
  });

  test('invalid points, out-of-range scalars and wrong lengths in the proof are rejected', async () => {
    for (const { name, bytes } of g1Encodings().invalid) {
      for (const offset of [0, 48, 96]) {
        assert.equal(
          await verifyProof({ proof: replaceAt(proof, offset, bytes) }),
          false,
          `${name} at ${offset}`,
        );
      }
    }
    for (const offset of [144, 176, 208, 240, proof.length - 32]) {
      for (const scalar of [0n, SCALAR_ORDER, (1n << 256n) - 1n]) {
        assert.equal(
          await verifyProof({ proof: replaceAt(proof, offset, i2osp(scalar, 32)) }),
          false,
          `${scalar} at ${offset}`,
        );
      }
    }
    assert.equal(await verifyProof({ proof: proof.subarray(0, proof.length - 32) }), false);
    assert.equal(await verifyProof({ proof: proof.subarray(0, proof.length - 1) }), false);
    assert.equal(await verifyProof({ proof: Uint8Array.from([...proof, ...proof.subarray(-32)]) }), false);
    assert.equal(await verifyProof({ proof: new Uint8Array() }), false);
    assert.equal(await verifyProof({ proof: proof.subarray(0, 3 * 48 + 3 * 32) }), false);
  });

  test('wrong index sets are rejected', async () => {
    const m = (i: number) => messages[i]!;
    const cases: Array<[string, number[], Uint8Array[]]> = [
      ['unsorted', [6, 1], [m(6), m(1)]],
      ['duplicated', [1, 1, 6], [m(1), m(1), m(6)]],
      ['shifted', [2, 7], [m(1), m(6)]],
      ['negative', [-1, 6], [m(1), m(6)]],
      ['not an integer', [1.5, 6], [m(1), m(6)]],
      ['NaN', [Number.NaN, 6], [m(1), m(6)]],
      ['out of range', [1, 10], [m(1), m(6)]],
      ['more indexes than messages', [1, 6, 7], [m(1), m(6)]],
      ['fewer indexes than messages', [1], [m(1), m(6)]],
      ['nothing disclosed', [], []],
    ];
    for (const [name, indexes, disclosed] of cases) {
      assert.equal(
        await verifyProof({ disclosedMessageIndexes: indexes, disclosedMessages: disclosed }),
        false,
        name,
      );
    }
  });

  test('deriveProof rejects an index set that is not ascending, unique and in range, and a bad signature', async () => {
    for (const indexes of [[6, 1], [1, 1], [10], [-1], [0.5]]) {
      await assert.rejects(
        deriveProof({ disclosedMessageIndexes: indexes }),
        RangeError,
        JSON.stringify(indexes),
      );
    }
    await assert.rejects(deriveProof({ disclosedMessageIndexes: [1], signature: signature.subarray(1) }));
    for (const { name, bytes } of g2Encodings().invalid) {
      await assert.rejects(deriveProof({ publicKey: bytes }), /public key/, name);
    }
    await assert.rejects(
      deriveProof({
        disclosedMessageIndexes: [1],
        signature: replaceAt(signature, 0, g1Encodings().invalid[0]!.bytes),
      }),
    );
    await assert.rejects(deriveProof({ disclosedMessageIndexes: ['1' as never] }), TypeError);
  });

  test('arguments of the wrong type are rejected with a TypeError', async () => {
    await assert.rejects(verifyProof({ proof: Array.from(proof) as never }), TypeError);
    await assert.rejects(verifyProof({ disclosedMessageIndexes: ['1', '6'] as never }), TypeError);
    await assert.rejects(verifyProof({ presentationHeader: undefined as never }), TypeError);
    await assert.rejects(verifyProof({ disclosedMessages: 'x' as never }), TypeError);
  });
});
