/** The spec's Upload answer and the upload configuration. */
import { config } from '../config.js';
import { signLink } from './links.js';
import type { UploadRow } from './repo.js';
import { CONSUMER_PURPOSES, DAILY_QUOTA, MAX_BYTES, RATE, UNBOUND_TTL_MS } from './rules.js';
import { ALLOWED } from './sanitise/index.js';
import { KINDS } from './sanitise/detect.js';

export interface UploadAnswer {
  filename: string;
  upload_id: string;
  url: string;
  type: string;
  mime: string;
  size: number;
  sha256: string;
}

/** The Upload answer for its uploader (the link is signed for them). */
export function serializeUpload(row: UploadRow, readerId: string): UploadAnswer {
  return {
    filename: row.stored_name,
    upload_id: row.stored_name,
    url: signLink(row.stored_name, readerId),
    type: row.purpose,
    mime: row.mime,
    size: row.size,
    sha256: row.sha256,
  };
}

/** The consumer's upload configuration: its types only (`kyb` is not one), their limits and quotas. */
export function serializeConfig(): Record<string, unknown> {
  const types = Object.fromEntries(
    CONSUMER_PURPOSES.map((purpose) => [
      purpose,
      { max_bytes: MAX_BYTES[purpose], mime: ALLOWED[purpose].map((k) => KINDS[k].mime), extensions: ALLOWED[purpose].flatMap((k) => KINDS[k].exts) },
    ]),
  );
  const dailyQuota = { ...Object.fromEntries(CONSUMER_PURPOSES.map((purpose) => [purpose, DAILY_QUOTA[purpose]])), total: DAILY_QUOTA.total };
  return {
    base_url: `${config.publicBaseUrl}/v1/upload`,
    field: 'file',
    types,
    limits: {
      uploads_per_window: RATE.points,
      window_seconds: RATE.durationSeconds,
      daily_quota: dailyQuota,
      max_megapixels: 40,
      max_side_px: 12_000,
      pdf_max_pages: config.uploads.pdfMaxPages,
      link_ttl_seconds: config.uploads.linkTtlSeconds,
      unbound_kept_hours: UNBOUND_TTL_MS / 3600_000,
    },
  };
}

/** An upload attached to an escrow, as one of the escrow's readers sees it. */
export function serializeAttachment(row: UploadRow, readerId: string): Record<string, unknown> {
  return {
    upload_id: row.stored_name,
    url: signLink(row.stored_name, readerId),
    mime: row.mime,
    size: row.size,
    sha256: row.sha256,
    uploaded_by: row.user_id,
    attached_at: row.bound_at?.toISOString() ?? null,
  };
}

/** The attachments answer of an escrow: every attachment, each link signed for the reader. */
export function serializeAttachments(escrowId: string, rows: readonly UploadRow[], readerId: string): Record<string, unknown> {
  return { escrow_id: escrowId, attachments: rows.map((r) => serializeAttachment(r, readerId)) };
}

/**
 * The headers a stored file is served with: its own type, PDFs as downloads, nothing it
 * may run or load (sandboxed), never cached by a shared cache, and its hash.
 */
export function fileHeaders(row: UploadRow): Record<string, string> {
  return {
    'Content-Type': row.mime,
    'Content-Disposition': `${row.mime === 'application/pdf' ? 'attachment' : 'inline'}; filename="${row.stored_name}"`,
    'Content-Security-Policy': "default-src 'none'; sandbox",
    'Cache-Control': 'private, no-store',
    'X-Upload-Sha256': row.sha256,
  };
}
