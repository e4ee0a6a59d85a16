export type { BlockBackend } from './backend.ts';
export { type CodecName, computeCid, decodeBlock, encodeValue, parseCid, verifyBlock } from './cid.ts';
export { type ContentStore, createContentStore } from './content-store.ts';
export { createEncryptedStore, type EncryptedStore, type EncryptedStoreOptions } from './encrypted-store.ts';
export { type BlockContext, createEnvelopeCipher, type Envelope, type EnvelopeCipher } from './envelope.ts';
export { StorageError, type StorageErrorCode } from './errors.ts';
export { createFsBackend } from './fs-backend.ts';
export { createKuboBackend } from './kubo-backend.ts';
