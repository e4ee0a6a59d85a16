import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { deriveKey } from '../keys/derive-key.ts';

// PKCS #8 wrapping of a raw Ed25519 seed (RFC 8410).
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * The checkpoint key: an Ed25519 key derived from the master key, so every instance and the CLI
 * hold the same key without storing it, and its public half can be handed to an outside auditor
 * (`coffer audit verify --json` prints it).
 */
export function checkpointKey(masterKey: Uint8Array): KeyObject {
  const seed = deriveKey(masterKey, 'audit-checkpoint/v1');
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

const signedBytes = (seq: number, hash: string) => Buffer.from(`coffer-audit-checkpoint/v1:${seq}:${hash}`);

export function signCheckpoint(masterKey: Uint8Array, seq: number, hash: string): string {
  return sign(null, signedBytes(seq, hash), checkpointKey(masterKey)).toString('base64url');
}

/** True when one of the ring's keys (the current or a previous master key) signed the checkpoint. */
export function checkpointSignedBy(
  masterKeys: readonly Uint8Array[],
  checkpoint: { seq: number; hash: string; signature: string },
): boolean {
  const signature = Buffer.from(checkpoint.signature, 'base64url');
  return masterKeys.some((key) =>
    verify(
      null,
      signedBytes(checkpoint.seq, checkpoint.hash),
      createPublicKey(checkpointKey(key)),
      signature,
    ),
  );
}

/** The public checkpoint key as a JWK, for auditors. */
export function checkpointPublicJwk(masterKey: Uint8Array): object {
  return createPublicKey(checkpointKey(masterKey)).export({ format: 'jwk' });
}
