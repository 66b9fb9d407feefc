/**
 * Where upload bytes live: a key-value store of whole files behind one interface. The
 * local filesystem (UPLOAD_DIR) is the default; an S3-compatible store by configuration.
 * Keys are chosen by the service only (`quarantine/<id>`, `files/<stored name>`), never
 * from user input, and no store is ever mounted on a public path.
 */
import { config, type UploadConfig } from '../../config.js';
import { LocalStorage } from './local.js';
import { S3Storage } from './s3.js';

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
