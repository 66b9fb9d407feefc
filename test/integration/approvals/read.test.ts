/**
 * GET /v1/enterprise/approvals and GET /v1/enterprise/approvals/:milestoneId (enterprise
 * spec 2 Approval item and detail, 4.6): the open queue (evidence_submitted only, oldest
 * evidence first, paginated), the decided list (one item per decided round, newest
 * decision first, decisions of the last 30 days by the clock), status other than decided
 * 400 INVALID_QUERY, the item's exact fields (approvals_done and my_decision of the round,
 * submitted_by), the detail's shapes (destination null without a verified payout
 * instruction, the latest verified one otherwise, masked), events, impact and evidence, and
 * other workspaces' milestones 404 NOT_FOUND.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { headersOf, sessionOf, workspaceKey } from '../../factories/enterprise.js';
import { activeDeal, fundVia, type Headers } from '../../factories/deals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { uploadAddress } from '../../../shared/documents/files.js';
import { APPROVALS, THRESHOLD, approvalWorld, decideOk, expectError, submitVia, submittedDeal, type ApprovalWorld, type Detail, type Item } from './support.js';

const DAY = 86_400_000;

/** Moves the clock and signs everybody in again (sessions end after a while without use). */
async function later(w: ApprovalWorld, ms: number): Promise<void> {
  clock.advance(ms);
  const again = async (user: ApprovalWorld['owner']) => headersOf(await sessionOf(user));
  w.h = { owner: await again(w.owner), operator: await again(w.users.operator), finance: await again(w.users.finance), viewer: await again(w.users.viewer) };
  w.finance2 = { user: w.finance2.user, h: await again(w.finance2.user) };
}
const pinNow = () => clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));

const ITEM_KEYS = [
  'amount',
  'approvals_done',
  'approvals_required',
  'counterparty_name',
  'currency',
  'deal_id',
  'deal_reference',
  'deal_title',
  'due_at',
  'evidence_submitted_at',
  'evidence_summary',
  'milestone_id',
  'milestone_title',
  'my_decision',
  'risk_tier',
  'status',
  'submitted_by',
];

/** A payout instruction of the counterparty put straight into the table (staff verification signs it; here a dummy signature). */
async function instruction(w: ApprovalWorld, o: { label: string; last4: string; verifiedAt: Date | null; deleted?: boolean; counterpartyId?: string }): Promise<void> {
  const now = clock.now();
  await db('payout_instructions').insert({
    workspace_id: w.workspace.id,
    counterparty_id: o.counterpartyId ?? w.cpId,
    label: o.label,
    bank_name: 'Bank Central Asia',
    account_holder: 'PT Pemasok Jaya',
    account_number_sealed: 'sealed-dummy',
    account_number_last4: o.last4,
    status: o.verifiedAt ? 'verified' : 'pending_verification',
    verified_at: o.verifiedAt,
    verification_signature: o.verifiedAt ? 'dummy-signature' : null,
    created_by: w.owner.id,
    created_at: now,
    updated_at: now,
    deleted_at: o.deleted ? now : null,
    pending_since: now,
  });
}

