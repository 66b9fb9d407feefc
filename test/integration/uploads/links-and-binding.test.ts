/**
 * Signed file links (expired, tampered, another user's), binding uploads to a dispute
 * through dispute messages' evidence_urls (uploader only, once, race-safe, per-target
 * maximum, purpose), links re-signed for each reader, and the daily purge of unbound
 * uploads (file and row) with the clock.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { purgeUnbound, MAX_BOUND } from '../../../shared/uploads/service.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { api } from '../../helpers/app.js';
import * as H from '../../helpers/hostile-files.js';
import { createEscrow } from '../../factories/escrows.js';
import { createUser } from '../../factories/users.js';
import { createUploadRow } from '../../factories/uploads.js';
import { openDispute } from '../../../shared/disputes/service.js';
import { bearer, expectUploadError, pathOf, postFile, startUploads, type Client, type Harness } from './support.js';

describe('uploads: signed links, binding and the purge', function () {
  this.timeout(60_000);
  let harness: Harness;
  let client: Client;

  before(async () => {
    harness = await startUploads();
  });
  after(async () => {
    await harness.stop();
  });
  beforeEach(async () => {
    await harness.clear();
    client = api();
  });

  async function someone() {
    const { user } = await createUser();
    return { user, key: await issueKey(user.id) };
  }

  async function uploaded(key: string, type = 'escrow'): Promise<{ url: string; upload_id: string }> {
    const res = await postFile(client, key, type, { bytes: await H.photo('jpeg'), filename: 'bukti.jpg', contentType: 'image/jpeg' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as { url: string; upload_id: string };
  }

  describe('GET /v1/upload/files/:name', () => {
    it('the uploader reads the file with the link; Content-Type is the stored type; not cached; sandboxed', async () => {
      const a = await someone();
      const up = await uploaded(a.key);
      const res = await client.get(pathOf(up.url)).set(...bearer(a.key));
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.equal('image/jpeg');
      expect(res.headers['cache-control']).to.equal('private, no-store');
      expect(res.headers['content-security-policy']).to.include('sandbox');
    });

    it('expired: 410 LINK_EXPIRED once the link is older than its lifetime (5 minutes)', async () => {
      const a = await someone();
      const up = await uploaded(a.key);
      clock.advance((config.uploads.linkTtlSeconds - 2) * 1000);
      expect((await client.get(pathOf(up.url)).set(...bearer(a.key))).status).to.equal(200);
      clock.advance(3000);
      expectUploadError(await client.get(pathOf(up.url)).set(...bearer(a.key)), 410, 'LINK_EXPIRED');
    });

    it('tampered: a changed exp, u, sig or file name, or a missing field -> 403 LINK_INVALID', async () => {
      const a = await someone();
      const b = await someone();
      const up = await uploaded(a.key);
      const other = await uploaded(a.key);
      const u = new URL(up.url);
      const variants: string[] = [];
      const change = (name: string, value: string | null) => {
        const v = new URL(u.toString());
        if (value === null) v.searchParams.delete(name);
        else v.searchParams.set(name, value);
        variants.push(pathOf(v.toString()));
      };
      change('exp', String(Number(u.searchParams.get('exp')) + 3600));
      change('sig', u.searchParams.get('sig')!.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')));
      change('sig', 'zz');
      for (const f of ['exp', 'sig', 'u']) change(f, null);
      variants.push(`/v1/upload/files/${other.upload_id}${u.search}`);
      for (const path of variants) expectUploadError(await client.get(path).set(...bearer(a.key)), 403, 'LINK_INVALID');
      // u swapped to the caller's own id: the signature no longer matches.
      const swapped = new URL(u.toString());
      swapped.searchParams.set('u', b.user.id);
      expectUploadError(await client.get(pathOf(swapped.toString())).set(...bearer(b.key)), 403, 'LINK_INVALID');
    });

    it("another user's link: 403 LINK_NOT_YOURS (signed in as someone else); no credentials: 401", async () => {
      const a = await someone();
      const b = await someone();
      const up = await uploaded(a.key);
      expectUploadError(await client.get(pathOf(up.url)).set(...bearer(b.key)), 403, 'LINK_NOT_YOURS');
      expectUploadError(await client.get(pathOf(up.url)), 401, 'UNAUTHORIZED');
    });

    it('English messages with X-Service-Lang: en', async () => {
      const a = await someone();
      const up = await uploaded(a.key);
      clock.advance(3600_000);
      const res = await client.get(pathOf(up.url)).set(...bearer(a.key)).set('X-Service-Lang', 'en');
      expectUploadError(res, 410, 'LINK_EXPIRED');
      expect(res.body.error.message).to.equal(res.body.error.message_en);
    });

    it('a deleted upload (purged) answers 404 NOT_FOUND even with a valid link', async () => {
      const a = await someone();
      const up = await uploaded(a.key);
      await db('uploads').where({ stored_name: up.upload_id }).delete();
      expect((await client.get(pathOf(up.url)).set(...bearer(a.key))).status).to.equal(404);
    });
  });

  describe('binding to a dispute through POST /v1/disputes/:id/messages evidence_urls', () => {
    async function disputed() {
      const made = await createEscrow({ status: 'paid' });
      const d = await openDispute({ userId: made.buyer.id, role: 'user' }, made.escrow.id, { reason_category: 'other', description: 'barang rusak' });
      return { ...made, disputeId: d.id, buyerKey: await issueKey(made.buyer.id), sellerKey: await issueKey(made.seller.id) };
    }
    const post = (key: string, id: string, urls: string[], extra: Record<string, string> = {}) =>
      client
        .post(`/v1/disputes/${id}/messages`)
        .set(...bearer(key))
        .set(extra)
        .send({ message: 'bukti', evidence_urls: urls });

    it('the uploader attaches an escrow upload once; the row records the dispute; readers get links signed for them', async () => {
      const d = await disputed();
      const up = await uploaded(d.buyerKey);
      const res = await post(d.buyerKey, d.disputeId, [up.url]);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const row = await db('uploads').where({ stored_name: up.upload_id }).first();
      expect(row).to.include({ bound_kind: 'dispute', bound_id: d.disputeId });
      // The seller reads the messages: the link is signed for the seller and opens the file.
      const list = await client.get(`/v1/disputes/${d.disputeId}/messages`).set(...bearer(d.sellerKey));
      const link = new URL(list.body.data[0].evidence_urls[0] as string);
      expect(link.pathname).to.equal(`/v1/upload/files/${up.upload_id}`);
      expect(link.searchParams.get('u')).to.equal(d.seller.id);
      expect((await client.get(pathOf(link.toString())).set(...bearer(d.sellerKey))).status).to.equal(200);
      // A second attach of the same upload: 409 UPLOAD_ALREADY_BOUND, nothing posted.
      expectUploadError(await post(d.buyerKey, d.disputeId, [up.url]), 409, 'UPLOAD_ALREADY_BOUND');
      expect(await db('dispute_messages').where({ dispute_id: d.disputeId }).count('* as n').first()).to.deep.include({ n: 1 });
    });

    it("someone else's upload -> 400 UPLOAD_NOT_OWNED; an unknown one -> 400 UPLOAD_NOT_FOUND; a chat upload -> 400 UPLOAD_WRONG_PURPOSE; a mangled link -> 400 UPLOAD_INVALID_REF", async () => {
      const d = await disputed();
      const theirs = await uploaded(d.sellerKey);
      expectUploadError(await post(d.buyerKey, d.disputeId, [theirs.url]), 400, 'UPLOAD_NOT_OWNED');
      const unknown = `${config.publicBaseUrl}/v1/upload/files/${randomUUID()}.jpg?exp=1&u=${d.buyer.id}&sig=00`;
      expectUploadError(await post(d.buyerKey, d.disputeId, [unknown]), 400, 'UPLOAD_NOT_FOUND');
      const chat = await uploaded(d.buyerKey, 'chat');
      expectUploadError(await post(d.buyerKey, d.disputeId, [chat.url]), 400, 'UPLOAD_WRONG_PURPOSE');
      for (const bad of [`${config.publicBaseUrl}/v1/upload/files/../../etc/passwd`, `${config.publicBaseUrl}/v1/upload/files/abc.jpg`]) {
        expectUploadError(await post(d.buyerKey, d.disputeId, [bad]), 400, 'UPLOAD_INVALID_REF');
      }
      const en = await post(d.buyerKey, d.disputeId, [theirs.url], { 'X-Service-Lang': 'en' });
      expect(en.body.error.message_en).to.be.a('string');
      expect(await db('dispute_messages').count('* as n').first()).to.deep.include({ n: 0 });
      expect(await db('uploads').whereNotNull('bound_at').count('* as n').first()).to.deep.include({ n: 0 });
    });

    it('race: two messages attaching the same upload at once: exactly one wins, the other is 409 UPLOAD_ALREADY_BOUND', async () => {
      const d = await disputed();
      const up = await uploaded(d.buyerKey);
      const [a, b] = await Promise.all([post(d.buyerKey, d.disputeId, [up.url]), post(d.buyerKey, d.disputeId, [up.url])]);
      expect([a.status, b.status].sort()).to.deep.equal([201, 409]);
      expect((a.status === 409 ? a : b).body.error.code).to.equal('UPLOAD_ALREADY_BOUND');
      expect(await db('dispute_messages').count('* as n').first()).to.deep.include({ n: 1 });
    });

    it(`a dispute holds at most ${MAX_BOUND.dispute} uploads: beyond -> 409 UPLOAD_QUOTA`, async () => {
      const d = await disputed();
      for (let i = 0; i < MAX_BOUND.dispute - 1; i++) await createUploadRow(d.buyer.id, { bound: { kind: 'dispute', id: d.disputeId } });
      const one = await uploaded(d.buyerKey);
      const two = await uploaded(d.buyerKey);
      expectUploadError(await post(d.buyerKey, d.disputeId, [one.url, two.url]), 409, 'UPLOAD_QUOTA');
      expect((await post(d.buyerKey, d.disputeId, [one.url])).status).to.equal(201);
      expectUploadError(await post(d.buyerKey, d.disputeId, [two.url]), 409, 'UPLOAD_QUOTA');
    });

    it('outside links (not this service) are kept as given and bind nothing', async () => {
      const d = await disputed();
      const res = await post(d.buyerKey, d.disputeId, ['https://files.example.com/resi.jpg']);
      expect(res.status).to.equal(201);
      expect(res.body.data.evidence_urls).to.deep.equal(['https://files.example.com/resi.jpg']);
    });
  });

  describe('escrow attachments: POST and GET /api/escrows/:id/attachments', () => {
    const attach = (key: string, escrowId: string, ref: string, headers: Record<string, string> = {}) =>
      client.post(`/api/escrows/${escrowId}/attachments`).set(...bearer(key)).set(headers).send({ attachment_url: ref });

    it('a party attaches their own escrow upload once; both parties and staff list it with links signed for them; strangers are refused', async () => {
      const made = await createEscrow({ status: 'paid' });
      const buyerKey = await issueKey(made.buyer.id);
      const sellerKey = await issueKey(made.seller.id);
      const up = await uploaded(sellerKey);
      const res = await attach(sellerKey, made.escrow.id, up.url);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data.escrow_id).to.equal(made.escrow.id);
      expect(res.body.data.attachments).to.have.length(1);
      expect(res.body.data.attachments[0]).to.include({ upload_id: up.upload_id, uploaded_by: made.seller.id, mime: 'image/jpeg' });
      const list = await client.get(`/api/escrows/${made.escrow.id}/attachments`).set(...bearer(buyerKey));
      expect(list.status).to.equal(200);
      const link = new URL(list.body.data.attachments[0].url as string);
      expect(link.searchParams.get('u')).to.equal(made.buyer.id);
      expect((await client.get(pathOf(link.toString())).set(...bearer(buyerKey))).status).to.equal(200);
      const admin = (await createUser({ role: 'admin' })).user;
      expect((await client.get(`/api/escrows/${made.escrow.id}/attachments`).set(...bearer(await issueKey(admin.id)))).status).to.equal(200);
      const stranger = await someone();
      expect((await client.get(`/api/escrows/${made.escrow.id}/attachments`).set(...bearer(stranger.key))).body.error.code).to.equal('FORBIDDEN');
      const theirs = await uploaded(stranger.key);
      expect((await attach(stranger.key, made.escrow.id, theirs.url)).body.error.code).to.equal('FORBIDDEN');
      expect((await db('uploads').where({ stored_name: theirs.upload_id }).first()).bound_at).to.equal(null);
      // Once only, also on another escrow; the bare upload id is accepted as a reference.
      expectUploadError(await attach(sellerKey, made.escrow.id, up.upload_id), 409, 'UPLOAD_ALREADY_BOUND');
      const other = await createEscrow({ status: 'paid', seller: made.seller });
      expectUploadError(await attach(sellerKey, other.escrow.id, up.url), 409, 'UPLOAD_ALREADY_BOUND');
      expect((await client.get(`/api/escrows/${randomUUID()}/attachments`).set(...bearer(buyerKey))).body.error.code).to.equal('ESCROW_NOT_FOUND');
      expect((await client.get('/api/escrows/nope/attachments').set(...bearer(buyerKey))).body.error.code).to.equal('ESCROW_NOT_FOUND');
    });

    it("the buyer cannot attach the seller's upload (UPLOAD_NOT_OWNED), nor a kyc upload (UPLOAD_WRONG_PURPOSE); at most 10 per escrow (UPLOAD_QUOTA); an outside link is UPLOAD_INVALID_REF", async () => {
      const made = await createEscrow({ status: 'paid' });
      const buyerKey = await issueKey(made.buyer.id);
      const sellerUp = await uploaded(await issueKey(made.seller.id));
      expectUploadError(await attach(buyerKey, made.escrow.id, sellerUp.url), 400, 'UPLOAD_NOT_OWNED');
      const kyc = await uploaded(buyerKey, 'kyc');
      expectUploadError(await attach(buyerKey, made.escrow.id, kyc.url), 400, 'UPLOAD_WRONG_PURPOSE');
      expectUploadError(await attach(buyerKey, made.escrow.id, 'https://files.example.com/a.jpg'), 400, 'UPLOAD_INVALID_REF');
      for (let i = 0; i < MAX_BOUND.escrow; i++) await createUploadRow(made.buyer.id, { bound: { kind: 'escrow', id: made.escrow.id } });
      const one = await uploaded(buyerKey);
      const res = await attach(buyerKey, made.escrow.id, one.url, { 'X-Service-Lang': 'en' });
      expectUploadError(res, 409, 'UPLOAD_QUOTA');
      expect(res.body.error.message).to.equal(res.body.error.message_en);
    });

    it('race: the same upload attached to two escrows at once binds to exactly one', async () => {
      const a = await createEscrow({ status: 'paid' });
      const b = await createEscrow({ status: 'paid', buyer: a.buyer });
      const key = await issueKey(a.buyer.id);
      const up = await uploaded(key);
      const [r1, r2] = await Promise.all([attach(key, a.escrow.id, up.url), attach(key, b.escrow.id, up.url)]);
      expect([r1.status, r2.status].sort()).to.deep.equal([201, 409]);
      expect(await db('uploads').whereNotNull('bound_at').count('* as n').first()).to.deep.include({ n: 1 });
    });
  });

  describe('uploads.purge-unbound (with the clock)', () => {
    it('deletes unbound uploads older than a day (file and row); keeps bound and recent ones; removes stale quarantine and orphan files', async () => {
      const a = await someone();
      const old = await uploaded(a.key);
      const made = await createEscrow({ status: 'paid' });
      const bound = await createUploadRow(a.user.id, { bytes: Buffer.from('bound bytes'), bound: { kind: 'escrow', id: made.escrow.id } });
      await harness.storage.put('quarantine/3b1f6c1e-5d5e-4e53-9a5e-1b8f1f2b6c11', Buffer.from('left over'));
      await harness.storage.put(`files/${randomUUID()}.jpg`, Buffer.from('orphan'));
      clock.advance(12 * 3600_000);
      const recent = await uploaded(a.key);
      expect(await purgeUnbound()).to.deep.equal({ rows: 0, quarantine: 0, orphans: 0 });
      clock.advance(12 * 3600_000 + 1000);
      expect(await purgeUnbound()).to.deep.equal({ rows: 1, quarantine: 1, orphans: 1 });
      const names = (await db('uploads').select('stored_name')).map((r: { stored_name: string }) => r.stored_name).sort();
      expect(names).to.deep.equal([bound.stored_name, recent.upload_id].sort());
      const files = (await readdir(join(harness.dir, 'files'))).sort();
      expect(files).to.deep.equal([bound.stored_name, recent.upload_id].sort());
      expect(await readdir(join(harness.dir, 'quarantine'))).to.deep.equal([]);
      expect((await client.get(pathOf(old.url)).set(...bearer(a.key))).status).to.be.oneOf([404, 410]);
    });

    it('is a registered job of the upload-sanitise queue with an hourly schedule', async () => {
      const { JOBS } = await import('../../../shared/queues.js');
      const { MAINTENANCE_SCHEDULES, buildRegistry } = await import('../../../workers/registry.js');
      expect(JOBS['uploads.purge-unbound']).to.equal('upload-sanitise');
      expect(buildRegistry().has('uploads.purge-unbound')).to.equal(true);
      expect(MAINTENANCE_SCHEDULES.some((s) => s.job === 'uploads.purge-unbound')).to.equal(true);
    });
  });
});
