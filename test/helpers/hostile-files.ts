/**
 * A corpus of ordinary and hostile files, built by the tests themselves (no binary
 * fixtures): images from sharp, PDFs from pdf-lib or written by hand with a correct
 * cross-reference table, and the hostile variants (mismatched types, polyglots, GPS EXIF,
 * a pixel bomb, PDFs with JavaScript/OpenAction/embedded files, encrypted, truncated).
 */
import { crc32, createDeflate } from 'node:zlib';
import sharp from 'sharp';
import { PDFDocument, PDFName, PDFString } from 'pdf-lib';

/** An image with some texture (random noise, so it compresses like a photo). */
export async function photo(format: 'jpeg' | 'png' | 'webp', width = 64, height = 48): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let x = 12345;
  for (let i = 0; i < raw.length; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    raw[i] = (x >> 16) & 0xff;
  }
  const img = sharp(raw, { raw: { width, height, channels: 3 } });
  return format === 'jpeg' ? img.jpeg({ quality: 85 }).toBuffer() : format === 'png' ? img.png().toBuffer() : img.webp().toBuffer();
}

/** A JPEG carrying GPS coordinates, a camera model and orientation 6 (rotate 90°) in EXIF. */
export async function jpegWithGps(width = 40, height = 20): Promise<Buffer> {
  const base = await photo('jpeg', width, height);
  return sharp(base)
    .withMetadata({ orientation: 6 })
    .withExif({
      IFD0: { Make: 'SpyCam', Model: 'Tracker 9000' },
      IFD3: { GPSLatitudeRef: 'S', GPSLatitude: '6/1 10/1 30/1', GPSLongitudeRef: 'E', GPSLongitude: '106/1 49/1 0/1' },
    })
    .jpeg()
    .toBuffer();
}

/** A minimal ZIP archive with one stored file (local header, central directory, end record). */
export function zipArchive(name = 'payload.html', content = '<script>alert(1)</script>'): Buffer {
  const data = Buffer.from(content);
  const fname = Buffer.from(name);
  const crc = crc32(data);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(fname.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(fname.length, 28);
  const localLen = local.length + fname.length + data.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + fname.length, 12);
  end.writeUInt32LE(localLen, 16);
  return Buffer.concat([local, fname, data, central, fname, end]);
}

/** Inserts a JPEG comment segment (COM) right after SOI. */
export function jpegWithComment(jpeg: Buffer, comment: string): Buffer {
  const text = Buffer.from(comment, 'latin1');
  const seg = Buffer.alloc(4);
  seg.writeUInt16BE(0xfffe, 0);
  seg.writeUInt16BE(text.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), seg, text, jpeg.subarray(2)]);
}

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A PNG with a tEXt chunk (inserted before IEND). */
export function pngWithText(png: Buffer, keyword: string, text: string): Buffer {
  const iend = png.length - 12;
  return Buffer.concat([png.subarray(0, iend), pngChunk('tEXt', Buffer.from(`${keyword}\0${text}`, 'latin1')), png.subarray(iend)]);
}

/**
 * A complete, valid grey PNG of width x height pixels, all black: a decompression bomb
 * (20,000 x 20,000 is 400 MB of pixels in a few hundred KB). Rows are deflated as a
 * stream, so building it never holds the pixels.
 */
export async function pixelBomb(width = 20_000, height = 20_000): Promise<Buffer> {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  const deflate = createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  deflate.on('data', (c: Buffer) => parts.push(c));
  const done = new Promise<void>((resolve, reject) => {
    deflate.on('end', resolve);
    deflate.on('error', reject);
  });
  const rows = 256;
  const block = Buffer.alloc((width + 1) * rows); // filter byte 0 + zero pixels
  for (let y = 0; y < height; y += rows) {
    const n = Math.min(rows, height - y);
    if (!deflate.write(n === rows ? block : block.subarray(0, (width + 1) * n))) await new Promise((r) => deflate.once('drain', r));
  }
  deflate.end();
  await done;
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', ihdr), pngChunk('IDAT', Buffer.concat(parts)), pngChunk('IEND', Buffer.alloc(0))]);
}

