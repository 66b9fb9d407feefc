/**
 * Deal documents (enterprise spec 2 "Document record", 4.7, 5, 7; D7 submit-evidence
 * `document_ids`): add (an https file or the caller's own upload in any form the upload
 * answer gives, bound to the document), the body rules, 400 FILE_NOT_OWNED (someone else's
 * upload, an upload already attached to an escrow, a chat or another document), 404 for a
 * deal or milestone of another workspace; list (newest first, filters, pagination, query
 * rules); delete (the upload unbound again; 409 LOCKED for evidence of an approved or
 * released milestone, attached or named, while evidence of a funded milestone goes; a
 * delete racing an approval waits for the deal row); roles and scopes; other workspaces;
 * the events; submit-evidence with own and foreign documents; `evidenceOf`.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { countRows } from '../../helpers/auth-signin-util.js';
import { headersOf, workspaceKey } from '../../factories/enterprise.js';
import { DOCUMENTS, insertDocument } from '../../factories/documents.js';
import {
  DEALS,
  activeDeal,
  dealWorld,
  feedRows,
  fundVia,
  setMilestoneStatus,
  type DealData,
  type DealWorld,
  type Headers,
} from '../../factories/deals.js';
import { createUploadRow } from '../../factories/uploads.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { evidenceOf } from '../../../shared/documents/service.js';
import { serializeUpload } from '../../../shared/uploads/serialize.js';
import { purgeUnbound } from '../../../shared/uploads/service.js';

const KEY = '0b6f3c1e-2d4a-4e5b-9c6d-7e8f9a0b1c2d';
const HASH = 'a'.repeat(64);

function expectError(res: Response, status: number, code: string, field?: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
  expect(res.body).to.not.have.property('data');
  if (field) expect(res.body.error.details.fieldErrors, JSON.stringify(res.body.error)).to.have.property(field);
}

const body = (extra: Record<string, unknown> = {}) => ({ title: 'Faktur pajak', document_type: 'invoice', file_url: 'https://files.example.com/faktur.pdf', ...extra });

/** A stored file address as the upload route serves it, for comparisons. */
const filePath = (name: string) => `${config.publicBaseUrl}/v1/upload/files/${name}`;

