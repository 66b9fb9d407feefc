/**
 * Uploads (consumer spec 4.5 and section 8; issue 7). The API never parses a file: it
 * puts the raw bytes in quarantine, asks the upload worker to sanitise them and waits for
 * the result (UPLOAD_WAIT_TIMEOUT_MS), then records the stored file against the uploader.
 * Binding an upload to an escrow, a chat message or a dispute is a compare-and-set done
 * by the uploader alone, once.
 */
import { randomUUID } from 'node:crypto';
import { QueueEvents, type Job } from 'bullmq';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { db, type Db } from '../db.js';
import type { Actor } from '../actors.js';
import { UUID_V4 } from '../ids.js';
import { logger } from '../logger.js';
import { getQueue } from '../queues.js';
import { createQueueConnection } from '../redis.js';
import { isUploadErrorCode, uploadError, uploadErrors } from './errors.js';
import { isOurLink, storedNameOf, verifyLink, type LinkQuery } from './links.js';
import * as repo from './repo.js';
import * as escrowRepo from '../escrows/repo.js';
import type { BoundKind, UploadRow } from './repo.js';
import type { Purpose } from './sanitise/index.js';
import { ACCEPTS, DAILY_QUOTA, MAX_BOUND, MAX_BYTES, PURPOSES, QUOTA_WINDOW_MS, SANITISE_JOB, quarantineKey } from './rules.js';
import type { SanitiseJobResult } from './sanitise-job.js';
import { storage, StorageError } from './storage/index.js';

// The feature's front door: its rules, the worker's sanitise job and the purge live beside it.
export { ACCEPTS, CONSUMER_PURPOSES, DAILY_QUOTA, isConsumerPurpose, isPurpose, MAX_BOUND, MAX_BYTES, PURPOSES, QUOTA_WINDOW_MS, RATE, SANITISE_JOB, UNBOUND_TTL_MS } from './rules.js';
export type { ConsumerPurpose } from './rules.js';
export { runSanitiseJob, type SanitiseJobResult } from './sanitise-job.js';
export { purgeUnbound } from './purge.js';
export { StorageError };

let events: QueueEvents | null = null;
let eventsConnection: ReturnType<typeof createQueueConnection> | null = null;

async function queueEvents(): Promise<QueueEvents> {
  if (!events) {
    eventsConnection = createQueueConnection();
    events = new QueueEvents('upload-sanitise', { connection: eventsConnection, prefix: config.queuePrefix });
    events.on('error', (err) => logger.error({ err }, 'upload queue events failed'));
  }
  await events.waitUntilReady();
  return events;
}

/** Closes the queue-events listener of this process (server shutdown, tests). */
export async function closeUploadEvents(): Promise<void> {
  const e = events;
  const c = eventsConnection;
  events = null;
  eventsConnection = null;
  if (e) await e.close();
  if (c) c.disconnect();
}

export interface IncomingFile {
  bytes: Buffer;
  declaredMime: string;
  declaredExt: string;
}

function storageFailed(err: unknown, what: string): Error {
  logger.error({ err }, `upload: ${what}`);
  return uploadError('STORAGE_FAILED');
}

/**
 * 429 QUOTA_EXCEEDED with Retry-After (spec section 7: every 429 carries it), the seconds
 * until the oldest upload counted against the exhausted quota leaves the 24-hour window.
 */
async function assertQuota(trx: Db, userId: string, purpose: Purpose): Promise<void> {
  const since = new Date(clock.nowMs() - QUOTA_WINDOW_MS);
  const counts = await repo.countSince(trx, userId, since);
  const total = PURPOSES.reduce((sum, p) => sum + counts[p], 0);
  const typeFull = counts[purpose] >= DAILY_QUOTA[purpose];
  if (typeFull || total >= DAILY_QUOTA.total) {
    // The type's own quota frees up when its oldest upload leaves the window; the total when
    // the oldest of any type does; when both are full, the later of the two.
    const oldestOfType = typeFull ? await repo.oldestSince(trx, userId, since, purpose) : null;
    const oldestAny = total >= DAILY_QUOTA.total ? await repo.oldestSince(trx, userId, since, null) : null;
    const freesAt = Math.max(oldestOfType?.getTime() ?? 0, oldestAny?.getTime() ?? 0) + QUOTA_WINDOW_MS;
    const retryAfter = Math.min(QUOTA_WINDOW_MS / 1000, Math.max(1, Math.ceil((freesAt - clock.nowMs()) / 1000)));
    throw uploadError('QUOTA_EXCEEDED', { quota: { [purpose]: DAILY_QUOTA[purpose], total: DAILY_QUOTA.total } }, { 'Retry-After': String(retryAfter) });
  }
}