export async function plainPdf(pages = 1): Promise<Buffer> {
  const doc = await PDFDocument.create();
  for (let i = 0; i < pages; i++) doc.addPage([200, 200]).drawText(`Halaman ${i + 1}`, { x: 20, y: 100, size: 12 });
  doc.setAuthor('Budi Santoso');
  return Buffer.from(await doc.save());
}

/** A PDF with document JavaScript (names tree), an OpenAction script, page additional actions, a Launch link and an embedded file. */
export async function activePdf(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([200, 200]);
  page.drawText('Invoice', { x: 20, y: 100, size: 12 });
  const ctx = doc.context;
  const js = ctx.obj({ Type: 'Action', S: 'JavaScript', JS: PDFString.of("app.alert('owned')") });
  const jsRef = ctx.register(js);
  doc.catalog.set(PDFName.of('OpenAction'), jsRef);
  const names = ctx.obj({ JavaScript: ctx.obj({ Names: [PDFString.of('init'), jsRef] }) });
  doc.catalog.set(PDFName.of('Names'), ctx.register(names));
  page.node.set(PDFName.of('AA'), ctx.obj({ O: ctx.obj({ S: 'JavaScript', JS: PDFString.of('this.print()') }) }));
  const launch = ctx.obj({ Type: 'Annot', Subtype: 'Link', Rect: [0, 0, 50, 50], A: ctx.obj({ S: 'Launch', F: PDFString.of('cmd.exe') }) });
  page.node.set(PDFName.of('Annots'), ctx.obj([ctx.register(launch)]));
  await doc.attach(Buffer.from('MZ not really an exe'), 'payload.exe', { mimeType: 'application/octet-stream', description: 'evil' });
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** A hand-written PDF from object bodies (numbered 1..n), with a correct xref table. */
export function handPdf(objects: string[], trailerExtra = ''): Buffer {
  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${trailerExtra}>>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const PAGE_OBJECTS = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>'];

/** A password-protected PDF (standard security handler in the trailer). */
export function encryptedPdf(): Buffer {
  const o = '<' + 'ab'.repeat(32) + '>';
  const u = '<' + 'cd'.repeat(32) + '>';
  return handPdf([...PAGE_OBJECTS, `<< /Filter /Standard /V 1 /R 2 /O ${o} /U ${u} /P -44 >>`], '/Encrypt 4 0 R /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>] ');
}

/** A PDF whose object stream uses a filter pdf-lib cannot decode. */
export function unsupportedEncodingPdf(): Buffer {
  const data = 'garbage-not-jbig2';
  return handPdf([...PAGE_OBJECTS, `<< /Type /ObjStm /N 1 /First 4 /Filter /JBIG2Decode /Length ${data.length} >>\nstream\n${data}\nendstream`]);
}

/** The first half of a valid PDF. */
export async function truncatedPdf(): Promise<Buffer> {
  const full = await plainPdf(3);
  return full.subarray(0, Math.floor(full.length / 2));
}


/** A PDF whose object stream inflates to `megabytes` MB of zeros (a deflate bomb in the structure pdf-lib decodes). */
export async function objectStreamBomb(megabytes = 256): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  deflate.on('data', (c: Buffer) => parts.push(c));
  const done = new Promise<void>((resolve, reject) => {
    deflate.on('end', resolve);
    deflate.on('error', reject);
  });
  const block = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < megabytes; i++) if (!deflate.write(block)) await new Promise((r) => deflate.once('drain', r));
  deflate.end();
  await done;
  const data = Buffer.concat(parts).toString('latin1');
  return handPdf([...PAGE_OBJECTS, `<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${data.length} >>\nstream\n${data}\nendstream`]);
}
