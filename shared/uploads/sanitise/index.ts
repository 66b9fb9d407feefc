/**
 * The sanitiser the upload worker runs on quarantined bytes: real type from the bytes,
 * checked against what the client declared and what the upload type allows, the polyglot
 * scan, then the image or PDF cleaning. Refusals are results (with the spec's code), not
 * exceptions: they are final, a retry would refuse again.
 */
import { createHash } from 'node:crypto';
import type { UploadErrorCode } from '../errors.js';
import { declaredMatches, foreignSignature, KINDS, realKind, type Kind } from './detect.js';
import { sanitiseImage } from './image.js';
import { sanitisePdf } from './pdf.js';

/** Upload purposes: the consumer's three (POST /v1/upload/:type) and `kyb`, enterprise KYB documents (not a consumer type). */
export type Purpose = 'escrow' | 'chat' | 'kyc' | 'kyb';

export const ALLOWED: Record<Purpose, readonly Kind[]> = {
  escrow: ['jpeg', 'png', 'webp', 'pdf'],
  chat: ['jpeg', 'png', 'webp', 'pdf'],
  kyc: ['jpeg', 'png', 'webp'],
  kyb: ['jpeg', 'png', 'webp', 'pdf'],
};

export interface SanitiseInput {
  bytes: Buffer;
  purpose: Purpose;
  declaredMime: string;
  /** The extension of the client's filename (lower case, without the dot). */
  declaredExt: string;
  pdfMaxPages: number;
}

export type SanitiseResult =
  | { ok: true; bytes: Buffer; mime: string; ext: string; sha256: string }
  | { ok: false; code: UploadErrorCode; detail?: string };

export async function sanitise(input: SanitiseInput): Promise<SanitiseResult> {
  const { bytes } = input;
  if (bytes.length === 0) return { ok: false, code: 'FILE_EMPTY' };
  const kind = await realKind(bytes);
  if (!kind || !ALLOWED[input.purpose].includes(kind)) return { ok: false, code: 'TYPE_NOT_ALLOWED' };
  if (!declaredMatches(kind, input.declaredMime, input.declaredExt)) return { ok: false, code: 'TYPE_MISMATCH' };
  const foreign = foreignSignature(bytes, kind);
  if (foreign) return { ok: false, code: 'POLYGLOT', detail: foreign };
  const cleaned = kind === 'pdf' ? await sanitisePdf(bytes, input.pdfMaxPages) : await sanitiseImage(bytes, kind);
  if (!cleaned.ok) return { ok: false, code: cleaned.code };
  return {
    ok: true,
    bytes: cleaned.bytes,
    mime: KINDS[kind].mime,
    ext: KINDS[kind].ext,
    sha256: createHash('sha256').update(cleaned.bytes).digest('hex'),
  };
}