async function waitForSanitiser(id: string, purpose: Purpose, file: IncomingFile): Promise<SanitiseJobResult> {
  const listener = await queueEvents();
  let job: Job;
  try {
    job = await getQueue('upload-sanitise').add(
      SANITISE_JOB,
      { upload_id: id, purpose, declared_mime: file.declaredMime.slice(0, 100), declared_ext: file.declaredExt },
      { jobId: `upload-${id}`, attempts: 1, removeOnComplete: { age: 3600 }, removeOnFail: { age: 24 * 3600 } },
    );
  } catch (err) {
    throw storageFailed(err, 'sanitise job could not be queued');
  }
  try {
    return (await job.waitUntilFinished(listener, config.uploads.waitTimeoutMs)) as SanitiseJobResult;
  } catch (err) {
    throw storageFailed(err, 'sanitise job failed or timed out');
  }
}

/** A file the sanitiser accepted and stored, not yet recorded. */
export interface SanitisedFile {
  id: string;
  result: Extract<SanitiseJobResult, { ok: true }>;
}

/**
 * POST /v1/upload/:type, step 1, with NO transaction open (ARCHITECTURE rule 7: it waits
 * for the upload worker, up to UPLOAD_WAIT_TIMEOUT_MS): size, quota, quarantine, sanitise.
 * The stored file has no row yet; `record` adds it, or the daily purge deletes it.
 */
export async function sanitiseIncoming(userId: string, purpose: Purpose, file: IncomingFile): Promise<SanitisedFile> {
  if (file.bytes.length === 0) throw uploadError('FILE_EMPTY');
  if (file.bytes.length > MAX_BYTES[purpose]) throw uploadError('FILE_TOO_LARGE', { max_bytes: MAX_BYTES[purpose] });
  await assertQuota(db, userId, purpose);
  const id = randomUUID();
  try {
    await storage().put(quarantineKey(id), file.bytes);
  } catch (err) {
    throw storageFailed(err, 'quarantine write failed');
  }
  const result = await waitForSanitiser(id, purpose, file);
  if (!result.ok) {
    throw isUploadErrorCode(result.code) ? uploadError(result.code) : storageFailed(new Error(result.code), 'unknown sanitiser refusal');
  }
  return { id, result };
}

/**
 * Step 2: records the sanitised file, joining the caller's transaction (idempotency) or
 * opening one; the quota is checked again under the user's lock. A file not recorded is
 * the caller's to `discard` (the route's idempotency step does it after the rollback).
 */
export async function record(trx: Db, userId: string, purpose: Purpose, file: SanitisedFile): Promise<UploadRow> {
  const { id, result } = file;
  const write = async (t: Db): Promise<UploadRow> => {
    await repo.lockUser(t, userId);
    await assertQuota(t, userId, purpose);
    return repo.insert(t, {
      id,
      stored_name: result.stored_name,
      user_id: userId,
      purpose,
      mime: result.mime,
      size: result.size,
      sha256: result.sha256,
      storage_key: result.storage_key,
      created_at: clock.now(),
    });
  };
  return trx.isTransaction ? write(trx) : db.transaction(write);
}

/** Deletes a sanitised file that will not be recorded (a refused or replayed request). */
export async function discard(file: SanitisedFile): Promise<void> {
  await storage()
    .delete(file.result.storage_key)
    .catch((e: unknown) => logger.warn({ err: e }, 'upload: orphan file not deleted'));
}

/**
 * GET /v1/upload/files/:name: the link is checked first (signed for this reader, not
 * expired: 403 LINK_INVALID / LINK_NOT_YOURS, 410 LINK_EXPIRED), then the file is read.
 */
export async function linkedFile(name: string, query: LinkQuery, readerId: string): Promise<{ row: UploadRow; bytes: Buffer }> {
  verifyLink(name, query, readerId);
  return readFile(name);
}

