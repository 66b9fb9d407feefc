/**
 * Where upload bytes live: a key-value store of whole files behind one interface. The
 * local filesystem (UPLOAD_DIR) is the default; an S3-compatible store by configuration.
 * Keys are chosen by the service only (`quarantine/<id>`, `files/<stored name>`), never
 * from user input, and no store is ever mounted on a public path.
 */
import { config, type UploadConfig } from '../../config.js';
import { LocalStorage } from './local.js';
import { S3Storage } from './s3.js';
import type { Storage } from './types.js';

export { assertKey, StorageError, type Storage, type StoredObject } from './types.js';

export function createStorage(cfg: UploadConfig = config.uploads): Storage {
  return cfg.driver === 's3' ? new S3Storage(cfg.s3) : new LocalStorage(cfg.dir);
}

let shared: Storage | null = null;

/** The process-wide store from configuration (tests may swap it with `useStorage`). */
export function storage(): Storage {
  return (shared ??= createStorage());
}

export function useStorage(next: Storage | null): void {
  shared = next;
}
