/**
 * KYB uploads (enterprise spec 4.2, 7, 8; decision 0017): POST /v1/enterprise/kyb/uploads
 * and the invite's upload route through the real sanitiser worker (in this process, as the
 * consumer upload tests run it) with the hostile corpus: the answer, every refusal in the
 * enterprise shape (PDF_ENCRYPTED for the consumer's PDF_PASSWORD_PROTECTED; English, no
 * message_id), the size limit, the missing file, the limits per user and per IP; the
 * 5-minute document links; and the purge of unattached uploads after a day.
 */
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import sharp from 'sharp';
import { PDFDocument, PDFName } from 'pdf-lib';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import * as H from '../../helpers/hostile-files.js';
import { createUser } from '../../factories/users.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, type Cred } from '../../factories/enterprise.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { inspect } from '../../../shared/uploads/sanitise/pdf.js';
import { purgeUnbound } from '../../../shared/uploads/purge.js';
import type { UserRow } from '../../../shared/users/repo.js';
import { pathOf, startUploads, type Client, type Harness, type Part } from '../uploads/support.js';

const P = '/v1/enterprise/kyb';
const MB = 1024 * 1024;

const pdf = (bytes: Buffer, filename = 'akta.pdf'): Part => ({ bytes, filename, contentType: 'application/pdf' });
const png = (bytes: Buffer, filename = 'rekening.png'): Part => ({ bytes, filename, contentType: 'image/png' });
const jpg = (bytes: Buffer, filename = 'ktp.jpg'): Part => ({ bytes, filename, contentType: 'image/jpeg' });
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const countUploads = async () => Number(((await db('uploads').count('* as n').first()) as { n: number | string }).n);

/** An enterprise error: the code, an English message, and none of the consumer's bilingual fields. */
function expectEnterpriseError(res: Response, status: number, code: string): void {
  const label = `${res.status} ${JSON.stringify(res.body)}`;
  expect(res.status, label).to.equal(status);
  expect(res.body.success, label).to.equal(false);
  expect(res.body.error.code, label).to.equal(code);
  expect(res.body.error.message, label).to.be.a('string').and.not.equal('');
  expect(res.body.error, label).to.not.have.any.keys('message_id', 'message_en');
  expect(res.body, label).to.not.have.property('data');
  expect(res.headers['cache-control'], label).to.equal('private, no-store');
}