/** The bytes behind a verified link; 404 NOT_FOUND when the upload is gone. */
export async function readFile(name: string): Promise<{ row: UploadRow; bytes: Buffer }> {
  const row = await repo.byStoredName(db, name);
  if (!row) throw uploadErrors.fileNotFound();
  let bytes: Buffer | null;
  try {
    bytes = await storage().get(row.storage_key);
  } catch (err) {
    throw storageFailed(err, 'read failed');
  }
  if (!bytes) throw uploadErrors.fileNotFound();
  return { row, bytes };
}

// ---------------------------------------------------------------------------------------
// Binding

/**
 * Attaches uploads (links as returned by the upload endpoint, or bare upload ids) to one
 * target, inside the caller's transaction. Each is a compare-and-set on `bound_at IS
 * NULL`, so two concurrent attaches of one upload cannot both win. Errors: 400
 * UPLOAD_INVALID_REF, UPLOAD_NOT_FOUND, UPLOAD_NOT_OWNED, UPLOAD_WRONG_PURPOSE; 409
 * UPLOAD_ALREADY_BOUND, UPLOAD_QUOTA.
 */
export async function bindUploads(trx: Db, userId: string, refs: readonly string[], target: { kind: BoundKind; id: string }): Promise<UploadRow[]> {
  if (refs.length === 0) return [];
  const names: string[] = [];
  for (const ref of refs) {
    const name = storedNameOf(ref);
    if (!name) throw uploadError('UPLOAD_INVALID_REF', { ref });
    if (names.includes(name)) throw uploadError('UPLOAD_ALREADY_BOUND', { upload_id: name });
    names.push(name);
  }
  await repo.lockTarget(trx, target.kind, target.id);
  if ((await repo.countBound(trx, target.kind, target.id)) + names.length > MAX_BOUND[target.kind]) {
    throw uploadError('UPLOAD_QUOTA', { max: MAX_BOUND[target.kind] });
  }
  const at = clock.now();
  const bound: UploadRow[] = [];
  for (const name of names) {
    const row = await repo.bind(trx, name, userId, ACCEPTS[target.kind], { ...target, at });
    if (row) {
      bound.push(row);
      continue;
    }
    const found = await repo.byStoredName(trx, name);
    if (!found) throw uploadError('UPLOAD_NOT_FOUND', { upload_id: name });
    if (found.user_id !== userId) throw uploadError('UPLOAD_NOT_OWNED', { upload_id: name });
    if (!ACCEPTS[target.kind].includes(found.purpose)) throw uploadError('UPLOAD_WRONG_PURPOSE', { upload_id: name });
    throw uploadError('UPLOAD_ALREADY_BOUND', { upload_id: name });
  }
  return bound;
}

// ---------------------------------------------------------------------------------------
// Escrow attachments

async function escrowFor(trx: Db, caller: Actor, escrowId: string, staffMayRead: boolean): Promise<void> {
  if (!UUID_V4.test(escrowId)) throw uploadErrors.escrowNotFound();
  const escrow = await escrowRepo.findById(trx, escrowId);
  if (!escrow) throw uploadErrors.escrowNotFound();
  const party = escrow.buyer_id === caller.userId || escrow.seller_id === caller.userId;
  if (!party && !(staffMayRead && caller.role === 'admin')) throw uploadErrors.notParty();
}

/**
 * POST /api/escrows/:id/attachments: a party attaches one of their own `escrow` uploads
 * (the link as returned, or the upload id) to the escrow. Answers every attachment.
 */
export async function attachToEscrow(trx: Db, caller: Actor, escrowId: string, ref: string): Promise<UploadRow[]> {
  const run = async (t: Db): Promise<UploadRow[]> => {
    await escrowFor(t, caller, escrowId, false);
    await bindUploads(t, caller.userId, [ref], { kind: 'escrow', id: escrowId });
    return repo.boundTo(t, 'escrow', escrowId);
  };
  return trx === db ? db.transaction(run) : run(trx);
}

/** GET /api/escrows/:id/attachments: the parties and staff. */
export async function escrowAttachments(caller: Actor, escrowId: string): Promise<UploadRow[]> {
  await escrowFor(db, caller, escrowId, true);
  return repo.boundTo(db, 'escrow', escrowId);
}

/** The refs among `refs` that point at this service's uploads (others are outside links). */
export function ourRefs(refs: readonly string[]): string[] {
  return refs.filter(isOurLink);
}