describe('enterprise approvals: queue, decided list and detail', () => {
  const client = api();
  afterEach(() => clock.reset());

  const list = (h: Headers, query: Record<string, string | number> = {}) => client.get(APPROVALS).query(query).set(h);
  const detail = (h: Headers, id: string) => client.get(`${APPROVALS}/${id}`).set(h);

  describe('the open queue', () => {
    it('milestones in evidence_submitted only, oldest evidence first, paginated; the item has exactly the spec fields', async () => {
      pinNow();
      const start = clock.now();
      const w = await approvalWorld(client);
      const d = await activeDeal(client, w, [1_000_000, THRESHOLD, 3_000_000, 4_000_000], { title: 'Pengadaan server' });
      const [m1, m2, m3, m4] = d.milestones;
      for (const m of d.milestones) await fundVia(client, w.h.finance, d.deal.id, m.id);
      // Evidence in the order m3, m1, m2 (a minute apart); m4 stays funded.
      for (const m of [m3!, m1!, m2!]) {
        clock.advance(60_000);
        await submitVia(client, w.h.operator, d.deal.id, m.id, `Bukti ${m.title as string}`);
      }
      const res = await list(w.h.viewer);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      expect(res.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 3, total_pages: 1 });
      const items = res.body.data as Item[];
      expect(items.map((i) => i.milestone_id)).to.deep.equal([m3!.id, m1!.id, m2!.id]);
      expect(Object.keys(items[0]!).sort()).to.deep.equal(ITEM_KEYS);
      expect(items[0]).to.deep.equal({
        milestone_id: m3!.id,
        deal_id: d.deal.id,
        deal_reference: d.deal.reference,
        deal_title: 'Pengadaan server',
        milestone_title: 'Tahap 3',
        status: 'evidence_submitted',
        amount: 3_000_000,
        currency: 'IDR',
        counterparty_name: 'PT Pemasok Jaya',
        risk_tier: w.workspace.risk_tier,
        evidence_summary: 'Bukti Tahap 3',
        evidence_submitted_at: new Date(start.getTime() + 60_000).toISOString(),
        due_at: null,
        approvals_required: 2,
        approvals_done: 0,
        my_decision: null,
        submitted_by: { id: w.users.operator.id, name: w.users.operator.full_name },
      });
      expect(items.map((i) => i.approvals_required)).to.deep.equal([2, 1, 2]);
      expect(items.map((i) => i.milestone_id)).to.not.include(m4!.id);
      // Pages.
      const p2 = await list(w.h.viewer, { page: 2, limit: 2 });
      expect(p2.body.pagination).to.deep.equal({ page: 2, limit: 2, total: 3, total_pages: 2 });
      expect((p2.body.data as Item[]).map((i) => i.milestone_id)).to.deep.equal([m2!.id]);
      // A one-approval milestone approved leaves the queue; a four-eyes one half approved stays, with approvals_done 1 and my_decision for its approver only.
      await decideOk(client, w.h.finance, m1!.id);
      await decideOk(client, w.h.finance, m3!.id);
      const mine = (await list(w.h.finance)).body.data as Item[];
      expect(mine.map((i) => [i.milestone_id, i.approvals_done, i.my_decision])).to.deep.equal([
        [m3!.id, 1, 'approve'],
        [m2!.id, 0, null],
      ]);
      const theirs = (await list(w.h.owner)).body.data as Item[];
      expect(theirs.map((i) => [i.approvals_done, i.my_decision])).to.deep.equal([
        [1, null],
        [0, null],
      ]);
    });

    it("only the workspace's own milestones; a read key lists too", async () => {
      const a = await approvalWorld(client, 'A');
      const b = await approvalWorld(client, 'B');
      await submittedDeal(client, b, [1_000_000]);
      const own = await submittedDeal(client, a, [1_000_000]);
      const res = await list(a.h.owner);
      expect((res.body.data as Item[]).map((i) => i.milestone_id)).to.deep.equal([own.milestones[0]!.id]);
      const key = await workspaceKey(a.workspace.id, { member: a.ownerMember, user: a.owner }, ['read']);
      const byKey = await list(headersOf({ kind: 'workspace_key', key: key.key }));
      expect(byKey.status).to.equal(200);
      expect(byKey.body.data).to.deep.equal(res.body.data);
    });

    it('the query: status other than decided, limit outside 1..50, page below 1: 400 INVALID_QUERY', async () => {
      const w = await approvalWorld(client);
      for (const q of [{ status: 'open' }, { status: 'pending' }, { status: '' }, { limit: 0 }, { limit: 51 }, { page: 0 }, { other: 1 }] as Record<string, string | number>[]) {
        expectError(await list(w.h.viewer, q), 400, 'INVALID_QUERY', JSON.stringify(q));
      }
      expect((await list(w.h.viewer, { limit: 50 })).status).to.equal(200);
    });
  });

  describe('the decided list (status=decided)', () => {
    it('one item per decided round, newest decision first, by anyone in the workspace; 30 days back by the clock', async () => {
      pinNow();
      const w = await approvalWorld(client);
      const d = await submittedDeal(client, w, [1_000_000, THRESHOLD, 1_500_000]);
      const [m1, m2, m3] = d.milestones;
      // Day 0: m1 approved by finance. Day 10: m2 first approval by finance2; m3 sent back by the owner. Day 20: m3 re-submitted and approved by finance.
      await decideOk(client, w.h.finance, m1!.id);
      await later(w, 10 * DAY);
      await decideOk(client, w.finance2.h, m2!.id);
      await later(w, 1000);
      await decideOk(client, w.h.owner, m3!.id, { decision: 'revision' });
      await later(w, 10 * DAY);
      await submitVia(client, w.h.operator, d.deal.id, m3!.id, 'Bukti baru');
      await decideOk(client, w.h.finance, m3!.id);

      const res = await list(w.h.finance, { status: 'decided' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 4, total_pages: 1 });
      const items = res.body.data as Item[];
      expect(Object.keys(items[0]!).sort()).to.deep.equal(ITEM_KEYS);
      // Each item is a round: its approvals and the caller's decision in that round; the status is the milestone's now.
      expect(items.map((i) => [i.milestone_id, i.status, i.approvals_done, i.my_decision])).to.deep.equal([
        [m3!.id, 'approved', 1, 'approve'], // round 2
        [m3!.id, 'approved', 0, null], // round 1 (the owner's revision request)
        [m2!.id, 'evidence_submitted', 1, null],
        [m1!.id, 'approved', 1, 'approve'],
      ]);
      const owners = (await list(w.h.owner, { status: 'decided' })).body.data as Item[];
      expect(owners.map((i) => i.my_decision)).to.deep.equal([null, 'revision', null, null]);
      // Pages.
      const p2 = await list(w.h.viewer, { status: 'decided', page: 2, limit: 3 });
      expect(p2.body.pagination).to.deep.equal({ page: 2, limit: 3, total: 4, total_pages: 2 });
      expect((p2.body.data as Item[]).map((i) => i.milestone_id)).to.deep.equal([m1!.id]);

      // Exactly 30 days after the first decision it is still in; a second later it is out; and so on for the later ones.
      const ids = async () => ((await list(w.h.viewer, { status: 'decided' })).body.data as Item[]).map((i) => i.milestone_id);
      await later(w, 10 * DAY - 1000); // day 30
      expect(await ids()).to.deep.equal([m3!.id, m3!.id, m2!.id, m1!.id]);
      await later(w, 1000);
      const after = (await list(w.h.viewer, { status: 'decided' })).body;
      expect((after.data as Item[]).map((i) => i.milestone_id)).to.deep.equal([m3!.id, m3!.id, m2!.id]);
      expect(after.pagination.total).to.equal(3);
      await later(w, 10 * DAY); // day 40 + 1 s: m2's approval (day 10) is out, m3's revision request (day 10 + 1 s) just in
      expect(await ids()).to.deep.equal([m3!.id, m3!.id]);
      await later(w, 1000);
      expect(await ids()).to.deep.equal([m3!.id]);
      await later(w, 10 * DAY);
      expect((await list(w.h.viewer, { status: 'decided' })).body).to.deep.include({ data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } });
    });

    it("another workspace's decisions never show", async () => {
      const a = await approvalWorld(client, 'A');
      const b = await approvalWorld(client, 'B');
      const d = await submittedDeal(client, b, [1_000_000]);
      await decideOk(client, b.h.finance, d.milestones[0]!.id);
      expect((await list(a.h.owner, { status: 'decided' })).body.data).to.deep.equal([]);
      expect((await list(b.h.viewer, { status: 'decided' })).body.data).to.have.length(1);
    });
  });

  describe('the detail', () => {
    it('the shapes: item, proposed (no destination without a verified instruction), how_we_got_here, impact, decision, evidence', async () => {
      pinNow();
      const w = await approvalWorld(client);
      const d = await activeDeal(client, w, [1_000_000, THRESHOLD, 3_000_000], { fee_allocation: 'seller' });
      const [m1, m2, m3] = d.milestones;
      for (const m of d.milestones) await fundVia(client, w.h.finance, d.deal.id, m.id);
      await submitVia(client, w.h.operator, d.deal.id, m1!.id);
      await decideOk(client, w.h.finance, m1!.id);
      // m1 released (put straight into the table: release is another route), m3 cancelled.
      await db('deal_milestones').where({ id: m1!.id }).update({ status: 'released', released_at: clock.now() });
      await db('deal_milestones').where({ id: m3!.id }).update({ status: 'cancelled' });
      await submitVia(client, w.h.operator, d.deal.id, m2!.id, 'Surat jalan terlampir');
      // Evidence: a document attached to m2, one of the deal only (not evidence), one of m1.
      const doc = async (title: string, milestoneId: string | null, fileUrl = 'https://files.example.com/x.pdf') => {
        const [row] = await db('deal_documents')
          .insert({ workspace_id: w.workspace.id, deal_id: d.deal.id, milestone_id: milestoneId, document_type: 'shipping', title, file_url: fileUrl, uploaded_by: w.users.operator.id, created_at: clock.now() })
          .returning<{ id: string }[]>('id');
        return row!.id;
      };
      const storedName = `${randomUUID()}.pdf`;
      const storedId = await doc('Foto barang', m2!.id, uploadAddress(storedName)); // kept unsigned, as documents keep uploads
      clock.advance(1000);
      const evidenceId = await doc('Surat jalan', m2!.id);
      await doc('Kontrak', null);
      await doc('Faktur tahap 1', m1!.id);

      const res = await detail(w.h.viewer, m2!.id);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const g = res.body.data as Detail;
      expect(Object.keys(g).sort()).to.deep.equal(['decision', 'evidence', 'how_we_got_here', 'impact', 'item', 'proposed']);
      expect(g.item).to.deep.include({ milestone_id: m2!.id, status: 'evidence_submitted', amount: THRESHOLD, approvals_required: 2, approvals_done: 0, my_decision: null });
      const row = (await db('deal_milestones').where({ id: m2!.id }).first()) as { payout_amount: string; funding_amount: string };
      expect(Number(row.payout_amount)).to.be.below(THRESHOLD); // the seller pays the fee
      // Progress over the live milestones (m1 1,000,000 released of 3,000,000): 33%, and 100% once m2 is released too.
      expect(g.proposed).to.deep.equal({ amount: Number(row.payout_amount), currency: 'IDR', destination: null, deal_progress_pct: 33 });
      expect(g.impact).to.deep.equal({ counterparty_paid: Number(row.payout_amount), money_moved: Number(row.funding_amount), milestones_remaining: 0, deal_progress_after_pct: 100 });
      expect(g.decision).to.deep.include({ risk_tier: w.workspace.risk_tier, approvals_required: 2, reversibility: 'final_once_released', expires_at: null });
      expect(g.decision.approvals.map((s) => [s.status, s.approver])).to.deep.equal([
        ['pending', null],
        ['pending', null],
      ]);
      expect(g.evidence.map((e) => e.id)).to.deep.equal([evidenceId, storedId]);
      expect(g.evidence[0]!.file_url).to.equal('https://files.example.com/x.pdf');
      // A file stored with the service is answered as a link signed for the reader.
      const stored = new URL(g.evidence[1]!.file_url as string);
      expect(stored.pathname).to.equal(`/v1/upload/files/${storedName}`);
      expect(stored.searchParams.get('u')).to.equal(w.users.viewer.id);
      expect(stored.searchParams.get('sig')).to.match(/^[0-9a-f]{64}$/);
      expect(g.evidence[0]).to.deep.include({ title: 'Surat jalan', milestone_id: m2!.id, deal_id: d.deal.id, uploaded_by: { id: w.users.operator.id, name: w.users.operator.full_name } });
      // How we got here: this milestone's events and the deal's own, newest first; never another milestone's.
      const events = g.how_we_got_here.map((e) => e.event);
      expect(events[0]).to.equal('milestone.evidence_submitted');
      expect(events).to.include.members(['milestone.funded', 'deal.created']);
      expect(g.how_we_got_here.every((e) => e.entity_id === m2!.id || e.entity_type === 'deal')).to.equal(true);
      expect(g.how_we_got_here[0]).to.deep.include({ entity_type: 'milestone', deal_id: d.deal.id, deal_reference: d.deal.reference, actor: { id: w.users.operator.id, name: w.users.operator.full_name }, livemode: false });
      expect(Object.keys(g.how_we_got_here[0]!).sort()).to.deep.equal(
        ['actor', 'actor_label', 'amount', 'created_at', 'deal_id', 'deal_reference', 'entity_id', 'entity_type', 'event', 'id', 'livemode', 'seq', 'summary'].sort(),
      );
    });

    it('proposed.destination: the counterparty’s most recently verified instruction that is not deleted, masked', async () => {
      pinNow();
      const w = await approvalWorld(client);
      const d = await submittedDeal(client, w, [1_000_000]);
      const mid = d.milestones[0]!.id;
      const otherCp = (await client.post('/v1/enterprise/counterparties').set(w.h.owner).send({ name: 'PT Lain' })).body.data.id as string;
      const t = clock.now().getTime();
      await instruction(w, { label: 'Pending', last4: '1111', verifiedAt: null });
      await instruction(w, { label: 'Another counterparty', last4: '2222', verifiedAt: new Date(t - 1000), counterpartyId: otherCp });
      expect((await detail(w.h.viewer, mid)).body.data.proposed.destination).to.equal(null);
      await instruction(w, { label: 'Older', last4: '3333', verifiedAt: new Date(t - 5 * DAY) });
      await instruction(w, { label: 'Deleted', last4: '4444', verifiedAt: new Date(t - DAY), deleted: true });
      await instruction(w, { label: 'Newest', last4: '5555', verifiedAt: new Date(t - 2 * DAY) });
      const g = (await detail(w.h.viewer, mid)).body.data as Detail;
      expect(g.proposed.destination).to.deep.equal({ label: 'Newest', bank_name: 'Bank Central Asia', account_number_masked: '…5555' });
      expect(JSON.stringify(g)).to.not.include('sealed-dummy');
    });

    it('any status: a funded milestone (no evidence) answers with submitted_by null and no approvals; a decided one shows its round', async () => {
      const w = await approvalWorld(client);
      const d = await activeDeal(client, w, [1_000_000]);
      const mid = d.milestones[0]!.id;
      const before = (await detail(w.h.viewer, mid)).body.data as Detail;
      expect(before.item).to.deep.include({ status: 'awaiting_funding', submitted_by: null, evidence_submitted_at: null, approvals_done: 0, my_decision: null });
      expect(before.decision.approvals).to.deep.equal([]);
      expect(before.impact).to.deep.include({ milestones_remaining: 0, deal_progress_after_pct: 100 });
      expect(before.proposed.deal_progress_pct).to.equal(0);
      await fundVia(client, w.h.finance, d.deal.id, mid);
      await submitVia(client, w.h.operator, d.deal.id, mid);
      await decideOk(client, w.h.finance, mid, { decision: 'reject', note: 'Tidak sesuai' });
      const after = (await detail(w.h.finance, mid)).body.data as Detail;
      expect(after.item).to.deep.include({ status: 'revision_requested', my_decision: 'reject', submitted_by: { id: w.users.operator.id, name: w.users.operator.full_name } });
      expect(after.how_we_got_here[0]).to.deep.include({ event: 'milestone.rejected', entity_id: mid });
    });

    it("another workspace's milestone, an unknown id and a malformed id: 404 NOT_FOUND", async () => {
      const a = await approvalWorld(client, 'A');
      const b = await approvalWorld(client, 'B');
      const d = await submittedDeal(client, b, [1_000_000]);
      for (const id of [d.milestones[0]!.id, randomUUID(), 'nope', '12345']) expectError(await detail(a.h.owner, id), 404, 'NOT_FOUND', id);
      expect((await detail(b.h.viewer, d.milestones[0]!.id)).status).to.equal(200);
    });
  });
});
