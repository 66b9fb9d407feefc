/** The store's interface, its error and its key rule (no runtime imports: local.ts and s3.ts import these, index.ts picks one). */

export interface StoredObject {
  key: string;
  modifiedMs: number;
}

export interface Storage {
  put(key: string, bytes: Buffer): Promise<void>;
  /** The whole file; null when absent. */
  get(key: string): Promise<Buffer | null>;
  /** Removes a file; absent files are fine (idempotent). */
  delete(key: string): Promise<void>;
  /** Files under a prefix (`quarantine/`, `files/`). */
  list(prefix: string): Promise<StoredObject[]>;
}

/** Any failure of the store: the API answers 500 STORAGE_FAILED. */
export class StorageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageError';
  }
}

const SAFE_KEY = /^(quarantine|files)\/[A-Za-z0-9._-]{1,200}$/;

/** Keys are ours; this refuses anything else so no path can escape the store. */
export function assertKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.includes('..')) throw new StorageError(`refused storage key ${JSON.stringify(key)}`);
}
