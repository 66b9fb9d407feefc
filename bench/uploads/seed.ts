/**
 * What the upload bench sends, made before the servers start (its callers are the
 * authenticated-read seed's users, each with a fresh key): a 20,000 ×
 * 20,000 px PNG decompression bomb (400 megapixels in a few hundred KB), a PDF of about
 * 10 MB (pages of photo-like JPEG images), and photo-sized JPEGs of about 2 MB with EXIF
 * and GPS tags (what the cleaning strips).
 */
import sharp from 'sharp';
import { PDFDocument } from 'pdf-lib';
import { pixelBomb } from '../../test/helpers/hostile-files.js';
import { fmtNum } from '../lib/format.js';

export const MB = 1024 * 1024;

/** Photo-like noise: compresses like a real photo (JPEG q90 of noise is ~2 bytes/pixel). */
export async function noiseJpeg(width: number, height: number, quality: number, seed: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let x = seed;
  for (let i = 0; i < raw.length; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    raw[i] = (x >> 16) & 0xff;
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality })
    .withExif({ IFD0: { Make: 'Bench', Model: 'Camera' }, IFD3: { GPSLatitudeRef: 'S', GPSLatitude: '6/1 10/1 30/1' } })
    .toBuffer();
}

/** A PDF of about `target` bytes (under 10 MiB): pages each holding one photo-like JPEG. */
async function bigPdf(target: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  let size = 0;
  for (let page = 0; ; page++) {
    const jpeg = await noiseJpeg(1200, 900, 90, 1000 + page);
    if (size + jpeg.length > target) break;
    const img = await doc.embedJpg(jpeg);
    doc.addPage([600, 450]).drawImage(img, { x: 0, y: 0, width: 600, height: 450 });
    size += jpeg.length;
  }
  return Buffer.from(await doc.save());
}

export interface Corpus {
  bomb: Buffer;
  pdf: Buffer;
  /** Up to 4 distinct JPEGs, sent in turn. */
  jpegs: Buffer[];
  jpegMB: number;
  /** A small image for the warm-up upload (loads sharp and pdf-lib in the worker). */
  small: Buffer;
}

export async function buildCorpus(jpegCount: number): Promise<Corpus> {
  console.log('bench: uploads: building the corpus');
  const bomb = await pixelBomb(20_000, 20_000);
  const pdf = await bigPdf(10 * MB - 64 * 1024);
  const jpegs: Buffer[] = [];
  for (let i = 0; i < Math.min(jpegCount, 4); i++) jpegs.push(await noiseJpeg(1600 + i * 8, 1600, 92, 77 + i));
  const jpegMB = jpegs.reduce((s, b) => s + b.length, 0) / jpegs.length / MB;
  const small = await sharp({ create: { width: 64, height: 64, channels: 3, background: 'grey' } }).jpeg().toBuffer();
  console.log(`bench: bomb ${fmtNum(bomb.length / 1024)} KB, PDF ${fmtNum(pdf.length / MB)} MB, JPEG ${fmtNum(jpegMB)} MB`);
  return { bomb, pdf, jpegs, jpegMB, small };
}
