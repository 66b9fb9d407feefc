/**
 * The real type of a file, read from its bytes (file-type), checked against the type and
 * extension the client declared, and a scan of the WHOLE buffer for the signatures of
 * other formats (polyglots: a JPEG that is also a PDF, a PNG that is also a ZIP, an image
 * that carries HTML or a script).
 *
 * False positives: images and PDFs hold compressed data that looks random, so a short
 * signature appears in it by chance. The rule keeps every marker long enough, or
 * structural enough, that a chance match is negligible (decision 0010 has the figures):
 * - `%PDF-` (5 bytes, images only): about 1e-5 per 10 MB of random bytes.
 * - HTML/script markers (`<html`, `<script`, `<?php`, `<iframe`, `<!doctype html`,
 *   `<body`, `javascript:`), case-insensitive, 5 bytes or more with a delimiter after
 *   the tag name: at most about 1e-5 per 10 MB.
 * - `<svg` only with a delimiter and, within 256 bytes, an event handler (`on...=`) or
 *   `</svg` (a bare 4-byte `<svg` would match one random 10 MB file in a few hundred).
 * - ZIP only as a structure: an end-of-central-directory record `PK\x05\x06` together with
 *   a local file header `PK\x03\x04` or central directory header `PK\x01\x02` (each 4
 *   bytes alone would match about one random 10 MB file in 400; both together, never).
 * A PDF's own first `%PDF-` is not foreign; an image inside a PDF is normal (JPEG
 * streams), so images' signatures are not searched in PDFs.
 */
import { fileTypeFromBuffer } from 'file-type';

export type Kind = 'jpeg' | 'png' | 'webp' | 'pdf';

export const KINDS: Record<Kind, { mime: string; exts: readonly string[]; ext: string }> = {
  jpeg: { mime: 'image/jpeg', exts: ['jpg', 'jpeg'], ext: 'jpg' },
  png: { mime: 'image/png', exts: ['png'], ext: 'png' },
  webp: { mime: 'image/webp', exts: ['webp'], ext: 'webp' },
  pdf: { mime: 'application/pdf', exts: ['pdf'], ext: 'pdf' },
};

const BY_MIME = new Map<string, Kind>(Object.entries(KINDS).map(([k, v]) => [v.mime, k as Kind]));

/** The kind file-type reads from the bytes; null for anything we do not take. */
export async function realKind(bytes: Buffer): Promise<Kind | null> {
  const found = await fileTypeFromBuffer(bytes);
  return found ? (BY_MIME.get(found.mime) ?? null) : null;
}

/** The extension of a client filename, lower case, without the dot ('' when none). */
export function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf('.');
  return dot >= 0 ? filename.slice(dot + 1).toLowerCase().slice(0, 16) : '';
}

/** Declared content type (`image/jpg` is a common alias) and extension agree with `kind`. */
export function declaredMatches(kind: Kind, declaredMime: string, declaredExt: string): boolean {
  const mime = declaredMime.split(';')[0]!.trim().toLowerCase();
  const aliases = kind === 'jpeg' ? ['image/jpeg', 'image/jpg', 'image/pjpeg'] : [KINDS[kind].mime];
  return aliases.includes(mime) && KINDS[kind].exts.includes(declaredExt.toLowerCase());
}

const HTML_MARKERS = /<(?:html|script|iframe|body|\?php|!doctype\s+html)[\s>/]|javascript:/i;
const SVG_MARKER = /<svg[\s>/][\s\S]{0,256}?(?:\bon[a-z]{3,24}\s*=|<\/svg)/i;
const PDF_MAGIC = '%PDF-';
const ZIP_EOCD = 'PK\x05\x06';
const ZIP_LOCAL = 'PK\x03\x04';
const ZIP_CENTRAL = 'PK\x01\x02';

/** The foreign format found in `bytes` (a file read as `kind`), or null. */
export function foreignSignature(bytes: Buffer, kind: Kind): string | null {
  // latin1 maps each byte to one code unit: offsets and byte patterns stay exact.
  const text = bytes.toString('latin1');
  if (kind !== 'pdf' && text.includes(PDF_MAGIC)) return 'pdf';
  if (text.includes(ZIP_EOCD) && (text.includes(ZIP_LOCAL) || text.includes(ZIP_CENTRAL))) return 'zip';
  if (HTML_MARKERS.test(text)) return 'html';
  if (SVG_MARKER.test(text)) return 'svg';
  return null;
}
