/** fastBbs and the stock @digitalbazaar/bbs-signatures accept each other's output, both ways. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fastBbs } from '../../src/bbs/index.ts';
import { stockBbs } from '../../src/bbs/stock.ts';

const header = new TextEncoder().encode('cross-check header');
const presentationHeader = new TextEncoder().encode('cross-check presentation');

for (const count of [10, 50]) {
  describe(`${count} messages`, async () => {
    const messages = Array.from({ length: count }, (_, i) =>
      new TextEncoder().encode(`statement ${i} `.repeat(i % 4)),
    );
    const seed = new TextEncoder().encode(`cross-check key material for ${count} messages`);
    const keys = await stockBbs.generateKeyPair({ seed });
    const { secretKey, publicKey } = keys;
    const disclosedMessageIndexes = [0, Math.floor(count / 2)];
    const disclosedMessages = disclosedMessageIndexes.map((i) => messages[i]!);
    const stockSignature = await stockBbs.sign({ secretKey, publicKey, header, messages });
    const fastSignature = await fastBbs.sign({ secretKey, publicKey, header, messages });

    test('the same seed gives the same key pair', async () => {
      assert.deepEqual(await fastBbs.generateKeyPair({ seed }), keys);
      assert.deepEqual(await fastBbs.secretKeyToPublicKey({ secretKey }), publicKey);
    });

    test('signatures are identical, and each verifies with the other implementation', async () => {
      assert.deepEqual(fastSignature, stockSignature);
      assert.equal(
        await fastBbs.verifySignature({ publicKey, signature: stockSignature, header, messages }),
        true,
      );
      assert.equal(
        await stockBbs.verifySignature({ publicKey, signature: fastSignature, header, messages }),
        true,
      );
      const otherHeader = new TextEncoder().encode('another header');
      assert.equal(
        await stockBbs.verifySignature({
          publicKey,
          signature: fastSignature,
          header: otherHeader,
          messages,
        }),
        false,
      );
    });

    test('a proof derived by one implementation verifies with the other', async () => {
      const derive = {
        publicKey,
        signature: stockSignature,
        header,
        messages,
        presentationHeader,
        disclosedMessageIndexes,
      };
      const verify = { publicKey, header, presentationHeader, disclosedMessages, disclosedMessageIndexes };
      const stockProof = await stockBbs.deriveProof(derive);
      const fastProof = await fastBbs.deriveProof(derive);
      assert.equal(fastProof.length, stockProof.length);
      assert.equal(await fastBbs.verifyProof({ ...verify, proof: stockProof }), true);
      assert.equal(await stockBbs.verifyProof({ ...verify, proof: fastProof }), true);
      // Both reject the other's proof under another presentation header.
      const otherPresentation = { ...verify, presentationHeader: new TextEncoder().encode('replayed') };
      assert.equal(await fastBbs.verifyProof({ ...otherPresentation, proof: stockProof }), false);
      assert.equal(await stockBbs.verifyProof({ ...otherPresentation, proof: fastProof }), false);
    });
  });
}
