/**
 * What the upload tests share: a real BullMQ worker for the upload-sanitise queue running
 * in this process (the API waits for it, as it waits for the worker process in
 * production), a temporary local store, and request helpers.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'bullmq';
import type { Response } from 'supertest';
import { expect } from 'chai';
import { config } from '../../../shared/config.js';
import { createQueueConnection } from '../../../shared/redis.js';
import { closeUploadEvents } from '../../../shared/uploads/service.js';
import { useStorage, type Storage } from '../../../shared/uploads/storage/index.js';
import { LocalStorage } from '../../../shared/uploads/storage/local.js';
import { buildRegistry, queueProcessor } from '../../../workers/registry.js';
import type { api } from '../../helpers/app.js';

export type Client = ReturnType<typeof api>;

export interface Harness {
  dir: string;
  storage: Storage;
  /** Empties the local store (between tests). */
  clear(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the in-process upload worker over a fresh temporary local store. */
export async function startUploads(store?: Storage): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'uploads-test-'));
  const storage = store ?? new LocalStorage(dir);
  useStorage(storage);
  const connection = createQueueConnection();
  const worker = new Worker('upload-sanitise', queueProcessor(buildRegistry(), 'upload-sanitise'), {
    connection,
    prefix: config.queuePrefix,
    concurrency: 2,
  });
  await worker.waitUntilReady();
  return {
    dir,
    storage,
    async clear() {
      await rm(join(dir, 'files'), { recursive: true, force: true });
      await rm(join(dir, 'quarantine'), { recursive: true, force: true });
    },
    async stop() {
      await worker.close();
      connection.disconnect();
      await closeUploadEvents();
      useStorage(null);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export const bearer = (key: string): [string, string] => ['Authorization', `Bearer ${key}`];

export interface Part {
  bytes: Buffer;
  filename: string;
  contentType: string;
}

export function postFile(client: Client, key: string, type: string, part: Part | null, headers: Record<string, string> = {}) {
  let req = client.post(`/v1/upload/${type}`).set(...bearer(key));
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  return part ? req.attach('file', part.bytes, { filename: part.filename, contentType: part.contentType }) : req;
}

export function expectUploadError(res: Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
  expect(res.body.error.message_id, 'message_id').to.be.a('string').and.not.empty;
  expect(res.body.error.message_en, 'message_en').to.be.a('string').and.not.empty;
}

/** The path and query of a signed link (supertest talks to the app, not the public host). */
export function pathOf(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}
