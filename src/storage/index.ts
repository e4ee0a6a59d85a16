export type { BlockBackend, ListedBlock, PutOptions } from './backend.ts';
export { type CodecName, computeCid, decodeBlock, encodeValue, parseCid, verifyBlock } from './cid.ts';
export { type ContentStore, createContentStore } from './content-store.ts';
export {
  type BlockBackendOptions,
  createBlockBackend,
  createEncryptedStore,
  type EncryptedStore,
  type EncryptedStoreOptions,
} from './encrypted-store.ts';
export {
  type BlockContext,
  createEnvelopeCipher,
  type Envelope,
  type EnvelopeCipher,
  envelopeKeyId,
} from './envelope.ts';
export { StorageError, type StorageErrorCode } from './errors.ts';
export { createFsBackend, type FsBlockBackend, fsyncDir, type TemporaryFile } from './fs-backend.ts';
export {
  type CollectionDeps,
  type CollectionOptions,
  type CollectionReport,
  collectGarbage,
  type UnreferencedSightings,
} from './garbage-collection.ts';
export { createKuboBackend } from './kubo-backend.ts';
