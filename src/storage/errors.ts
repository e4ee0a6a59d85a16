export type StorageErrorCode =
  | 'block_not_found'
  | 'integrity_error'
  | 'decryption_failed'
  | 'backend_unavailable';

/**
 * The one error type of the block store. Callers branch on `code`: a missing block is a 404 to
 * them, while integrity and decryption failures mean stored data can no longer be trusted and
 * must never be papered over with a partial answer.
 */
export class StorageError extends Error {
  readonly code: StorageErrorCode;

  constructor(code: StorageErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageError';
    this.code = code;
  }
}
