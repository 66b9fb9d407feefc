/**
 * POST /v1/upload/:type and GET /v1/upload/config (consumer spec 4.5, section 8): the
 * happy paths with the stored size and hash, every error code with both languages, the
 * hostile corpus (mismatches, polyglots, GPS EXIF, a pixel bomb, active and broken PDFs),
 * idempotency, the rate limit and the daily quotas with the clock.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, request, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createApp } from '../../../api/app.js';
import { expect } from 'chai';
import sharp from 'sharp';
import { PDFDocument, PDFName } from 'pdf-lib';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { inspect } from '../../../shared/uploads/sanitise/pdf.js';
import { StorageError, useStorage, type Storage } from '../../../shared/uploads/storage/index.js';
import * as uploads from '../../../shared/uploads/service.js';
import { INCOMING_DIR } from '../../../api/middleware/multipart.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { api } from '../../helpers/app.js';
import * as H from '../../helpers/hostile-files.js';
import { createUser } from '../../factories/users.js';
import { createUploadRow, createUploadRows } from '../../factories/uploads.js';
import { bearer, expectUploadError, pathOf, postFile, startUploads, type Client, type Harness, type Part } from './support.js';

const jpg = (bytes: Buffer, filename = 'foto.jpg'): Part => ({ bytes, filename, contentType: 'image/jpeg' });
const png = (bytes: Buffer, filename = 'foto.png'): Part => ({ bytes, filename, contentType: 'image/png' });
const pdf = (bytes: Buffer, filename = 'dokumen.pdf'): Part => ({ bytes, filename, contentType: 'application/pdf' });
const countUploads = async () => Number(((await db('uploads').count('* as n').first()) as { n: number | string }).n);
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A POST whose body is streamed with Transfer-Encoding: chunked (no Content-Length), to a real listening app. */
async function chunkedPost(path: string, key: string, contentType: string, body: Readable): Promise<{ status: number; body: { error: { code: string } } }> {
  const server = createServer(createApp().callback() as RequestListener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': contentType } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error: { code: string } } }));
      });
      req.on('error', reject);
      body.pipe(req);
    });
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('uploads: POST /v1/upload/:type', function () {
  this.timeout(60_000);
  let harness: Harness;
  let client: Client;
  let key: string;
  let userId: string;

  before(async () => {
    harness = await startUploads();
  });
  after(async () => {
    await harness.stop();
  });
  beforeEach(async () => {
    await harness.clear();
    client = api();
    const { user } = await createUser();
    userId = user.id;
    key = await issueKey(user.id);
  });

  async function fetchStored(url: string, as = key): Promise<Buffer> {
    const res = await client.get(pathOf(url)).set(...bearer(as)).buffer(true).parse((r, cb) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => cb(null, Buffer.concat(chunks)));
    });
    expect(res.status, String(res.body)).to.equal(200);
    return res.body as Buffer;
  }

  it('GET /v1/upload/config needs no credentials and answers data.base_url with the limits', async () => {
    const res = await client.get('/v1/upload/config');
    expect(res.status).to.equal(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.data.base_url).to.match(/\/v1\/upload$/);
    expect(res.body.data.types.chat.max_bytes).to.equal(5 * 1024 * 1024);
    expect(res.body.data.types.kyc.mime).to.not.include('application/pdf');
    // The consumer's types only: kyb (enterprise KYB documents) is neither listed nor counted here.
    expect(Object.keys(res.body.data.types)).to.deep.equal(['escrow', 'chat', 'kyc']);
    expect(res.body.data.limits.daily_quota).to.deep.equal({ escrow: 300, chat: 300, kyc: 30, total: 400 });
  });

  for (const [type, part] of [
    ['escrow', async () => jpg(await H.photo('jpeg'))],
    ['chat', async () => png(await H.photo('png'))],
    ['kyc', async () => ({ bytes: await H.photo('webp'), filename: 'ktp.webp', contentType: 'image/webp' })],
    ['escrow', async () => pdf(await H.plainPdf(2))],
  ] as const) {
    it(`${type}: stores a sanitised file; size and sha256 are those of the stored bytes; the uploader is recorded`, async () => {
      const p = await part();
      const res = await postFile(client, key, type, p);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const body = res.body;
      expect(body.success).to.equal(true);
      expect(body.filename).to.equal(body.upload_id);
      expect(body.upload_id).to.match(/^[0-9a-f-]{36}\.(jpg|png|webp|pdf)$/);
      expect(body.type).to.equal(type);
      expect(body.mime).to.equal(p.contentType);
      const { success: _success, data, ...flat } = body as Record<string, unknown>;
      expect(data, 'data carries the same Upload answer').to.deep.equal(flat);
      const url = new URL(body.url);
      expect(url.pathname).to.equal(`/v1/upload/files/${body.upload_id}`);
      expect([...url.searchParams.keys()].sort()).to.deep.equal(['exp', 'sig', 'u']);
      expect(url.searchParams.get('u')).to.equal(userId);
      const stored = await fetchStored(body.url);
      expect(stored.length).to.equal(body.size);
      expect(sha256(stored)).to.equal(body.sha256);
      const row = await db('uploads').where({ stored_name: body.upload_id }).first();
      expect(row).to.include({ user_id: userId, purpose: type, mime: p.contentType, sha256: body.sha256 });
      expect(Number(row.size)).to.equal(body.size);
      // The client's filename is not kept anywhere.
      expect(JSON.stringify(row)).to.not.include(p.filename);
    });
  }

  it('an image with GPS EXIF: the stored file has no EXIF at all and the orientation is applied', async () => {
    const src = await H.jpegWithGps(40, 20);
    const before = await sharp(src).metadata();
    expect(before.exif, 'the corpus file carries EXIF').to.not.equal(undefined);
    expect(src.toString('latin1')).to.include('SpyCam');
    const res = await postFile(client, key, 'escrow', jpg(src));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const stored = await fetchStored(res.body.url);
    const after = await sharp(stored).metadata();
    expect(after.exif).to.equal(undefined);
    expect(after.xmp).to.equal(undefined);
    expect(after.orientation ?? 1).to.equal(1);
    expect([after.width, after.height]).to.deep.equal([20, 40]);
    expect(stored.toString('latin1')).to.not.include('SpyCam');
    expect(stored.toString('latin1')).to.not.include('GPS');
  });

  it('a PDF with JavaScript, OpenAction, page actions, a Launch link and an embedded file: all removed, proved by re-parsing', async () => {
    const src = await H.activePdf();
    const found = inspect(await PDFDocument.load(src));
    expect(found.active, 'the corpus PDF is active').to.include.members(['/OpenAction', '/JavaScript', '/AA', 'action /Launch']);
    expect(found.embedded, 'the corpus PDF embeds a file').to.not.be.empty;
    const res = await postFile(client, key, 'escrow', pdf(src));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const stored = await fetchStored(res.body.url);
    const doc = await PDFDocument.load(stored);
    expect(doc.getPageCount()).to.equal(1);
    expect(inspect(doc)).to.deep.equal({ active: [], embedded: [] });
    expect(doc.catalog.has(PDFName.of('OpenAction'))).to.equal(false);
    // Saved without object streams: every dictionary key is plain text in the file.
    const text = stored.toString('latin1');
    for (const token of ['/JavaScript', '/OpenAction', '/Launch', '/EmbeddedFile', '/AA ', "app.alert", 'payload.exe']) {
      expect(text, token).to.not.include(token);
    }
  });

  it('a plain PDF loses its author (Info dictionary) and keeps its pages', async () => {
    const res = await postFile(client, key, 'chat', pdf(await H.plainPdf(3)));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const stored = await fetchStored(res.body.url);
    expect(stored.toString('latin1')).to.not.include('Budi Santoso');
    expect((await PDFDocument.load(stored)).getPageCount()).to.equal(3);
  });

  describe('refusals (each with message_id and message_en; Indonesian by default, English on request)', () => {
    const cases: { name: string; type?: string; part: () => Part | Promise<Part>; status: number; code: string }[] = [
      { name: 'an unknown upload type', type: 'avatar', part: async () => jpg(await H.photo('jpeg')), status: 400, code: 'INVALID_TYPE' },
      { name: 'kyb (an enterprise purpose, not a consumer type)', type: 'kyb', part: async () => pdf(await H.plainPdf()), status: 400, code: 'INVALID_TYPE' },
      { name: 'an empty file', part: () => jpg(Buffer.alloc(0)), status: 400, code: 'FILE_EMPTY' },
      { name: 'a PNG declared as image/jpeg with a .jpg name', part: async () => jpg(await H.photo('png')), status: 400, code: 'TYPE_MISMATCH' },
      { name: 'a JPEG with a .png name', part: async () => ({ ...jpg(await H.photo('jpeg')), filename: 'foto.png' }), status: 400, code: 'TYPE_MISMATCH' },
      { name: 'a JPEG declared application/pdf', part: async () => ({ ...pdf(await H.photo('jpeg')), filename: 'foto.jpg' }), status: 400, code: 'TYPE_MISMATCH' },
      { name: 'a PDF named .jpg', part: async () => jpg(await H.plainPdf()), status: 400, code: 'TYPE_MISMATCH' },
      { name: 'a PDF as kyc', type: 'kyc', part: async () => pdf(await H.plainPdf()), status: 400, code: 'TYPE_NOT_ALLOWED' },
      { name: 'an HTML page named .jpg', part: () => jpg(Buffer.from('<html><script>alert(1)</script></html>')), status: 400, code: 'TYPE_NOT_ALLOWED' },
      { name: 'a GIF', part: async () => ({ bytes: await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } }).gif().toBuffer(), filename: 'a.gif', contentType: 'image/gif' }), status: 400, code: 'TYPE_NOT_ALLOWED' },
      { name: 'a JPEG+PDF polyglot', part: async () => jpg(Buffer.concat([await H.photo('jpeg'), await H.plainPdf()])), status: 400, code: 'POLYGLOT' },
      { name: 'a PNG+ZIP polyglot', part: async () => png(Buffer.concat([await H.photo('png'), H.zipArchive()])), status: 400, code: 'POLYGLOT' },
      { name: 'a JPEG carrying HTML and a script in a comment', part: async () => jpg(H.jpegWithComment(await H.photo('jpeg'), '<html><body><script>alert(document.cookie)</script>')), status: 400, code: 'POLYGLOT' },
      { name: 'a PNG carrying PHP in a text chunk', part: async () => png(H.pngWithText(await H.photo('png'), 'Comment', '<?php system($_GET["c"]); ?>')), status: 400, code: 'POLYGLOT' },
      { name: 'a PNG carrying an SVG with an event handler', part: async () => png(H.pngWithText(await H.photo('png'), 'Comment', '<svg onload=alert(1)>')), status: 400, code: 'POLYGLOT' },
      { name: 'a JPEG that does not decode', part: async () => jpg(Buffer.concat([(await H.photo('jpeg')).subarray(0, 200), Buffer.alloc(200, 0x41)])), status: 400, code: 'IMAGE_DECODE_FAILED' },
      { name: 'an image 12,001 px wide', part: async () => png(await sharp({ create: { width: 12_001, height: 2, channels: 3, background: 'white' } }).png().toBuffer()), status: 400, code: 'IMAGE_TOO_LARGE' },
      { name: 'an image of 7,000 x 7,000 px (49 MP)', part: async () => png(await H.pixelBomb(7_000, 7_000)), status: 400, code: 'IMAGE_TOO_LARGE' },
      { name: 'a password-protected PDF', part: () => pdf(H.encryptedPdf()), status: 400, code: 'PDF_PASSWORD_PROTECTED' },
      { name: 'a truncated PDF', part: async () => pdf(await H.truncatedPdf()), status: 400, code: 'PDF_DAMAGED' },
      { name: 'a PDF with garbage after its header', part: () => pdf(Buffer.from('%PDF-1.7\n' + 'x'.repeat(500))), status: 400, code: 'PDF_DAMAGED' },
      { name: 'a PDF over the page limit (101 pages)', part: async () => pdf(await H.plainPdf(101)), status: 400, code: 'PDF_TOO_MANY_PAGES' },
      { name: 'a PDF whose object stream uses an unsupported filter', part: () => pdf(H.unsupportedEncodingPdf()), status: 400, code: 'PDF_UNSUPPORTED_ENCODING' },
    ];
    for (const c of cases) {
      it(`${c.name} -> ${c.status} ${c.code}; nothing stored`, async () => {
        const p = await c.part();
        const res = await postFile(client, key, c.type ?? 'escrow', p);
        expectUploadError(res, c.status, c.code);
        expect(res.body.error.message).to.equal(res.body.error.message_id);
        const en = await postFile(client, key, c.type ?? 'escrow', p, { 'X-Service-Lang': 'en' });
        expectUploadError(en, c.status, c.code);
        expect(en.body.error.message).to.equal(en.body.error.message_en);
        expect(en.body.error.message_en).to.not.equal(en.body.error.message_id);
        expect(await countUploads()).to.equal(0);
        const { readdir } = await import('node:fs/promises');
        const left = await readdir(`${harness.dir}/files`).catch(() => []);
        const quarantined = await readdir(`${harness.dir}/quarantine`).catch(() => []);
        expect(left, 'no stored file').to.deep.equal([]);
        expect(quarantined, 'quarantine emptied').to.deep.equal([]);
      });
    }

    it('a 20,000 x 20,000 px bomb is refused from its header: IMAGE_TOO_LARGE fast, the worker never decodes it', async () => {
      const bomb = await H.pixelBomb();
      const started = Date.now();
      const res = await postFile(client, key, 'escrow', png(bomb));
      expectUploadError(res, 400, 'IMAGE_TOO_LARGE');
      // Decoding 400 megapixels takes seconds; reading the header takes milliseconds.
      expect(Date.now() - started).to.be.below(1500);
    });

    it('no file, a file in another field, two files, or not multipart -> 400 NO_FILE', async () => {
      const photo = await H.photo('jpeg');
      expectUploadError(await postFile(client, key, 'escrow', null).field('note', 'x'), 400, 'NO_FILE');
      expectUploadError(await client.post('/v1/upload/escrow').set(...bearer(key)).attach('berkas', photo, 'a.jpg'), 400, 'NO_FILE');
      expectUploadError(
        await client.post('/v1/upload/escrow').set(...bearer(key)).attach('file', photo, 'a.jpg').attach('file', photo, 'b.jpg'),
        400,
        'NO_FILE',
      );
      expectUploadError(
        await client.post('/v1/upload/escrow').set(...bearer(key)).attach('file', photo, 'a.jpg').attach('other', photo, 'b.jpg'),
        400,
        'NO_FILE',
      );
      expectUploadError(await client.post('/v1/upload/escrow').set(...bearer(key)).send({ file: 'aGVsbG8=' }), 400, 'NO_FILE');
      expectUploadError(
        await client.post('/v1/upload/escrow').set(...bearer(key)).set('Content-Type', 'multipart/form-data; boundary=xyz').send('--xyz\r\nbroken'),
        400,
        'NO_FILE',
      );
    });

    it('a file over the type size -> 413 FILE_TOO_LARGE (5 MB for chat, 10 MB for escrow and kyc); nothing spooled is left behind', async () => {
      const photo = await H.photo('jpeg');
      const big = (n: number) => Buffer.concat([photo, Buffer.alloc(n - photo.length)]);
      // Chunked (no Content-Length): the limit is met while reading the part, not before.
      const { readdir } = await import('node:fs/promises');
      const boundary = 'bench-boundary-1234';
      const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`);
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const spooledBefore = (await readdir(INCOMING_DIR).catch(() => [])).length;
      const chunked = await chunkedPost('/v1/upload/chat', key, `multipart/form-data; boundary=${boundary}`, Readable.from([head, big(6 * 1024 * 1024), tail]));
      expect(chunked.status, JSON.stringify(chunked.body)).to.equal(413);
      expect(chunked.body.error.code).to.equal('FILE_TOO_LARGE');
      expect((await readdir(INCOMING_DIR)).length, 'spooled parts removed').to.equal(spooledBefore);
      expectUploadError(await postFile(client, key, 'chat', jpg(big(5 * 1024 * 1024 + 1))), 413, 'FILE_TOO_LARGE');
      expectUploadError(await postFile(client, key, 'kyc', jpg(big(10 * 1024 * 1024 + 1))), 413, 'FILE_TOO_LARGE');
      expect(await countUploads()).to.equal(0);
      // Just under the chat limit, it is read and judged for what it is (a JPEG with trailing zeros: cleaned and stored).
      const under = await postFile(client, key, 'chat', jpg(big(5 * 1024 * 1024 - 1024)));
      expect(under.status, JSON.stringify(under.body)).to.equal(200);
      expect(under.body.size).to.be.below(100_000);
    });

    it('no credentials -> 401 UNAUTHORIZED with message_id and message_en', async () => {
      const res = await client.post('/v1/upload/escrow').attach('file', await H.photo('jpeg'), 'a.jpg');
      expectUploadError(res, 401, 'UNAUTHORIZED');
    });
  });

  it('a store that fails answers 500 STORAGE_FAILED (with both messages) and records nothing', async () => {
    const failing: Storage = {
      put: () => Promise.reject(new StorageError('disk full')),
      get: () => Promise.resolve(null),
      delete: () => Promise.resolve(),
      list: () => Promise.resolve([]),
    };
    useStorage(failing);
    try {
      expectUploadError(await postFile(client, key, 'escrow', jpg(await H.photo('jpeg'))), 500, 'STORAGE_FAILED');
    } finally {
      useStorage(harness.storage);
    }
    expect(await countUploads()).to.equal(0);
  });

  it('Idempotency-Key: a retry with the same file answers the first answer (Idempotent-Replay) and stores nothing more; another file -> 422', async () => {
    const idem = randomUUID();
    const photo = await H.photo('jpeg');
    const first = await postFile(client, key, 'escrow', jpg(photo), { 'Idempotency-Key': idem });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const again = await postFile(client, key, 'escrow', jpg(photo), { 'Idempotency-Key': idem });
    expect(again.status).to.equal(200);
    expect(again.headers['idempotent-replay']).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    expect(await countUploads()).to.equal(1);
    const other = await postFile(client, key, 'escrow', jpg(await H.photo('jpeg', 30, 30)), { 'Idempotency-Key': idem });
    expectUploadError(other, 422, 'IDEMPOTENCY_KEY_CONFLICT');
    // A refused upload is not cached: the key is released.
    const k2 = randomUUID();
    expectUploadError(await postFile(client, key, 'escrow', png(await H.photo('jpeg')), { 'Idempotency-Key': k2 }), 400, 'TYPE_MISMATCH');
    expect((await postFile(client, key, 'escrow', png(await H.photo('png')), { 'Idempotency-Key': k2 })).status).to.equal(200);
  });

  it('rate limit: 40 upload requests per 10 minutes per user, the 41st -> 429 RATE_LIMITED with Retry-After; another user is unaffected', async () => {
    for (let i = 0; i < 40; i++) {
      const res = await postFile(client, key, 'escrow', null);
      expect(res.body.error.code).to.equal('NO_FILE');
    }
    const limited = await postFile(client, key, 'escrow', jpg(await H.photo('jpeg')));
    expectUploadError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).to.be.within(1, 600);
    const other = await createUser();
    const ok = await postFile(client, await issueKey(other.user.id), 'escrow', jpg(await H.photo('jpeg')));
    expect(ok.status).to.equal(200);
  });

  describe('daily quotas (rolling 24 hours; 429 QUOTA_EXCEEDED)', () => {
    const T0 = new Date('2026-11-26T03:00:00.000Z');
    beforeEach(() => clock.set(T0));

    it('kyc: 30 a day; the 31st is refused until the oldest is 24 hours old', async () => {
      await createUploadRows(userId, 30, 'kyc', new Date(T0.getTime() - 3600_000));
      const photo = { bytes: await H.photo('jpeg'), filename: 'ktp.jpg', contentType: 'image/jpeg' };
      const refused = await postFile(client, key, 'kyc', photo);
      expectUploadError(refused, 429, 'QUOTA_EXCEEDED');
      // Every 429 carries Retry-After in seconds (spec section 7): here when the oldest kyc upload is 24 hours old.
      expect(refused.headers['retry-after']).to.equal(String(23 * 3600));
      // Other types still have room.
      expect((await postFile(client, key, 'escrow', jpg(await H.photo('jpeg')))).status).to.equal(200);
      clock.advance(23 * 3600_000 - 1000);
      const later = await postFile(client, key, 'kyc', photo);
      expectUploadError(later, 429, 'QUOTA_EXCEEDED');
      expect(later.headers['retry-after']).to.equal('1');
      clock.advance(2000);
      expect((await postFile(client, key, 'kyc', photo)).status).to.equal(200);
    });

    for (const type of ['escrow', 'chat'] as const) {
      it(`${type}: 300 a day`, async () => {
        await createUploadRows(userId, 299, type);
        expect((await postFile(client, key, type, jpg(await H.photo('jpeg')))).status).to.equal(200);
        expectUploadError(await postFile(client, key, type, jpg(await H.photo('jpeg'))), 429, 'QUOTA_EXCEEDED');
        clock.advance(24 * 3600_000 + 1);
        expect((await postFile(client, key, type, jpg(await H.photo('jpeg')))).status).to.equal(200);
      });
    }

    it('400 in total across types', async () => {
      await createUploadRows(userId, 250, 'escrow');
      await createUploadRows(userId, 149, 'chat');
      expect((await postFile(client, key, 'kyc', jpg(await H.photo('jpeg')))).status).to.equal(200);
      for (const type of ['escrow', 'chat', 'kyc']) {
        const res = await postFile(client, key, type, jpg(await H.photo('jpeg')));
        expectUploadError(res, 429, 'QUOTA_EXCEEDED');
        expect(Number(res.headers['retry-after']), type).to.be.within(1, 24 * 3600);
      }
    });

    it('race: three uploads at once with one kyc slot left: exactly one is stored', async () => {
      await createUploadRows(userId, 29, 'kyc');
      const photos = await Promise.all([0, 1, 2].map((i) => H.photo('jpeg', 40 + i, 40)));
      const answers = await Promise.all(photos.map((p) => postFile(client, key, 'kyc', jpg(p))));
      expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 429, 429]);
      for (const a of answers.filter((x) => x.status === 429)) expect(a.body.error.code).to.equal('QUOTA_EXCEEDED');
      expect(Number(((await db('uploads').where({ user_id: userId, purpose: 'kyc' }).count('* as n').first()) as { n: number }).n)).to.equal(30);
      // The refused ones left no stored file behind (the worker's file is deleted when the row is refused).
      const { readdir } = await import('node:fs/promises');
      expect(await readdir(`${harness.dir}/files`)).to.have.length(1);
    });

    it('another user has their own quota', async () => {
      await createUploadRows(userId, 30, 'kyc');
      const other = await createUser();
      const res = await postFile(client, await issueKey(other.user.id), 'kyc', jpg(await H.photo('jpeg')));
      expect(res.status).to.equal(200);
    });
  });

  describe('kyb: an enterprise purpose the service takes, never the consumer route', () => {
    const asFile = (p: Part) => ({ bytes: p.bytes, declaredMime: p.contentType, declaredExt: p.filename.split('.').pop()! });
    async function codeOf(work: Promise<unknown>): Promise<string> {
      try {
        await work;
      } catch (err) {
        return (err as { code: string }).code;
      }
      return 'none';
    }

    it('a PDF is sanitised by the worker and recorded as kyb; it binds to a kyb target (the schema allows both) and only kyb uploads do', async () => {
      const file = await uploads.sanitiseIncoming(userId, 'kyb', asFile(pdf(await H.plainPdf(2))));
      const row = await uploads.record(db, userId, 'kyb', file);
      expect(row).to.include({ user_id: userId, purpose: 'kyb', mime: 'application/pdf' });
      expect(row.stored_name).to.match(/\.pdf$/);
      const target = randomUUID();
      const bound = await db.transaction((trx) => uploads.bindUploads(trx, userId, [row.stored_name], { kind: 'kyb', id: target }));
      expect(bound[0]).to.include({ bound_kind: 'kyb', bound_id: target });
      const escrowUpload = await createUploadRow(userId);
      expect(await codeOf(db.transaction((trx) => uploads.bindUploads(trx, userId, [escrowUpload.stored_name], { kind: 'kyb', id: target })))).to.equal('UPLOAD_WRONG_PURPOSE');
      const kybUpload = await createUploadRow(userId, { purpose: 'kyb' });
      expect(await codeOf(db.transaction((trx) => uploads.bindUploads(trx, userId, [kybUpload.stored_name], { kind: 'escrow', id: randomUUID() })))).to.equal('UPLOAD_WRONG_PURPOSE');
    });

    it('a GIF or an HTML page as kyb -> TYPE_NOT_ALLOWED; nothing recorded', async () => {
      const gif = await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } }).gif().toBuffer();
      expect(await codeOf(uploads.sanitiseIncoming(userId, 'kyb', { bytes: gif, declaredMime: 'image/gif', declaredExt: 'gif' }))).to.equal('TYPE_NOT_ALLOWED');
      const html = Buffer.from('<html><script>alert(1)</script></html>');
      expect(await codeOf(uploads.sanitiseIncoming(userId, 'kyb', { bytes: html, declaredMime: 'application/pdf', declaredExt: 'pdf' }))).to.equal('TYPE_NOT_ALLOWED');
      expect(await countUploads()).to.equal(0);
    });

    it('kyb: 200 a day, and kyb uploads count toward the 400 in total', async () => {
      await createUploadRows(userId, 200, 'kyb');
      expect(await codeOf(uploads.sanitiseIncoming(userId, 'kyb', asFile(pdf(await H.plainPdf()))))).to.equal('QUOTA_EXCEEDED');
      await createUploadRows(userId, 199, 'escrow');
      expect((await postFile(client, key, 'escrow', jpg(await H.photo('jpeg')))).status).to.equal(200);
      expectUploadError(await postFile(client, key, 'escrow', jpg(await H.photo('jpeg'))), 429, 'QUOTA_EXCEEDED');
    });
  });
});