describe('enterprise deal documents', () => {
  const client = api();
  afterEach(() => clock.reset());

  const add = (h: Headers, b: object) => client.post(DOCUMENTS).set(h).send(b);
  const list = (h: Headers, query = '') => client.get(`${DOCUMENTS}${query}`).set(h);
  const del = (h: Headers, id: string) => client.delete(`${DOCUMENTS}/${id}`).set(h);
  const evidence = (h: Headers, dealId: string, mid: string, b: object) => client.post(`${DEALS}/${dealId}/milestones/${mid}/submit-evidence`).set(h).send(b);

  /** A workspace with an active two-milestone deal. */
  async function world(): Promise<{ w: DealWorld; d: DealData }> {
    const w = await dealWorld(client);
    return { w, d: await activeDeal(client, w) };
  }

  describe('add', () => {
    it('an https file with no deal: 201, the record with uploaded_by as an id, defaults, and document.added in the workspace feed', async () => {
      const { w } = await world();
      clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));
      const res = await add(w.h.operator, body());
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      const doc = res.body.data;
      expect(Object.keys(doc as object).sort()).to.deep.equal(
        ['checksum_sha256', 'created_at', 'deal_id', 'deal_reference', 'document_type', 'file_url', 'id', 'milestone_id', 'milestone_title', 'title', 'uploaded_by', 'visibility'].sort(),
      );
      expect(doc).to.deep.include({
        title: 'Faktur pajak',
        document_type: 'invoice',
        file_url: 'https://files.example.com/faktur.pdf',
        checksum_sha256: null,
        deal_id: null,
        deal_reference: null,
        milestone_id: null,
        milestone_title: null,
        visibility: 'account',
        uploaded_by: w.users.operator.id,
        created_at: clock.now().toISOString(),
      });
      const row = await db('deal_documents').where({ id: doc.id }).first();
      expect(row).to.include({ workspace_id: w.workspace.id, upload_id: null, uploaded_by: w.users.operator.id });
      const events = (await feedRows(w.workspace.id)).filter((e) => e.event === 'document.added');
      expect(events).to.have.length(1);
      expect(events[0]).to.include({ entity_type: 'document', entity_id: doc.id, deal_id: null, actor_id: w.users.operator.id, livemode: false });
      expect(events[0]!.summary).to.include('Faktur pajak');
    });

    it("on a deal: the deal's reference, a deal event; on a milestone: the deal is taken from it, and both given must agree", async () => {
      const { w, d } = await world();
      const [m1, m2] = d.milestones;
      const onDeal = await add(w.h.operator, body({ deal_id: d.deal.id, visibility: 'counterparty', checksum_sha256: HASH, document_type: 'contract' }));
      expect(onDeal.status, JSON.stringify(onDeal.body)).to.equal(201);
      expect(onDeal.body.data).to.deep.include({ deal_id: d.deal.id, deal_reference: d.deal.reference, milestone_id: null, visibility: 'counterparty', checksum_sha256: HASH, document_type: 'contract' });
      const onMilestone = await add(w.h.operator, body({ milestone_id: m2!.id, title: 'Surat jalan', document_type: 'shipping' }));
      expect(onMilestone.status, JSON.stringify(onMilestone.body)).to.equal(201);
      expect(onMilestone.body.data).to.deep.include({ deal_id: d.deal.id, deal_reference: d.deal.reference, milestone_id: m2!.id, milestone_title: m2!.title });
      const both = await add(w.h.operator, body({ deal_id: d.deal.id, milestone_id: m1!.id }));
      expect(both.status).to.equal(201);
      expect(both.body.data.milestone_id).to.equal(m1!.id);
      // The milestone of another deal of the same workspace.
      const other = await activeDeal(client, w);
      expectError(await add(w.h.operator, body({ deal_id: other.deal.id, milestone_id: m1!.id })), 400, 'INVALID_BODY', 'milestone_id');
      const events = (await feedRows(w.workspace.id, d.deal.id)).filter((e) => e.event === 'document.added');
      expect(events.map((e) => e.entity_id)).to.deep.equal([onDeal.body.data.id, onMilestone.body.data.id, both.body.data.id]);
      expect(events[0]).to.include({ deal_reference: d.deal.reference, livemode: false });
      expect(events[1]!.summary).to.include(`milestone 2 of deal ${String(d.deal.reference)}`);
      // The deal answer shows the milestone's documents.
      const detail = await client.get(`${DEALS}/${d.deal.id}`).set(w.h.viewer);
      expect((detail.body.data.milestones[1].documents as { id: string }[]).map((x) => x.id)).to.deep.equal([onMilestone.body.data.id]);
    });

    it("the caller's own upload, as upload_id, as the signed url and as the path: recorded, bound, the upload's sha256 taken, the link signed for each reader", async () => {
      const { w, d } = await world();
      const me = w.users.operator;
      const uploads = [await createUploadRow(me.id), await createUploadRow(me.id), await createUploadRow(me.id, { purpose: 'chat' })];
      const forms = [uploads[0]!.stored_name, serializeUpload(uploads[1]!, me.id).url, `/v1/upload/files/${uploads[2]!.stored_name}`];
      const ids: string[] = [];
      for (const [i, form] of forms.entries()) {
        const res = await add(w.h.operator, body({ file_url: form, title: `Foto ${i}` }));
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        const up = uploads[i]!;
        const link = new URL(res.body.data.file_url as string);
        expect(`${link.origin}${link.pathname}`).to.equal(filePath(up.stored_name));
        expect(link.searchParams.get('u')).to.equal(me.id);
        expect(res.body.data.checksum_sha256).to.equal(up.sha256);
        const row = await db('deal_documents').where({ id: res.body.data.id }).first();
        expect(row).to.include({ upload_id: up.id, file_url: filePath(up.stored_name), checksum_sha256: up.sha256 });
        expect(await db('uploads').where({ id: up.id }).first()).to.include({ bound_kind: 'deal_document', bound_id: res.body.data.id });
        ids.push(res.body.data.id as string);
      }
      // A checksum in the body is kept.
      const withHash = await add(w.h.operator, body({ file_url: (await createUploadRow(me.id)).stored_name, checksum_sha256: HASH }));
      expect(withHash.body.data.checksum_sha256).to.equal(HASH);
      // A viewer's list gets links signed for the viewer, and the file route serves them to the viewer.
      const listed = await list(w.h.viewer);
      const viewed = (listed.body.data as { id: string; file_url: string }[]).find((x) => x.id === ids[0])!;
      expect(new URL(viewed.file_url).searchParams.get('u')).to.equal(w.users.viewer.id);
      // The deal answer's milestone documents too: a link signed for whoever reads the deal.
      const onMilestone = await add(w.h.operator, body({ file_url: (await createUploadRow(me.id)).stored_name, milestone_id: d.milestones[0]!.id }));
      expect(onMilestone.status, JSON.stringify(onMilestone.body)).to.equal(201);
      const detail = await client.get(`${DEALS}/${d.deal.id}`).set(w.h.viewer);
      const doc = (detail.body.data.milestones[0].documents as { id: string; file_url: string }[]).find((x) => x.id === onMilestone.body.data.id)!;
      expect(new URL(doc.file_url).searchParams.get('u')).to.equal(w.users.viewer.id);
      expect(new URL(doc.file_url).searchParams.get('sig')).to.be.a('string');
    });

    it('the body rules: 400 INVALID_BODY naming the field, and nothing saved', async () => {
      const { w } = await world();
      const own = await createUploadRow(w.users.operator.id, { purpose: 'kyc' });
      const cases: [object, string][] = [
        [{ document_type: 'invoice', file_url: 'https://x.example.com/a.pdf' }, 'title'],
        [body({ title: 'a' }), 'title'],
        [body({ title: 'a'.repeat(181) }), 'title'],
        [body({ document_type: undefined }), 'document_type'],
        [body({ document_type: 'receipt' }), 'document_type'],
        [body({ file_url: undefined }), 'file_url'],
        [body({ file_url: 'http://files.example.com/a.pdf' }), 'file_url'],
        [body({ file_url: 'javascript:alert(1)' }), 'file_url'],
        [body({ file_url: 'data:text/html;base64,PHNjcmlwdD4=' }), 'file_url'],
        [body({ file_url: 'ftp://files.example.com/a.pdf' }), 'file_url'],
        [body({ file_url: 'files.example.com/a.pdf' }), 'file_url'],
        [body({ file_url: 'https://user:pw@files.example.com/a.pdf' }), 'file_url'],
        [body({ file_url: `https://files.example.com/${'a'.repeat(1000)}` }), 'file_url'],
        [body({ file_url: `${config.publicBaseUrl}/v1/enterprise/deals` }), 'file_url'],
        [body({ file_url: '/v1/upload/files/not-a-name.exe' }), 'file_url'],
        [body({ file_url: own.stored_name }), 'file_url'],
        [body({ checksum_sha256: 'A'.repeat(64) }), 'checksum_sha256'],
        [body({ checksum_sha256: 'a'.repeat(63) }), 'checksum_sha256'],
        [body({ deal_id: 'nope' }), 'deal_id'],
        [body({ milestone_id: '123' }), 'milestone_id'],
        [body({ visibility: 'public' }), 'visibility'],
        [body({ uploaded_by: w.owner.id }), 'uploaded_by'],
      ];
      for (const [b, field] of cases) expectError(await add(w.h.operator, b), 400, 'INVALID_BODY', field);
      // The longest title and URL are taken.
      expect((await add(w.h.operator, body({ title: 't'.repeat(180), file_url: `https://f.example.com/${'a'.repeat(1000 - 'https://f.example.com/'.length)}` }))).status).to.equal(201);
      expect(await countRows('deal_documents', { workspace_id: w.workspace.id })).to.equal(1);
      expect(await db('uploads').where({ id: own.id }).first()).to.include({ bound_at: null });
    });

    it('400 FILE_NOT_OWNED: an upload of someone else, one bound to an escrow, a chat or another document, or none at all', async () => {
      const { w } = await world();
      const me = w.users.operator;
      const theirs = await createUploadRow(w.users.finance.id);
      const escrowBound = await createUploadRow(me.id, { bound: { kind: 'escrow', id: randomUUID() } });
      const chatBound = await createUploadRow(me.id, { purpose: 'chat', bound: { kind: 'chat', id: randomUUID() } });
      const used = await createUploadRow(me.id);
      expect((await add(w.h.operator, body({ file_url: used.stored_name }))).status).to.equal(201);
      const before = await db('uploads').orderBy('id');
      for (const ref of [theirs.stored_name, serializeUpload(theirs, w.users.finance.id).url, escrowBound.stored_name, chatBound.stored_name, used.stored_name, `${randomUUID()}.pdf`]) {
        const res = await add(w.h.operator, body({ file_url: ref }));
        expectError(res, 400, 'FILE_NOT_OWNED');
      }
      expect(await db('uploads').orderBy('id')).to.deep.equal(before);
      expect(await countRows('deal_documents', { workspace_id: w.workspace.id })).to.equal(1);
    });

    it('404 NOT_FOUND for a deal or milestone of another workspace, or none', async () => {
      const a = await world();
      const b = await world();
      const before = await countRows('workspace_events', { workspace_id: a.w.workspace.id });
      for (const extra of [{ deal_id: b.d.deal.id }, { milestone_id: b.d.milestones[0]!.id }, { deal_id: randomUUID() }, { milestone_id: randomUUID() }, { deal_id: a.d.deal.id, milestone_id: b.d.milestones[0]!.id }]) {
        expectError(await add(a.w.h.operator, body(extra)), 404, 'NOT_FOUND');
      }
      expect(await countRows('deal_documents', {})).to.equal(0);
      expect(await countRows('workspace_events', { workspace_id: a.w.workspace.id })).to.equal(before);
    });

    it('Idempotency-Key: the same body replays the first answer and saves once', async () => {
      const { w } = await world();
      const keyed = (b: object) => client.post(DOCUMENTS).set(w.h.operator).set('Idempotency-Key', KEY).send(b);
      const first = await keyed(body());
      expect(first.status).to.equal(201);
      const again = await keyed(body());
      expect(again.status).to.equal(201);
      expect(again.headers['idempotent-replay']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expectError(await keyed(body({ title: 'Lain' })), 422, 'IDEMPOTENCY_KEY_CONFLICT');
      expect(await countRows('deal_documents', { workspace_id: w.workspace.id })).to.equal(1);
    });

    it('two adds of one upload at once: one document, the other 400 FILE_NOT_OWNED', async () => {
      const { w } = await world();
      const up = await createUploadRow(w.users.operator.id);
      const answers = await Promise.all([add(w.h.operator, body({ file_url: up.stored_name })), add(w.h.operator, body({ file_url: up.stored_name, title: 'Kedua' }))]);
      expect(answers.map((r) => r.status).sort()).to.deep.equal([201, 400]);
      expect(answers.find((r) => r.status === 400)!.body.error.code).to.equal('FILE_NOT_OWNED');
      expect(await countRows('deal_documents', { workspace_id: w.workspace.id })).to.equal(1);
    });
  });

  describe('list', () => {
    it('newest first, paginated; filters by deal, milestone and type; never another workspace', async () => {
      const { w, d } = await world();
      const other = await world();
      await insertDocument(other.w.workspace.id, other.w.owner.id, { dealId: other.d.deal.id, title: 'B secret' });
      const start = clock.nowMs();
      const at = (i: number) => new Date(start + i * 1000);
      const m1 = d.milestones[0]!.id;
      const ids = [
        await insertDocument(w.workspace.id, w.owner.id, { createdAt: at(0), type: 'contract' }),
        await insertDocument(w.workspace.id, w.owner.id, { createdAt: at(1), dealId: d.deal.id }),
        await insertDocument(w.workspace.id, w.owner.id, { createdAt: at(2), dealId: d.deal.id, milestoneId: m1, type: 'shipping' }),
        await insertDocument(w.workspace.id, w.owner.id, { createdAt: at(3), dealId: d.deal.id, milestoneId: m1 }),
      ];
      const all = await list(w.h.viewer);
      expect(all.status).to.equal(200);
      expect(all.headers['cache-control']).to.equal('private, no-store');
      expect((all.body.data as { id: string }[]).map((x) => x.id)).to.deep.equal([...ids].reverse());
      expect(all.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 4, total_pages: 1 });
      expect(all.body.data[0].uploaded_by).to.deep.equal({ id: w.owner.id, name: w.owner.full_name });
      expect(JSON.stringify(all.body)).to.not.include('B secret');
      const ofIds = async (q: string) => ((await list(w.h.viewer, q)).body.data as { id: string }[]).map((x) => x.id);
      expect(await ofIds(`?deal_id=${d.deal.id}`)).to.deep.equal([ids[3], ids[2], ids[1]]);
      expect(await ofIds(`?milestone_id=${m1}`)).to.deep.equal([ids[3], ids[2]]);
      expect(await ofIds('?document_type=shipping')).to.deep.equal([ids[2]]);
      expect(await ofIds(`?deal_id=${d.deal.id}&document_type=invoice`)).to.deep.equal([ids[3], ids[1]]);
      expect(await ofIds(`?deal_id=${other.d.deal.id}`)).to.deep.equal([]);
      const p2 = await list(w.h.viewer, '?page=2&limit=3');
      expect((p2.body.data as { id: string }[]).map((x) => x.id)).to.deep.equal([ids[0]]);
      expect(p2.body.pagination).to.deep.equal({ page: 2, limit: 3, total: 4, total_pages: 2 });
      for (const q of ['?deal_id=nope', '?milestone_id=123', '?document_type=receipt', '?limit=51', '?limit=0', '?page=0']) expectError(await list(w.h.viewer, q), 400, 'INVALID_QUERY');
    });

    it('a read key reads (as a viewer); nobody outside the workspace does', async () => {
      const { w } = await world();
      await insertDocument(w.workspace.id, w.owner.id);
      const key = await workspaceKey(w.workspace.id, { member: w.ownerMember, user: w.owner }, ['read']);
      const res = await list(headersOf({ kind: 'workspace_key', key: key.key }));
      expect(res.status).to.equal(200);
      expect(res.body.data).to.have.length(1);
      expect((await client.get(DOCUMENTS)).status).to.equal(401);
    });
  });

  describe('delete', () => {
    it('{ id, deleted: true }; the row gone, its upload unbound (then purged), document.deleted; again 404', async () => {
      const { w, d } = await world();
      const up = await createUploadRow(w.users.operator.id);
      const made = await add(w.h.operator, body({ deal_id: d.deal.id, file_url: up.stored_name }));
      const id = made.body.data.id as string;
      const kept = await createUploadRow(w.users.operator.id);
      expect((await add(w.h.operator, body({ file_url: kept.stored_name }))).status).to.equal(201);
      const res = await del(w.h.operator, id);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data).to.deep.equal({ id, deleted: true });
      expect(await countRows('deal_documents', { id })).to.equal(0);
      expect(await db('uploads').where({ id: up.id }).first()).to.include({ bound_kind: null, bound_id: null, bound_at: null });
      const events = (await feedRows(w.workspace.id, d.deal.id)).filter((e) => e.event === 'document.deleted');
      expect(events).to.have.length(1);
      expect(events[0]).to.include({ entity_type: 'document', entity_id: id, deal_reference: d.deal.reference, actor_id: w.users.operator.id });
      expectError(await del(w.h.operator, id), 404, 'NOT_FOUND');
      expectError(await del(w.h.operator, 'not-a-uuid'), 404, 'NOT_FOUND');
      // A workspace-level document: the workspace feed.
      const loose = await insertDocument(w.workspace.id, w.owner.id);
      expect((await del(w.h.operator, loose)).status).to.equal(200);
      expect((await feedRows(w.workspace.id)).filter((e) => e.event === 'document.deleted' && e.entity_id === loose)[0]).to.include({ deal_id: null });
      // A day later the purge of unbound uploads takes the released upload; the one a document holds stays.
      clock.advance(25 * 3600_000);
      await purgeUnbound();
      expect(await countRows('uploads', { id: up.id })).to.equal(0);
      expect(await countRows('uploads', { id: kept.id })).to.equal(1);
    });

    it("404 NOT_FOUND for another workspace's document, which stays", async () => {
      const a = await world();
      const b = await world();
      const bDoc = await insertDocument(b.w.workspace.id, b.w.owner.id, { dealId: b.d.deal.id });
      expectError(await del(a.w.h.owner, bDoc), 404, 'NOT_FOUND');
      expect(await countRows('deal_documents', { id: bDoc })).to.equal(1);
      expect(await countRows('workspace_events', { workspace_id: b.w.workspace.id, event: 'document.deleted' })).to.equal(0);
    });

    it('409 LOCKED for evidence of an approved or released milestone (attached or named); evidence of a funded or submitted milestone goes', async () => {
      const { w, d } = await world();
      const [m1, m2] = d.milestones;
      await fundVia(client, w.h.finance, d.deal.id, m1!.id);
      await fundVia(client, w.h.finance, d.deal.id, m2!.id);
      const attached1 = await insertDocument(w.workspace.id, w.owner.id, { dealId: d.deal.id, milestoneId: m1!.id });
      const named1 = await insertDocument(w.workspace.id, w.owner.id, { dealId: d.deal.id });
      const attached2 = await insertDocument(w.workspace.id, w.owner.id, { dealId: d.deal.id, milestoneId: m2!.id });
      const onDeal = await insertDocument(w.workspace.id, w.owner.id, { dealId: d.deal.id });
      // Evidence of a funded milestone can be deleted.
      const fundedDoc = await insertDocument(w.workspace.id, w.owner.id, { dealId: d.deal.id, milestoneId: m1!.id });
      expect((await del(w.h.operator, fundedDoc)).status).to.equal(200);
      const sub = await evidence(w.h.operator, d.deal.id, m1!.id, { summary: 'Barang tiba', document_ids: [named1] });
      expect(sub.status, JSON.stringify(sub.body)).to.equal(200);
      // Submitted (not yet decided): still deletable.
      const submittedDoc = await insertDocument(w.workspace.id, w.owner.id, { dealId: d.deal.id, milestoneId: m1!.id });
      expect((await del(w.h.operator, submittedDoc)).status).to.equal(200);
      for (const status of ['approved', 'released'] as const) {
        await setMilestoneStatus(m1!.id, status);
        expectError(await del(w.h.operator, attached1), 409, 'LOCKED');
        expectError(await del(w.h.operator, named1), 409, 'LOCKED');
      }
      await setMilestoneStatus(m2!.id, 'approved');
      expectError(await del(w.h.operator, attached2), 409, 'LOCKED');
      // A document of the deal that no decided milestone holds goes.
      expect((await del(w.h.operator, onDeal)).status).to.equal(200);
      expect(await countRows('deal_documents', { deal_id: d.deal.id })).to.equal(3);
      expect(await countRows('workspace_events', { workspace_id: w.workspace.id, event: 'document.deleted' })).to.equal(3);
    });

    it('a delete racing an approval waits for the deal row and then answers 409 LOCKED', async () => {
      const { w, d } = await world();
      const mid = d.milestones[0]!.id;
      await fundVia(client, w.h.finance, d.deal.id, mid);
      const doc = await insertDocument(w.workspace.id, w.owner.id, { dealId: d.deal.id, milestoneId: mid });
      const trx = await db.transaction();
      let answered = false;
      try {
        // The approval: the deal row locked, the milestone approved, not yet committed.
        await trx('deals').where({ id: d.deal.id }).forUpdate().first();
        await trx('deal_milestones').where({ id: mid }).update({ status: 'approved' });
        const pending = del(w.h.operator, doc).then((r) => {
          answered = true;
          return r;
        });
        await new Promise((r) => setTimeout(r, 300));
        expect(answered, 'the delete waits for the deal row').to.equal(false);
        await trx.commit();
        expectError(await pending, 409, 'LOCKED');
      } finally {
        if (!trx.isCompleted()) await trx.rollback();
      }
      expect(await countRows('deal_documents', { id: doc })).to.equal(1);
    });

    it('two deletes at once: one answers { deleted: true }, the other 404; one event', async () => {
      const { w } = await world();
      const doc = await insertDocument(w.workspace.id, w.owner.id);
      const answers = await Promise.all([del(w.h.operator, doc), del(w.h.owner, doc)]);
      expect(answers.map((r) => r.status).sort()).to.deep.equal([200, 404]);
      expect(await countRows('workspace_events', { workspace_id: w.workspace.id, event: 'document.deleted' })).to.equal(1);
    });
  });

  describe('access', () => {
    it('viewers 403 FORBIDDEN on add and delete; read keys 403 SCOPE_REQUIRED; a read+write key adds with its creator as uploader', async () => {
      const { w } = await world();
      const doc = await insertDocument(w.workspace.id, w.owner.id);
      expectError(await add(w.h.viewer, body()), 403, 'FORBIDDEN');
      expectError(await del(w.h.viewer, doc), 403, 'FORBIDDEN');
      const read = headersOf({ kind: 'workspace_key', key: (await workspaceKey(w.workspace.id, { member: w.ownerMember, user: w.owner }, ['read'])).key });
      expectError(await add(read, body()), 403, 'SCOPE_REQUIRED');
      expectError(await del(read, doc), 403, 'SCOPE_REQUIRED');
      expect(await countRows('deal_documents', { workspace_id: w.workspace.id })).to.equal(1);
      const write = headersOf({ kind: 'workspace_key', key: (await workspaceKey(w.workspace.id, { member: w.ownerMember, user: w.owner }, ['read', 'write'])).key });
      const made = await add(write, body());
      expect(made.status, JSON.stringify(made.body)).to.equal(201);
      expect(made.body.data.uploaded_by).to.equal(w.owner.id);
      expect((await del(write, doc)).status).to.equal(200);
    });
  });

  describe('submit-evidence document_ids and evidenceOf', () => {
    it("takes documents of this deal, stores them, shows them on the milestone; refuses another deal's, another workspace's, a loose one or none", async () => {
      const { w, d } = await world();
      const b = await world();
      const [m1, m2] = d.milestones;
      await fundVia(client, w.h.finance, d.deal.id, m1!.id);
      const otherDeal = await activeDeal(client, w);
      const t0 = clock.nowMs();
      const mine = await insertDocument(w.workspace.id, w.owner.id, { dealId: d.deal.id, createdAt: new Date(t0) });
      const onM2 = await insertDocument(w.workspace.id, w.owner.id, { dealId: d.deal.id, milestoneId: m2!.id, createdAt: new Date(t0 + 1000) });
      const attached = await insertDocument(w.workspace.id, w.owner.id, { dealId: d.deal.id, milestoneId: m1!.id, createdAt: new Date(t0 + 2000) });
      const foreign = [
        await insertDocument(w.workspace.id, w.owner.id, { dealId: otherDeal.deal.id }),
        await insertDocument(b.w.workspace.id, b.w.owner.id, { dealId: b.d.deal.id }),
        await insertDocument(w.workspace.id, w.owner.id),
        randomUUID(),
      ];
      for (const id of foreign) {
        expectError(await evidence(w.h.operator, d.deal.id, m1!.id, { summary: 'Bukti', document_ids: [mine, id] }), 400, 'INVALID_BODY', 'document_ids');
      }
      expect((await db('deal_milestones').where({ id: m1!.id }).first()).status).to.equal('funded');
      const res = await evidence(w.h.operator, d.deal.id, m1!.id, { summary: 'Bukti', document_ids: [mine, onM2] });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const row = await db('deal_milestones').where({ id: m1!.id }).first();
      expect(row.evidence_document_ids).to.deep.equal([mine, onM2]);
      expect(row.status).to.equal('evidence_submitted');
      // The milestone answer: attached and named documents, newest first; m2 keeps its own.
      const ms = res.body.data.milestones as { documents: { id: string }[] }[];
      expect(ms[0]!.documents.map((x) => x.id)).to.deep.equal([attached, onM2, mine]);
      expect(ms[1]!.documents.map((x) => x.id)).to.deep.equal([onM2]);
      // evidenceOf (the approvals detail reads it).
      const ev = await evidenceOf(db, { id: m1!.id, evidence_document_ids: row.evidence_document_ids as string[] });
      expect(ev.map((x) => x.id)).to.deep.equal([attached, onM2, mine]);
      expect(ev[0]).to.include({ deal_reference: d.deal.reference, milestone_title: m1!.title, uploaded_by_name: w.owner.full_name });
      expect((await evidenceOf(db, { id: m2!.id, evidence_document_ids: [] })).map((x) => x.id)).to.deep.equal([onM2]);
      // No ids: an empty array is stored.
      await setMilestoneStatus(m1!.id, 'revision_requested');
      expect((await evidence(w.h.operator, d.deal.id, m1!.id, { summary: 'Ulang' })).status).to.equal(200);
      expect((await db('deal_milestones').where({ id: m1!.id }).first()).evidence_document_ids).to.deep.equal([]);
    });
  });
});
