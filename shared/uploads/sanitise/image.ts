/**
 * Images: the size is read from the header alone (sharp's metadata() does not decode
 * pixels), so a decompression bomb is refused before any pixel buffer exists; then the
 * image is decoded and re-encoded in its own format with orientation applied and no
 * metadata kept (EXIF, GPS, XMP, ICC and comments are dropped: sharp writes none unless
 * asked). `limitInputPixels` stays set as a second guard in case a header lies.
 */
import sharp from 'sharp';
import type { Kind } from './detect.js';

export const MAX_PIXELS = 40_000_000;
export const MAX_SIDE = 12_000;

// One worker holds at most a few images at once: no cache of decoded images between jobs.
sharp.cache(false);

export type ImageOutcome = { ok: true; bytes: Buffer } | { ok: false; code: 'IMAGE_TOO_LARGE' | 'IMAGE_DECODE_FAILED' };

export async function sanitiseImage(bytes: Buffer, kind: Exclude<Kind, 'pdf'>): Promise<ImageOutcome> {
  let width: number;
  let height: number;
  let pages: number;
  try {
    const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
    width = meta.width ?? 0;
    height = meta.height ?? 0;
    pages = meta.pages ?? 1;
  } catch {
    return { ok: false, code: 'IMAGE_DECODE_FAILED' };
  }
  if (width <= 0 || height <= 0) return { ok: false, code: 'IMAGE_DECODE_FAILED' };
  if (width > MAX_SIDE || height > MAX_SIDE || width * height > MAX_PIXELS) return { ok: false, code: 'IMAGE_TOO_LARGE' };
  // Animated WebP: every frame counts against the pixel budget; only the first is kept.
  if (pages > 1 && width * height * pages > MAX_PIXELS * 2) return { ok: false, code: 'IMAGE_TOO_LARGE' };
  try {
    const pipeline = sharp(bytes, { limitInputPixels: MAX_PIXELS, failOn: 'error', sequentialRead: true }).rotate();
    const out =
      kind === 'jpeg'
        ? pipeline.jpeg({ quality: 90, mozjpeg: false })
        : kind === 'png'
          ? pipeline.png({ compressionLevel: 9 })
          : pipeline.webp({ quality: 90 });
    return { ok: true, bytes: await out.toBuffer() };
  } catch {
    return { ok: false, code: 'IMAGE_DECODE_FAILED' };
  }
}