describe('kyb uploads and document links', function () {
  this.timeout(60_000);
  let harness: Harness;
  let client: Client;
  let owner: UserRow;
  let ownerSession: Cred;
  let workspaceId: string;

  before(async () => {
    harness = await startUploads();
  });
  after(async () => {
    await harness.stop();
  });
  beforeEach(async () => {
    await harness.clear();
    client = api();
    const w = await createWorkspace(undefined, 'Acme Logistik');
    owner = w.owner;
    workspaceId = w.workspace.id;
    ownerSession = await sessionOf(w.owner);
  });
  afterEach(() => clock.reset());

  const upload = (part: Part | null, cred: Cred = ownerSession, path = `${P}/uploads`) => {
    const req = client.post(path).set(headersOf(cred));
    return part ? req.attach('file', part.bytes, { filename: part.filename, contentType: part.contentType }) : req;
  };

  const storedFiles = async () => (await readdir(join(harness.dir, 'files')).catch(() => [] as string[])).sort();

  async function fetchLinked(url: string, cred: Cred): Promise<Response> {
    return client
      .get(pathOf(url))
      .set(headersOf(cred))
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });
  }

  /** Attaches an upload to the workspace's draft (a PT: bank_proof, akta_pendirian and the others are company slots). */
  async function attach(uploadId: string, docType = 'bank_proof'): Promise<string> {
    const res = await client.post(`${P}/documents`).set(headersOf(ownerSession)).send({ upload_id: uploadId, doc_type: docType });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const doc = (res.body.data.application.documents as { id: string; doc_type: string }[]).find((d) => d.doc_type === docType);
    return doc!.id;
  }

  describe('POST /v1/enterprise/kyb/uploads', () => {
    for (const [name, part, mime] of [
      ['a PDF', async () => pdf(await H.plainPdf(2)), 'application/pdf'],
      ['a PNG', async () => png(await H.photo('png')), 'image/png'],
      ['a JPEG', async () => jpg(await H.photo('jpeg')), 'image/jpeg'],
      ['a WebP', async () => ({ bytes: await H.photo('webp'), filename: 'npwp.webp', contentType: 'image/webp' }), 'image/webp'],
    ] as [string, () => Promise<Part>, string][]) {
      it(`${name}: 201 { upload_id, mime, size_bytes, sha256 } of the sanitised file, stored as an unattached kyb upload of the caller`, async () => {
        const res = await upload(await part());
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.headers['cache-control']).to.equal('private, no-store');
        const d = res.body.data;
        expect(d).to.have.all.keys('upload_id', 'mime', 'size_bytes', 'sha256');
        expect(d.mime).to.equal(mime);
        const row = await db('uploads').where({ id: d.upload_id }).first();
        expect(row).to.include({ user_id: owner.id, purpose: 'kyb', mime, sha256: d.sha256, bound_at: null, bound_kind: null });
        expect(Number(row.size)).to.equal(d.size_bytes);
        const [file] = await storedFiles();
        expect(file).to.equal(row.stored_name);
        // The answer describes what is stored (the sanitised file), not what was sent.
        const { readFile } = await import('node:fs/promises');
        const stored = await readFile(join(harness.dir, 'files', file!));
        expect(sha256(stored)).to.equal(d.sha256);
        expect(stored.length).to.equal(d.size_bytes);
      });
    }

    describe('refusals in the enterprise shape (nothing stored)', () => {
      const gif = async () => ({ bytes: await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } }).gif().toBuffer(), filename: 'a.gif', contentType: 'image/gif' });
      const cases: { name: string; part: () => Part | Promise<Part>; status: number; code: string }[] = [
        { name: 'a ZIP archive', part: () => ({ bytes: H.zipArchive(), filename: 'dokumen.zip', contentType: 'application/zip' }), status: 400, code: 'TYPE_NOT_ALLOWED' },
        { name: 'a GIF', part: gif, status: 400, code: 'TYPE_NOT_ALLOWED' },
        { name: 'an HTML page named .pdf', part: () => pdf(Buffer.from('<html><script>alert(1)</script></html>')), status: 400, code: 'TYPE_NOT_ALLOWED' },
        { name: 'a PNG declared as image/jpeg with a .jpg name', part: async () => jpg(await H.photo('png')), status: 400, code: 'TYPE_MISMATCH' },
        { name: 'a PDF named .png', part: async () => png(await H.plainPdf()), status: 400, code: 'TYPE_MISMATCH' },
        { name: 'a JPEG+PDF polyglot', part: async () => jpg(Buffer.concat([await H.photo('jpeg'), await H.plainPdf()])), status: 400, code: 'POLYGLOT' },
        { name: 'a PNG+ZIP polyglot', part: async () => png(Buffer.concat([await H.photo('png'), H.zipArchive()])), status: 400, code: 'POLYGLOT' },
        { name: 'a password-protected PDF (the consumer PDF_PASSWORD_PROTECTED)', part: () => pdf(H.encryptedPdf()), status: 400, code: 'PDF_ENCRYPTED' },
        { name: 'a truncated PDF', part: async () => pdf(await H.truncatedPdf()), status: 400, code: 'PDF_DAMAGED' },
      ];
      for (const c of cases) {
        it(`${c.name} -> ${c.status} ${c.code}`, async () => {
          const res = await upload(await c.part());
          expectEnterpriseError(res, c.status, c.code);
          expect(await countUploads()).to.equal(0);
          expect(await storedFiles()).to.deep.equal([]);
          expect(await readdir(join(harness.dir, 'quarantine')).catch(() => [])).to.deep.equal([]);
        });
      }

      it('PDF_ENCRYPTED names no consumer code and carries no message_id, whatever the language asked', async () => {
        const res = await upload(pdf(H.encryptedPdf())).set('X-Service-Lang', 'id');
        expectEnterpriseError(res, 400, 'PDF_ENCRYPTED');
        expect(JSON.stringify(res.body)).to.not.include('PDF_PASSWORD_PROTECTED');
        expect(res.body.error.message).to.match(/password|encrypt/i);
      });
    });

    it('a PDF with JavaScript, OpenAction, page actions, a Launch link and an embedded file: as for consumer uploads, all removed and accepted (201); the stored file re-parses clean', async () => {
      const src = await H.activePdf();
      expect(inspect(await PDFDocument.load(src)).active, 'the corpus PDF is active').to.include.members(['/OpenAction', '/JavaScript', '/AA', 'action /Launch']);
      const res = await upload(pdf(src));
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data.mime).to.equal('application/pdf');
      const docId = await attach(res.body.data.upload_id as string, 'akta_pendirian');
      const link = await client.get(`${P}/documents/${docId}/url`).set(headersOf(ownerSession));
      const file = await fetchLinked(link.body.data.url as string, ownerSession);
      expect(file.status).to.equal(200);
      const stored = file.body as Buffer;
      expect(sha256(stored)).to.equal(res.body.data.sha256);
      const doc = await PDFDocument.load(stored);
      expect(inspect(doc)).to.deep.equal({ active: [], embedded: [] });
      expect(doc.catalog.has(PDFName.of('OpenAction'))).to.equal(false);
      for (const token of ['/JavaScript', '/OpenAction', '/Launch', '/EmbeddedFile', "app.alert", 'payload.exe']) expect(stored.toString('latin1'), token).to.not.include(token);
    });

    it('over 10 MB: 413 FILE_TOO_LARGE (declared length or counted while reading), with max_bytes; nothing stored', async () => {
      const photo = await H.photo('jpeg');
      const big = (n: number) => Buffer.concat([photo, Buffer.alloc(n - photo.length)]);
      for (const size of [10 * MB + 1, 11 * MB]) {
        const res = await upload(jpg(big(size)));
        expectEnterpriseError(res, 413, 'FILE_TOO_LARGE');
        expect(res.body.error.max_bytes).to.equal(10 * MB);
      }
      expect(await countUploads()).to.equal(0);
    });

    it('no file, an empty file, a file in another field, two files, or JSON: 400 INVALID_BODY naming the file field', async () => {
      const photo = await H.photo('png');
      const attempts = [
        upload(null),
        upload(null).field('note', 'x'),
        upload(png(Buffer.alloc(0))),
        client.post(`${P}/uploads`).set(headersOf(ownerSession)).attach('berkas', photo, 'a.png'),
        client.post(`${P}/uploads`).set(headersOf(ownerSession)).attach('file', photo, 'a.png').attach('file', photo, 'b.png'),
        client.post(`${P}/uploads`).set(headersOf(ownerSession)).send({ file: photo.toString('base64') }),
      ];
      for (const res of await Promise.all(attempts)) {
        expectEnterpriseError(res, 400, 'INVALID_BODY');
        expect(Object.keys(res.body.error.details.fieldErrors)).to.deep.equal(['file']);
      }
      expect(await countUploads()).to.equal(0);
    });

    it('needs an admin with a session: finance 403 FORBIDDEN, a personal key 403 KEY_NOT_ALLOWED (nothing read or stored)', async () => {
      const finance = await addMember(workspaceId, 'finance');
      expectEnterpriseError(await upload(png(await H.photo('png')), await sessionOf(finance.user)), 403, 'FORBIDDEN');
      expectEnterpriseError(await upload(png(await H.photo('png')), await personalKeyOf(owner)), 403, 'KEY_NOT_ALLOWED');
      expect(await countUploads()).to.equal(0);
    });

    it('30 per minute per user: the 31st answers 429 RATE_LIMITED with Retry-After, even with a good file; another admin still uploads', async () => {
      // Refused requests count too: two real files, then 28 without one (cheap), then a real one.
      for (let i = 0; i < 2; i++) expect((await upload(png(await H.photo('png', 8 + i, 8)))).status).to.equal(201);
      for (let i = 0; i < 28; i++) expectEnterpriseError(await upload(null), 400, 'INVALID_BODY');
      const over = await upload(png(await H.photo('png', 8, 8)));
      expectEnterpriseError(over, 429, 'RATE_LIMITED');
      expect(Number(over.headers['retry-after'])).to.be.within(1, 60);
      expect(await countUploads()).to.equal(2);
      const admin = await addMember(workspaceId, 'admin');
      expect((await upload(png(await H.photo('png', 8, 8)), await sessionOf(admin.user))).status).to.equal(201);
    });

    it('60 per minute per IP address: across users, the 61st answers 429 RATE_LIMITED', async () => {
      const admins: Cred[] = [ownerSession];
      for (let i = 0; i < 3; i++) admins.push(await sessionOf((await addMember(workspaceId, 'admin')).user));
      for (const cred of admins.slice(0, 3)) for (let i = 0; i < 20; i++) expectEnterpriseError(await upload(null, cred), 400, 'INVALID_BODY');
      expectEnterpriseError(await upload(png(await H.photo('png', 8, 8)), admins[3]), 429, 'RATE_LIMITED');
      expect(await countUploads()).to.equal(0);
    });
  });

  describe('POST /v1/kyb/invite/:token/uploads', () => {
    it("the link's user uploads with a personal key (201, their own upload); a polyglot is refused in the enterprise shape; a stranger 403 INVITE_CLAIMED", async () => {
      const cp = await client.post('/v1/enterprise/counterparties').set(headersOf(ownerSession)).send({ name: 'PT Pemasok Jaya' });
      const inv = await client.post(`/v1/enterprise/counterparties/${cp.body.data.id}/kyb-invite`).set(headersOf(ownerSession)).send({});
      expect(inv.status, JSON.stringify(inv.body)).to.equal(201);
      const path = `/v1/kyb/invite/${inv.body.data.token}/uploads`;
      const { user } = await createUser({ fullName: 'Sari Wulandari' });
      const key = await personalKeyOf(user);

      const ok = await upload(pdf(await H.plainPdf()), key, path);
      expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
      expect(ok.body.data).to.have.all.keys('upload_id', 'mime', 'size_bytes', 'sha256');
      expect(await db('uploads').where({ id: ok.body.data.upload_id }).first()).to.include({ user_id: user.id, purpose: 'kyb', bound_at: null });

      expectEnterpriseError(await upload(jpg(H.jpegWithComment(await H.photo('jpeg'), '<html><body><script>alert(document.cookie)</script>')), key, path), 400, 'POLYGLOT');
      expectEnterpriseError(await upload(pdf(H.encryptedPdf()), key, path), 400, 'PDF_ENCRYPTED');
      expect(await countUploads()).to.equal(1);

      const stranger = await personalKeyOf((await createUser()).user);
      expectEnterpriseError(await upload(pdf(await H.plainPdf()), stranger, path), 403, 'INVITE_CLAIMED');
      expect(await countUploads()).to.equal(1);
    });
  });

  describe('GET /v1/enterprise/kyb/documents/:id/url', () => {
    it('answers { url, expires_at } (5 minutes); the link loads the file for the caller, 403 LINK_NOT_YOURS for another user, 410 LINK_EXPIRED after 5 minutes', async () => {
      clock.set(new Date('2026-12-03T08:00:00.000Z'));
      ownerSession = await sessionOf(owner);
      const up = await upload(png(await H.photo('png')));
      expect(up.status, JSON.stringify(up.body)).to.equal(201);
      const docId = await attach(up.body.data.upload_id as string);

      const res = await client.get(`${P}/documents/${docId}/url`).set(headersOf(ownerSession));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      expect(res.body.data).to.have.all.keys('url', 'expires_at');
      expect(res.body.data.expires_at).to.equal('2026-12-03T08:05:00.000Z');
      const url = res.body.data.url as string;
      expect(url).to.include('/v1/upload/files/');

      const mine = await fetchLinked(url, ownerSession);
      expect(mine.status).to.equal(200);
      expect(sha256(mine.body as Buffer)).to.equal(up.body.data.sha256);

      // Another admin of the same workspace gets their own link; this one is not theirs.
      const admin = await addMember(workspaceId, 'admin');
      const adminSession = await sessionOf(admin.user);
      const theirs = await fetchLinked(url, adminSession);
      expect(theirs.status).to.equal(403);
      expect(JSON.parse((theirs.body as Buffer).toString('utf8')).error.code).to.equal('LINK_NOT_YOURS');
      const ownLink = await client.get(`${P}/documents/${docId}/url`).set(headersOf(adminSession));
      expect((await fetchLinked(ownLink.body.data.url as string, adminSession)).status).to.equal(200);

      clock.advance(5 * 60_000 + 1000);
      const late = await fetchLinked(url, ownerSession);
      expect(late.status).to.equal(410);
      expect(JSON.parse((late.body as Buffer).toString('utf8')).error.code).to.equal('LINK_EXPIRED');
    });

    it('an unknown, malformed or removed document: 404 NOT_FOUND; the link route needs an admin with a session', async () => {
      const up = await upload(png(await H.photo('png')));
      const docId = await attach(up.body.data.upload_id as string);
      for (const id of ['5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3', 'nope']) expectEnterpriseError(await client.get(`${P}/documents/${id}/url`).set(headersOf(ownerSession)), 404, 'NOT_FOUND');
      const finance = await addMember(workspaceId, 'finance');
      expectEnterpriseError(await client.get(`${P}/documents/${docId}/url`).set(headersOf(await sessionOf(finance.user))), 403, 'FORBIDDEN');
      expectEnterpriseError(await client.get(`${P}/documents/${docId}/url`).set(headersOf(await personalKeyOf(owner))), 403, 'KEY_NOT_ALLOWED');
      expect((await client.delete(`${P}/documents/${docId}`).set(headersOf(ownerSession))).status).to.equal(200);
      expectEnterpriseError(await client.get(`${P}/documents/${docId}/url`).set(headersOf(ownerSession)), 404, 'NOT_FOUND');
    });
  });

  describe('purge', () => {
    it('unattached KYB uploads older than a day are purged (row and file); attached ones stay; a removed document’s file goes too', async () => {
      const kept = await upload(png(await H.photo('png', 10, 10)));
      const removed = await upload(png(await H.photo('png', 11, 10)));
      const loose = await upload(png(await H.photo('png', 12, 10)));
      for (const r of [kept, removed, loose]) expect(r.status, JSON.stringify(r.body)).to.equal(201);
      await attach(kept.body.data.upload_id as string, 'bank_proof');
      const removedDoc = await attach(removed.body.data.upload_id as string, 'akta_pendirian');
      expect((await client.delete(`${P}/documents/${removedDoc}`).set(headersOf(ownerSession))).status).to.equal(200);
      const nameOf = async (id: string) => ((await db('uploads').where({ id }).first()) as { stored_name: string }).stored_name;
      const keptName = await nameOf(kept.body.data.upload_id as string);
      expect(await storedFiles()).to.have.length(3);

      clock.advance(24 * 3600_000 - 60_000);
      expect((await purgeUnbound()).rows, 'nothing is a day old yet').to.equal(0);
      clock.advance(60_000 + 1000);
      expect((await purgeUnbound()).rows).to.equal(2);
      expect((await db('uploads').select('id')).map((r: { id: string }) => r.id)).to.deep.equal([kept.body.data.upload_id]);
      expect(await storedFiles()).to.deep.equal([keptName]);

      // The attached document still loads (a fresh session: the old one idled out over the day).
      ownerSession = await sessionOf(owner);
      const view = await client.get(P).set(headersOf(ownerSession));
      const doc = (view.body.data.application.documents as { id: string; doc_type: string }[]).find((d) => d.doc_type === 'bank_proof')!;
      const link = await client.get(`${P}/documents/${doc.id}/url`).set(headersOf(ownerSession));
      expect((await fetchLinked(link.body.data.url as string, ownerSession)).status).to.equal(200);
    });
  });
});
