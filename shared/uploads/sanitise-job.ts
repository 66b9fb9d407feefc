/**
 * The upload worker's side: the `uploads.sanitise` job reads the quarantined bytes,
 * sanitises them and stores the clean file (the API waits for its result).
 */
import { UnrecoverableError } from 'bullmq';
import { config } from '../config.js';
import { UUID_V4 } from '../ids.js';
import type { JobData } from '../queues.js';
import { fileKey, isPurpose, quarantineKey } from './rules.js';
import { sanitise } from './sanitise/index.js';
import { storage } from './storage/index.js';

export type SanitiseJobResult =
  | { ok: true; stored_name: string; storage_key: string; mime: string; size: number; sha256: string }
  | { ok: false; code: string };

/**
 * The `uploads.sanitise` processor: reads the quarantined bytes, sanitises them, stores
 * the clean file under a service-chosen name and removes the quarantined copy. Refusals
 * are returned (final); a storage failure throws (the API answers STORAGE_FAILED).
 */
const text = (v: JobData[string] | undefined): string => (typeof v === 'string' ? v : '');

export async function runSanitiseJob(data: JobData): Promise<SanitiseJobResult> {
  const id = text(data.upload_id);
  const purpose = text(data.purpose);
  if (!UUID_V4.test(id)) throw new UnrecoverableError('job data lacks upload_id');
  if (!isPurpose(purpose)) throw new UnrecoverableError(`unknown purpose ${purpose}`);
  const raw = await storage().get(quarantineKey(id));
  if (!raw) throw new UnrecoverableError(`quarantined upload ${id} is gone`);
  const result = await sanitise({
    bytes: raw,
    purpose,
    declaredMime: text(data.declared_mime),
    declaredExt: text(data.declared_ext),
    pdfMaxPages: config.uploads.pdfMaxPages,
  });
  let answer: SanitiseJobResult;
  if (result.ok) {
    const storedName = `${id}.${result.ext}`;
    await storage().put(fileKey(storedName), result.bytes);
    answer = { ok: true, stored_name: storedName, storage_key: fileKey(storedName), mime: result.mime, size: result.bytes.length, sha256: result.sha256 };
  } else {
    answer = { ok: false, code: result.code };
  }
  await storage().delete(quarantineKey(id));
  return answer;
}
