/**
 * Enterprise deals over HTTP (enterprise spec 2 Deal, Milestone, Deal fee; 3; 4.4; 4.5
 * rules; 5; 6; 7; 8; D7; issue 26): create (milestones, or a template with total_amount)
 * and its validation, the Deal and Milestone fields exactly, totals and status computed
 * from milestones, list (computed-status filter, q, pagination, list-item fields), get
 * (last 100 events newest first, outcome), draft edits (details, the split and milestone
 * edits re-spread with the rate and minimum taken at creation), the 20-milestone limit,
 * activation (fee frozen; terms_review on a live workspace until staff verify the
 * counterparty), cancel, four-eyes, Idempotency-Key replay, the events with their
 * livemode, and other workspaces' ids. Expected figures are worked out by hand beside
 * each case (2% with a Rp5.000 minimum unless the test changes the workspace's pricing).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { createWorkspace, headersOf, sessionOf } from '../../factories/enterprise.js';
import {
  DEALS,
  activateVia,
  activeDeal,
  counterpartyVia,
  createDealVia,
  dealBody,
  dealRow,
  dealSnapshot,
  dealWorld,
  feedRows,
  fundVia,
  milestoneRows,
  milestones,
  setMilestoneStatus,
  staffHeaders,
  statusesOf,
  type DealData,
} from '../../factories/deals.js';
import { clock } from '../../../shared/clock.js';
import { db, inTransaction } from '../../../shared/db.js';
import { appendEvent } from '../../../shared/enterprise/events.js';
import { templateMilestones } from '../../../shared/deals/templates.js';
import { createDeal } from '../../../shared/deals/service.js';
import { DEAL_STATUSES, MILESTONE_STATUSES, dealStatus, type DealStatus, type MilestoneStatus } from '../../../shared/deals/states.js';
import { seeded } from '../../helpers/seeded.js';
import { statementsOf } from '../../helpers/statements.js';

const DAY = 86_400_000;
const KEY = () => randomUUID();

const DEAL_KEYS = [
  'id',
  'reference',
  'title',
  'description',
  'external_ref',
  'status',
  'currency',
  'total_amount',
  'funded_amount',
  'released_amount',
  'cross_border',
  'owner',
  'created_at',
  'updated_at',
  'counterparty',
  'fee',
  'is_test',
];
const FEE_KEYS = [
  'rate_bp',
  'rate_percent',
  'min_fee',
  'tier',
  'volume_basis',
  'platform_fee',
  'allocation',
  'buyer_percent',
  'seller_percent',
  'buyer_fee',
  'seller_fee',
  'funding_total',
  'payout_total',
  'payer',
  'payee',
  'frozen',
];
const MILESTONE_KEYS = [
  'id',
  'sequence_no',
  'title',
  'required_evidence',
  'amount',
  'status',
  'due_at',
  'funded_at',
  'funding_method',
  'evidence_summary',
  'evidence_submitted_at',
  'approved_at',
  'released_at',
  'disputed_at',
  'dispute_reason',
  'approvals_required',
  'approvals',
  'documents',
  'disbursements',
  'buyer_fee',
  'seller_fee',
  'funding_amount',
  'payout_amount',
];
const EVENT_KEYS = ['seq', 'id', 'event', 'entity_type', 'entity_id', 'deal_id', 'deal_reference', 'actor', 'actor_label', 'amount', 'summary', 'created_at', 'livemode'];

/** Whole seconds, so timestamps compare exactly after a round trip. */
const pinNow = () => clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));

describe('enterprise deals', () => {
  const client = api();
  afterEach(() => clock.reset());

  const get = (h: Record<string, string>, id: string) => client.get(`${DEALS}/${id}`).set(h);
  const patch = (h: Record<string, string>, id: string, body: object) => client.patch(`${DEALS}/${id}`).set(h).send(body);
  const addMs = (h: Record<string, string>, id: string, body: object) => client.post(`${DEALS}/${id}/milestones`).set(h).send(body);
  const patchMs = (h: Record<string, string>, id: string, mid: string, body: object) => client.patch(`${DEALS}/${id}/milestones/${mid}`).set(h).send(body);
  const cancel = (h: Record<string, string>, id: string) => client.post(`${DEALS}/${id}/cancel`).set(h).send({});

  function expectError(res: { status: number; body: { success?: boolean; error?: { code: string }; data?: unknown } }, status: number, code: string): void {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.success).to.equal(false);
    expect(res.body.error!.code).to.equal(code);
    expect(res.body).to.not.have.property('data');
  }

  /** Makes the workspace live by its columns (what KYB approval does to them). */
  const goLive = (workspaceId: string) => db('workspaces').where({ id: workspaceId }).update({ is_sandbox: false, kyb_status: 'verified' });

  describe('create', () => {
    it('answers 201 with the Deal, Milestone and Deal fee fields exactly, computed from the milestones', async () => {
      pinNow();
      const w = await dealWorld(client);
      const created = clock.now().toISOString();
      const res = await client
        .post(DEALS)
        .set(w.h.operator)
        .send({
          title: 'Pengadaan server',
          description: 'Rak dan server untuk kantor cabang',
          external_ref: 'PO-778',
          counterparty_id: w.cpId,
          milestones: [
            { title: 'Uang muka', amount: 1_000_000, required_evidence: 'Invoice', due_offset_days: 7 },
            { title: 'Pengiriman', amount: 2_000_001 },
          ],
          fee_allocation: 'split',
          fee_buyer_percent: 37,
        });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      const d = res.body.data as DealData;
      expect(Object.keys(d).sort()).to.deep.equal(['deal', 'events', 'milestones', 'outcome']);
      expect(Object.keys(d.deal).sort()).to.deep.equal([...DEAL_KEYS].sort());
      // Total 3,000,001; fee floor(3,000,001 x 2%) = 60,000 (above the 5,000 minimum);
      // buyer floor(60,000 x 37%) = 22,200, seller (the odd rupiah side) 37,800.
      expect(d.deal).to.deep.equal({
        id: d.deal.id,
        reference: 'DL-000001',
        title: 'Pengadaan server',
        description: 'Rak dan server untuk kantor cabang',
        external_ref: 'PO-778',
        status: 'draft',
        currency: 'IDR',
        total_amount: 3_000_001,
        funded_amount: 0,
        released_amount: 0,
        cross_border: false,
        owner: { id: w.users.operator.id, name: w.users.operator.full_name },
        created_at: created,
        updated_at: created,
        counterparty: { id: w.cpId, name: 'PT Pemasok Jaya', country_code: 'ID', kyb_status: 'not_started', relationship: 'seller' },
        fee: {
          rate_bp: 200,
          rate_percent: 2,
          min_fee: 5000,
          tier: null,
          volume_basis: 0,
          platform_fee: 60_000,
          allocation: 'split',
          buyer_percent: 37,
          seller_percent: 63,
          buyer_fee: 22_200,
          seller_fee: 37_800,
          funding_total: 3_022_201,
          payout_total: 2_962_201,
          payer: 'workspace',
          payee: 'counterparty',
          frozen: false,
        },
        is_test: true,
      });
      expect(Object.keys(d.deal.fee).sort()).to.deep.equal([...FEE_KEYS].sort());
      // Per milestone: buyer floor(22,200 x 1,000,000 / 3,000,001) = 7,399, the last 22,200 - 7,399 = 14,801;
      // seller floor(37,800 x 1,000,000 / 3,000,001) = 12,599, the last 25,201.
      const blank = { funded_at: null, funding_method: null, evidence_summary: null, evidence_submitted_at: null, approved_at: null, released_at: null, disputed_at: null, dispute_reason: null };
      expect(d.milestones).to.deep.equal([
        {
          id: d.milestones[0]!.id,
          sequence_no: 1,
          title: 'Uang muka',
          required_evidence: 'Invoice',
          amount: 1_000_000,
          status: 'draft',
          due_at: new Date(Date.parse(created) + 7 * DAY).toISOString(),
          ...blank,
          approvals_required: 1,
          approvals: [],
          documents: [],
          disbursements: [],
          buyer_fee: 7399,
          seller_fee: 12_599,
          funding_amount: 1_007_399,
          payout_amount: 987_401,
        },
        {
          id: d.milestones[1]!.id,
          sequence_no: 2,
          title: 'Pengiriman',
          required_evidence: null,
          amount: 2_000_001,
          status: 'draft',
          due_at: null,
          ...blank,
          approvals_required: 1,
          approvals: [],
          documents: [],
          disbursements: [],
          buyer_fee: 14_801,
          seller_fee: 25_201,
          funding_amount: 2_014_802,
          payout_amount: 1_974_800,
        },
      ]);
      for (const m of d.milestones) expect(Object.keys(m).sort()).to.deep.equal([...MILESTONE_KEYS].sort());
      expect(d.outcome).to.deep.equal({ time_to_release_minutes: null, approvals_by_people: 0, revisions: 0 });
      expect(d.events).to.have.length(1);
      expect(Object.keys(d.events[0]!).sort()).to.deep.equal([...EVENT_KEYS].sort());
      expect(d.events[0]).to.deep.include({
        event: 'deal.created',
        entity_type: 'deal',
        entity_id: d.deal.id,
        deal_id: d.deal.id,
        deal_reference: 'DL-000001',
        actor: { id: w.users.operator.id, name: w.users.operator.full_name },
        actor_label: null,
        amount: 3_000_001,
        created_at: created,
        livemode: false,
      });
      // What GET answers is what the create answered.
      const again = await get(w.h.viewer, d.deal.id);
      expect(again.status).to.equal(200);
      expect(again.body.data).to.deep.equal(d);
      // The second deal of the workspace takes the next reference.
      expect((await createDealVia(client, w.h.operator, dealBody(w.cpId))).deal.reference).to.equal('DL-000002');
    });

    it('cross_border is true when the counterparty is in another country than the workspace', async () => {
      const w = await dealWorld(client);
      const sg = await counterpartyVia(client, w.h.owner, { name: 'Pte Supplier', country_code: 'SG' });
      const d = await createDealVia(client, w.h.operator, dealBody(sg));
      expect(d.deal).to.deep.include({ cross_border: true });
      expect(d.deal.counterparty).to.deep.include({ country_code: 'SG' });
      expect((await createDealVia(client, w.h.operator, dealBody(w.cpId))).deal).to.deep.include({ cross_border: false });
    });

    it('the split: the workspace default without either field; a percent alone means split; buyer 100, seller 0', async () => {
      const w = await dealWorld(client);
      const allocation = async (extra: Record<string, unknown>) => {
        const fee = (await createDealVia(client, w.h.operator, dealBody(w.cpId, [1_000_000, 2_000_000], extra))).deal.fee;
        return [fee.allocation, fee.buyer_percent, fee.seller_percent, fee.buyer_fee, fee.seller_fee];
      };
      // Fee of 3,000,000 at 2% = 60,000.
      expect(await allocation({})).to.deep.equal(['buyer', 100, 0, 60_000, 0]);
      expect(await allocation({ fee_allocation: 'buyer', fee_buyer_percent: 100 })).to.deep.equal(['buyer', 100, 0, 60_000, 0]);
      expect(await allocation({ fee_allocation: 'seller' })).to.deep.equal(['seller', 0, 100, 0, 60_000]);
      expect(await allocation({ fee_allocation: 'seller', fee_buyer_percent: 0 })).to.deep.equal(['seller', 0, 100, 0, 60_000]);
      expect(await allocation({ fee_buyer_percent: 25 })).to.deep.equal(['split', 25, 75, 15_000, 45_000]);
      expect(await allocation({ fee_allocation: 'split', fee_buyer_percent: 0 })).to.deep.equal(['split', 0, 100, 0, 60_000]);
      await db('workspaces').where({ id: w.workspace.id }).update({ fee_default_allocation: 'split', fee_default_buyer_percent: 60 });
      expect(await allocation({})).to.deep.equal(['split', 60, 40, 36_000, 24_000]);
    });

    it('from a percentage template: each share floored, the remainder on the last; titles, evidence and due dates from the template', async () => {
      pinNow();
      const w = await dealWorld(client);
      const t = await client
        .post('/v1/enterprise/templates')
        .set(w.h.operator)
        .send({
          name: 'Konstruksi 3 tahap',
          milestones: [
            { title: 'Fondasi', amount_pct: 30, required_evidence: 'Foto lokasi', due_offset_days: 10 },
            { title: 'Struktur', amount_pct: 30 },
            { title: 'Serah terima', amount_pct: 40, due_offset_days: 90 },
          ],
        });
      expect(t.status, JSON.stringify(t.body)).to.equal(201);
      const templateId = t.body.data.id as string;
      const d = await createDealVia(client, w.h.operator, { title: 'Gudang Cikarang', counterparty_id: w.cpId, template_id: templateId, total_amount: 1_000_001 });
      // 30% of 1,000,001 = 300,000.3 -> 300,000 twice; the last 1,000,001 - 600,000 = 400,001.
      const created = Date.parse(d.deal.created_at as string);
      expect(d.milestones.map((m) => [m.sequence_no, m.title, m.amount, m.required_evidence, m.due_at, m.status])).to.deep.equal([
        [1, 'Fondasi', 300_000, 'Foto lokasi', new Date(created + 10 * DAY).toISOString(), 'draft'],
        [2, 'Struktur', 300_000, null, null, 'draft'],
        [3, 'Serah terima', 400_001, null, new Date(created + 90 * DAY).toISOString(), 'draft'],
      ]);
      expect(d.deal).to.deep.include({ total_amount: 1_000_001 });
      // The conversion is templateMilestones' (the helper the templates feature exports).
      const fromHelper = await inTransaction(undefined, (trx) => templateMilestones(trx, w.workspace.id, templateId, 1_000_001));
      expect(d.milestones.map((m) => m.amount)).to.deep.equal(fromHelper.map((m) => m.amount));
      // Fee of 1,000,001 at 2% = 20,000.
      expect(d.deal.fee).to.deep.include({ platform_fee: 20_000, buyer_fee: 20_000, seller_fee: 0 });
    });

    it('from an amount template: total_amount must equal the sum; an unknown or foreign template is 404', async () => {
      const w = await dealWorld(client);
      const t = await client
        .post('/v1/enterprise/templates')
        .set(w.h.operator)
        .send({ name: 'Pengadaan', milestones: [{ title: 'Satu', amount: 250_000 }, { title: 'Dua', amount: 750_000 }] });
      expect(t.status, JSON.stringify(t.body)).to.equal(201);
      const ok = await createDealVia(client, w.h.operator, { title: 'Dari templat', counterparty_id: w.cpId, template_id: t.body.data.id, total_amount: 1_000_000 });
      expect(ok.milestones.map((m) => m.amount)).to.deep.equal([250_000, 750_000]);
      const wrong = await client.post(DEALS).set(w.h.operator).send({ title: 'Dari templat', counterparty_id: w.cpId, template_id: t.body.data.id, total_amount: 1_000_001 });
      expectError(wrong, 400, 'INVALID_BODY');
      expect(wrong.body.error.details.fieldErrors).to.have.property('total_amount');
      // A percentage template whose share would fall below 10,000.
      const pct = await client.post('/v1/enterprise/templates').set(w.h.operator).send({ name: 'Kecil', milestones: [{ title: 'Kecil', amount_pct: 1 }, { title: 'Besar', amount_pct: 99 }] });
      const small = await client.post(DEALS).set(w.h.operator).send({ title: 'Kecil', counterparty_id: w.cpId, template_id: pct.body.data.id, total_amount: 500_000 });
      expectError(small, 400, 'INVALID_BODY');
      expect(small.body.error.details.fieldErrors).to.have.property('total_amount');
      expectError(await client.post(DEALS).set(w.h.operator).send({ title: 'Tidak ada', counterparty_id: w.cpId, template_id: randomUUID(), total_amount: 1_000_000 }), 404, 'NOT_FOUND');
      const other = await dealWorld(client, 'Other');
      const foreign = await client.post('/v1/enterprise/templates').set(other.h.operator).send({ name: 'Milik lain', milestones: [{ title: 'Semua', amount_pct: 100 }] });
      expectError(await client.post(DEALS).set(w.h.operator).send({ title: 'Curian', counterparty_id: w.cpId, template_id: foreign.body.data.id, total_amount: 1_000_000 }), 404, 'NOT_FOUND');
      expect(await db('deals').where({ workspace_id: w.workspace.id }).select('id')).to.have.length(1);
    });

    it('validation: 400 INVALID_BODY with details, and nothing is created', async () => {
      const w = await dealWorld(client);
      const other = await createWorkspace(undefined, 'Other');
      const [foreignCp] = await db('counterparties')
        .insert({ workspace_id: other.workspace.id, name: 'PT Lain', country_code: 'ID', relationship: 'seller', created_at: clock.now(), updated_at: clock.now() })
        .returning<{ id: string }[]>('id');
      const base = dealBody(w.cpId);
      const one = (over: Record<string, unknown>) => ({ title: 'Satu', amount: 1_000_000, ...over });
      const cases: [string, Record<string, unknown>, { field?: string; form?: true }][] = [
        ['no milestones', { ...base, milestones: [] }, { field: 'milestones' }],
        ['21 milestones', { ...base, milestones: milestones(Array.from({ length: 21 }, () => 10_000)) }, { field: 'milestones' }],
        ['amount 9,999', { ...base, milestones: [one({ amount: 9_999 })] }, { field: 'milestones.0.amount' }],
        ['amount 50,000,000,001', { ...base, milestones: [one({ amount: 50_000_000_001 })] }, { field: 'milestones.0.amount' }],
        ['a fraction of a rupiah', { ...base, milestones: [one({ amount: 10_000.5 })] }, { field: 'milestones.0.amount' }],
        ['an amount as text', { ...base, milestones: [one({ amount: '100000' })] }, { field: 'milestones.0.amount' }],
        ['a milestone without a title', { ...base, milestones: [{ amount: 100_000 }] }, { field: 'milestones.0.title' }],
        ['due_offset_days 366', { ...base, milestones: [one({ due_offset_days: 366 })] }, { field: 'milestones.0.due_offset_days' }],
        ['required_evidence 301 chars', { ...base, milestones: [one({ required_evidence: 'x'.repeat(301) })] }, { field: 'milestones.0.required_evidence' }],
        ['template and milestones', { ...base, template_id: randomUUID(), total_amount: 1_000_000 }, { form: true }],
        ['neither template nor milestones', { title: 'Kosong', counterparty_id: w.cpId }, { form: true }],
        ['total_amount without a template', { ...base, total_amount: 3_000_000 }, { field: 'total_amount' }],
        ['template without total_amount', { title: 'T', counterparty_id: w.cpId, template_id: randomUUID() }, { field: 'total_amount' }],
        ['buyer with 40', { ...base, fee_allocation: 'buyer', fee_buyer_percent: 40 }, { field: 'fee_allocation' }],
        ['seller with 100', { ...base, fee_allocation: 'seller', fee_buyer_percent: 100 }, { field: 'fee_allocation' }],
        ['split without a percent', { ...base, fee_allocation: 'split' }, { field: 'fee_allocation' }],
        ['percent 101', { ...base, fee_buyer_percent: 101 }, { field: 'fee_buyer_percent' }],
        ['unknown allocation', { ...base, fee_allocation: 'both' }, { field: 'fee_allocation' }],
        ['title of one char', { ...base, title: 'A' }, { field: 'title' }],
        ['title of 181 chars', { ...base, title: 'x'.repeat(181) }, { field: 'title' }],
        ['description of 2001 chars', { ...base, description: 'x'.repeat(2001) }, { field: 'description' }],
        ['external_ref of 121 chars', { ...base, external_ref: 'x'.repeat(121) }, { field: 'external_ref' }],
        ['currency not three letters', { ...base, currency: 'RUPIAH' }, { field: 'currency' }],
        ['no counterparty', { title: 'Tanpa', milestones: milestones([100_000]) }, { field: 'counterparty_id' }],
        ['unknown counterparty', { ...base, counterparty_id: randomUUID() }, { field: 'counterparty_id' }],
        ["another workspace's counterparty", { ...base, counterparty_id: foreignCp!.id }, { field: 'counterparty_id' }],
        ['a field the spec does not have', { ...base, status: 'completed' }, { field: 'status' }],
      ];
      for (const [label, body, want] of cases) {
        const res = await client.post(DEALS).set(w.h.operator).send(body);
        expect(res.status, `${label}: ${JSON.stringify(res.body)}`).to.equal(400);
        expect(res.body.error.code, label).to.equal('INVALID_BODY');
        const details = res.body.error.details as { formErrors: string[]; fieldErrors: Record<string, string[]> };
        expect(details, label).to.have.keys('formErrors', 'fieldErrors');
        if (want.field) expect(details.fieldErrors, label).to.have.property(want.field);
        if (want.form) expect(details.formErrors, label).to.have.length.greaterThan(0);
      }
      expect(await db('deals').select('id')).to.deep.equal([]);
      expect((await feedRows(w.workspace.id)).filter((e) => e.event.startsWith('deal.'))).to.deep.equal([]);
      // The limits themselves are accepted: 20 milestones, 10,000 and 50,000,000,000.
      const twenty = await createDealVia(client, w.h.operator, dealBody(w.cpId, Array.from({ length: 20 }, () => 10_000)));
      expect(twenty.milestones).to.have.length(20);
      const edges = await createDealVia(client, w.h.operator, dealBody(w.cpId, [10_000, 50_000_000_000]));
      expect(edges.deal).to.deep.include({ total_amount: 50_000_010_000 });
      // 20 x 50,000,000,000 = 1,000,000,000,000; fee 2% = 20,000,000,000.
      const biggest = await createDealVia(client, w.h.operator, dealBody(w.cpId, Array.from({ length: 20 }, () => 50_000_000_000)));
      expect(biggest.deal).to.deep.include({ total_amount: 1_000_000_000_000 });
      expect(biggest.deal.fee).to.deep.include({ platform_fee: 20_000_000_000 });
    });

    it('a viewer may not create (403 FORBIDDEN); an operator may', async () => {
      const w = await dealWorld(client);
      expectError(await client.post(DEALS).set(w.h.viewer).send(dealBody(w.cpId)), 403, 'FORBIDDEN');
      expect(await db('deals').select('id')).to.deep.equal([]);
    });

    it('Idempotency-Key: the same key and body replay the first answer once; another body is 422', async () => {
      const w = await dealWorld(client);
      const key = KEY();
      const body = dealBody(w.cpId);
      const first = await client.post(DEALS).set(w.h.operator).set('Idempotency-Key', key).send(body);
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      expect(first.headers['idempotent-replay']).to.equal(undefined);
      const second = await client.post(DEALS).set(w.h.operator).set('Idempotency-Key', key).send(body);
      expect(second.status).to.equal(201);
      expect(second.headers['idempotent-replay']).to.equal('true');
      expect(second.body).to.deep.equal(first.body);
      const conflict = await client.post(DEALS).set(w.h.operator).set('Idempotency-Key', key).send({ ...body, title: 'Lain' });
      expectError(conflict, 422, 'IDEMPOTENCY_KEY_CONFLICT');
      expect(await db('deals').where({ workspace_id: w.workspace.id }).select('id')).to.deep.equal([{ id: first.body.data.deal.id }]);
      expect((await feedRows(w.workspace.id)).filter((e) => e.event === 'deal.created')).to.have.length(1);
      // A new key makes a new deal.
      expect((await client.post(DEALS).set(w.h.operator).set('Idempotency-Key', KEY()).send(body)).status).to.equal(201);
    });
  });

  describe('totals and status come from the milestones', () => {
    it('total, funded and released amounts and the status follow the milestone states', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w, [1_000_000, 2_000_000, 3_000_000, 4_000_000]);
      const [m1, m2, m3, m4] = d.milestones;
      const totals = async () => {
        const g = (await get(w.h.viewer, d.deal.id)).body.data as DealData;
        return [g.deal.status, g.deal.total_amount, g.deal.funded_amount, g.deal.released_amount];
      };
      expect(await totals()).to.deep.equal(['awaiting_funding', 10_000_000, 0, 0]);
      await fundVia(client, w.h.finance, d.deal.id, m1!.id);
      expect(await totals()).to.deep.equal(['funded', 10_000_000, 1_000_000, 0]);
      await setMilestoneStatus(m2!.id, 'revision_requested');
      expect(await totals()).to.deep.equal(['funded', 10_000_000, 3_000_000, 0]);
      await setMilestoneStatus(m1!.id, 'released');
      expect(await totals()).to.deep.equal(['in_progress', 10_000_000, 3_000_000, 1_000_000]);
      await setMilestoneStatus(m3!.id, 'disputed');
      expect(await totals()).to.deep.equal(['disputed', 10_000_000, 6_000_000, 1_000_000]);
      for (const m of [m2!, m3!, m4!]) await setMilestoneStatus(m.id, 'released');
      expect(await totals()).to.deep.equal(['completed', 10_000_000, 10_000_000, 10_000_000]);
    });

    it('a caller cannot set the status or totals (PATCH refuses them)', async () => {
      const w = await dealWorld(client);
      const d = await createDealVia(client, w.h.operator, dealBody(w.cpId));
      for (const body of [{ status: 'completed' }, { total_amount: 1 }, { funded_amount: 1 }, { released_amount: 1 }]) {
        const res = await patch(w.h.operator, d.deal.id, body);
        expectError(res, 400, 'INVALID_BODY');
      }
      expect((await get(w.h.viewer, d.deal.id)).body.data.deal).to.deep.include({ status: 'draft', total_amount: 3_000_000 });
    });
  });

  describe('list', () => {
    async function listWorld() {
      pinNow();
      const w = await dealWorld(client);
      const make = async (title: string) => {
        clock.advance(1000);
        return createDealVia(client, w.h.operator, dealBody(w.cpId, [1_000_000, 2_000_000], { title }));
      };
      const draft = await make('Alpha kabel tembaga'); // DL-000001
      const awaiting = await make('Beta server rak'); // DL-000002
      await activateVia(client, w.h.operator, awaiting.deal.id);
      const funded = await make('Gamma KABEL serat'); // DL-000003
      await activateVia(client, w.h.operator, funded.deal.id);
      await fundVia(client, w.h.finance, funded.deal.id, funded.milestones[0]!.id);
      const cancelled = await make('Delta 100% baru'); // DL-000004
      expect((await cancel(w.h.operator, cancelled.deal.id)).status).to.equal(200);
      const progress = await make('Epsilon gudang'); // DL-000005
      await activateVia(client, w.h.operator, progress.deal.id);
      await setMilestoneStatus(progress.milestones[0]!.id, 'released');
      return { w, draft, awaiting, funded, cancelled, progress };
    }

    const list = (h: Record<string, string>, query = '') => client.get(`${DEALS}${query}`).set(h);
    const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((d) => d.id);

    it('newest first, with the list-item fields; the status filter is over the computed status', async () => {
      const { w, draft, awaiting, funded, cancelled, progress } = await listWorld();
      const all = await list(w.h.viewer);
      expect(all.status).to.equal(200);
      expect(ids(all)).to.deep.equal([progress, cancelled, funded, awaiting, draft].map((d) => d.deal.id));
      expect(all.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 5, total_pages: 1 });
      const item = all.body.data[0] as Record<string, unknown>;
      expect(Object.keys(item).sort()).to.deep.equal([...DEAL_KEYS, 'counterparty_name', 'milestone_count', 'released_count', 'platform_fee'].sort());
      expect(item).to.deep.include({ status: 'in_progress', counterparty_name: 'PT Pemasok Jaya', milestone_count: 2, released_count: 1, platform_fee: 60_000, released_amount: 1_000_000 });
      // The list item's deal fields are the deal's own.
      const detail = (await get(w.h.viewer, progress.deal.id)).body.data.deal as Record<string, unknown>;
      for (const k of DEAL_KEYS) expect(item[k], k).to.deep.equal(detail[k]);
      const byStatus: [string, string[]][] = [
        ['draft', [draft.deal.id]],
        ['awaiting_funding', [awaiting.deal.id]],
        ['funded', [funded.deal.id]],
        ['cancelled', [cancelled.deal.id]],
        ['in_progress', [progress.deal.id]],
        ['completed', []],
        ['disputed', []],
        ['terms_review', []],
      ];
      for (const [status, want] of byStatus) {
        const res = await list(w.h.viewer, `?status=${status}`);
        expect(ids(res), status).to.deep.equal(want);
        expect(res.body.pagination.total, status).to.equal(want.length);
        for (const d of res.body.data as { status: string }[]) expect(d.status).to.equal(status);
      }
    });

    it('q matches title or reference, case-insensitively, with % and _ taken literally', async () => {
      const { w, draft, funded, cancelled, awaiting } = await listWorld();
      expect(ids(await list(w.h.viewer, '?q=kabel'))).to.deep.equal([funded.deal.id, draft.deal.id]);
      expect(ids(await list(w.h.viewer, '?q=dl-000002'))).to.deep.equal([awaiting.deal.id]);
      expect(ids(await list(w.h.viewer, `?q=${encodeURIComponent('100%')}`))).to.deep.equal([cancelled.deal.id]);
      expect(ids(await list(w.h.viewer, `?q=${encodeURIComponent('%')}`))).to.deep.equal([cancelled.deal.id]);
      expect(ids(await list(w.h.viewer, '?q=_'))).to.deep.equal([]);
      expect(ids(await list(w.h.viewer, '?q=kabel&status=funded'))).to.deep.equal([funded.deal.id]);
      expect((await list(w.h.viewer, '?q=tidak-ada')).body.pagination).to.deep.equal({ page: 1, limit: 20, total: 0, total_pages: 0 });
    });

    it('pagination over the filtered list; bad queries are 400 INVALID_QUERY', async () => {
      const { w, draft, awaiting, funded, cancelled, progress } = await listWorld();
      const newestFirst = [progress, cancelled, funded, awaiting, draft].map((d) => d.deal.id);
      const p1 = await list(w.h.viewer, '?limit=2');
      expect(ids(p1)).to.deep.equal(newestFirst.slice(0, 2));
      expect(p1.body.pagination).to.deep.equal({ page: 1, limit: 2, total: 5, total_pages: 3 });
      const p3 = await list(w.h.viewer, '?limit=2&page=3');
      expect(ids(p3)).to.deep.equal(newestFirst.slice(4));
      expect(p3.body.pagination).to.deep.equal({ page: 3, limit: 2, total: 5, total_pages: 3 });
      expect(ids(await list(w.h.viewer, '?limit=2&page=4'))).to.deep.equal([]);
      // The page is cut after the filter.
      const filtered = await list(w.h.viewer, '?status=draft&limit=1');
      expect(ids(filtered)).to.deep.equal([draft.deal.id]);
      expect(filtered.body.pagination).to.deep.equal({ page: 1, limit: 1, total: 1, total_pages: 1 });
      expect((await list(w.h.viewer, '?limit=50')).status).to.equal(200);
      for (const q of ['?limit=51', '?limit=0', '?page=0', '?status=open', `?q=${'x'.repeat(101)}`]) expectError(await list(w.h.viewer, q), 400, 'INVALID_QUERY');
    });

    /**
     * GET /deals as it answered before issue 42 (every deal and milestone of the workspace
     * read, the status computed with `dealStatus`, then filtered, ordered and cut in memory),
     * from the rows: the ids of the page, their statuses and the total.
     */
    async function listedBefore(workspaceId: string, f: { status?: DealStatus; q?: string; page: number; limit: number }) {
      const deals = await db('deals')
        .where({ workspace_id: workspaceId })
        .select<{ id: string; title: string; reference: string; created_at: Date; cancelled_at: Date | null; terms_review: boolean }[]>('id', 'title', 'reference', 'created_at', 'cancelled_at', 'terms_review');
      const ms = await db('deal_milestones').where({ workspace_id: workspaceId }).select<{ deal_id: string; status: MilestoneStatus }[]>('deal_id', 'status');
      const needle = f.q?.toLowerCase();
      const all = deals
        .map((d) => ({ ...d, status: dealStatus(d, ms.filter((m) => m.deal_id === d.id)) }))
        .filter((d) => (f.status === undefined || d.status === f.status) && (!needle || d.title.toLowerCase().includes(needle) || d.reference.toLowerCase().includes(needle)))
        .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
      const page = all.slice((f.page - 1) * f.limit, f.page * f.limit);
      return { ids: page.map((d) => d.id), statuses: page.map((d) => d.status), total: all.length };
    }

    it('filters, orders, pages and counts as before issue 42 (every deal read and filtered in memory), over random deals, ties on the same instant included', async () => {
      pinNow();
      const random = seeded(20261209);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
      const w = await dealWorld(client);
      const other = await dealWorld(client);
      const titles = ['Kabel tembaga', 'Server rak', 'KABEL serat optik', 'Gudang 100% baru', 'Rak under_score', 'Jasa pasang'];
      for (let i = 0; i < 36; i++) {
        // Some deals share their instant with the one before (the order then goes by id, newest id first).
        if (random() < 0.6) clock.advance(1000);
        const amounts = Array.from({ length: 1 + Math.floor(random() * 3) }, () => 1_000_000);
        const d = await createDealVia(client, w.h.operator, dealBody(w.cpId, amounts, { title: pick(titles) }));
        if (i % 4 === 0) await createDealVia(client, other.h.operator, dealBody(other.cpId, amounts, { title: pick(titles) }));
        for (const m of d.milestones) await setMilestoneStatus(m.id, pick(MILESTONE_STATUSES));
        const r = random();
        if (r < 0.08) await db('deals').where({ id: d.deal.id }).update({ cancelled_at: clock.now() });
        else if (r < 0.25) await db('deals').where({ id: d.deal.id }).update({ terms_review: true });
      }
      let compared = 0;
      for (const status of [undefined, ...DEAL_STATUSES]) {
        for (const q of [undefined, 'kabel', 'dl-00001', '100%', '_', '']) {
          for (const limit of [7, 50]) {
            for (let page = 1; ; page++) {
              const want = await listedBefore(w.workspace.id, { status, q: q || undefined, page, limit });
              const query = new URLSearchParams({ page: String(page), limit: String(limit), ...(status ? { status } : {}), ...(q !== undefined ? { q } : {}) });
              const res = await list(w.h.viewer, `?${query.toString()}`);
              const what = query.toString();
              expect(res.status, what).to.equal(200);
              expect(ids(res), what).to.deep.equal(want.ids);
              expect((res.body.data as { status: string }[]).map((d) => d.status), what).to.deep.equal(want.statuses);
              expect(res.body.pagination, what).to.deep.equal({ page, limit, total: want.total, total_pages: Math.ceil(want.total / limit) });
              compared += 1;
              if (page * limit >= want.total) break;
            }
          }
        }
      }
      expect(compared).to.be.greaterThan(100);
      // The random mix reached most statuses.
      const seen = new Set((await listedBefore(w.workspace.id, { page: 1, limit: 1000 })).statuses);
      expect(seen.size).to.be.greaterThan(5);
    });

    it("one page's rows only: a workspace of 40 deals sends the same statements as one of 3, and each answers as many rows", async () => {
      pinNow();
      const small = await dealWorld(client);
      const big = await dealWorld(client);
      for (let i = 0; i < 40; i++) {
        clock.advance(1000);
        if (i < 3) await createDealVia(client, small.h.operator, dealBody(small.cpId));
        await createDealVia(client, big.h.operator, dealBody(big.cpId));
      }
      for (const query of ['?limit=2', '?status=draft&limit=1&page=3', '?q=pengadaan&limit=2']) {
        const read = async (h: Record<string, string>) => {
          expect((await list(h, query)).status).to.equal(200); // warm: sessions and plans
          const { sent, rows, result } = await statementsOf(() => list(h, query));
          expect(result.status).to.equal(200);
          return { sent, rows, result };
        };
        const a = await read(small.h.viewer);
        const b = await read(big.h.viewer);
        expect(b.sent, query).to.deep.equal(a.sent);
        expect(b.rows, query).to.deep.equal(a.rows);
        expect(a.result.body.pagination.total, query).to.equal(3);
        expect(b.result.body.pagination.total, query).to.equal(40);
        // No statement answered more rows than the page's deals and their milestones (2 each).
        for (const n of b.rows) expect(n ?? 0, query).to.be.at.most(4);
      }
    });

    it("the list's order follows a deal's creation time even when it is corrected by SQL (the rollup's copy follows the deal)", async () => {
      const { w, draft, awaiting, funded, cancelled, progress } = await listWorld();
      await db('deals').where({ id: draft.deal.id }).update({ created_at: new Date(clock.nowMs() + DAY) });
      expect(ids(await list(w.h.viewer))).to.deep.equal([draft, progress, cancelled, funded, awaiting].map((d) => d.deal.id));
      expect(ids(await list(w.h.viewer, '?status=draft'))).to.deep.equal([draft.deal.id]);
      const cp2 = await counterpartyVia(client, w.h.owner, { name: 'PT Lain' });
      await db('deals').where({ id: draft.deal.id }).update({ counterparty_id: cp2 });
      expect(await db('deal_statuses').where({ deal_id: draft.deal.id }).first('counterparty_id', 'created_at')).to.deep.equal({ counterparty_id: cp2, created_at: new Date(clock.nowMs() + DAY) });
    });
  });

  describe('get', () => {
    it('the last 100 events of the deal, newest first; unknown ids are 404', async () => {
      const w = await dealWorld(client);
      const d = await createDealVia(client, w.h.operator, dealBody(w.cpId));
      const other = await createDealVia(client, w.h.operator, dealBody(w.cpId, [500_000], { title: 'Lain' }));
      const ref = d.deal.reference as string;
      await inTransaction(undefined, async (trx) => {
        for (let i = 0; i < 110; i++) {
          await appendEvent(trx, w.workspace.id, { event: 'deal.updated', entityType: 'deal', entityId: d.deal.id, dealId: d.deal.id, dealReference: ref, summary: `note ${i}`, sandbox: true });
          if (i % 10 === 0) await appendEvent(trx, w.workspace.id, { event: 'deal.updated', entityType: 'deal', entityId: other.deal.id, dealId: other.deal.id, summary: 'other', sandbox: true });
        }
      });
      const res = await get(w.h.viewer, d.deal.id);
      expect(res.status).to.equal(200);
      const evs = res.body.data.events as { seq: number; deal_id: string; summary: string }[];
      expect(evs).to.have.length(100);
      expect(evs.every((e) => e.deal_id === d.deal.id)).to.equal(true);
      const rows = (await feedRows(w.workspace.id, d.deal.id)).map((r) => Number(r.seq)).reverse();
      expect(rows).to.have.length(111);
      expect(evs.map((e) => e.seq)).to.deep.equal(rows.slice(0, 100));
      expect(evs[0]!.summary).to.equal('note 109');
      expect(Object.keys(res.body.data.outcome).sort()).to.deep.equal(['approvals_by_people', 'revisions', 'time_to_release_minutes']);
      expectError(await get(w.h.viewer, randomUUID()), 404, 'NOT_FOUND');
      expectError(await get(w.h.viewer, 'not-a-uuid'), 404, 'NOT_FOUND');
    });
  });

  it('a deal created while the workspace went live (the request saw it as a sandbox) is a live deal: the workspace is read again under its lock', async () => {
    const w = await dealWorld(client);
    const seen = { ...w.workspace };
    await db('workspaces').where({ id: w.workspace.id }).update({ is_sandbox: false, kyb_status: 'verified' });
    const actor = { workspaceId: w.workspace.id, memberId: w.ownerMember.id, userId: w.owner.id, userName: w.owner.full_name, role: 'owner' as const };
    const made = await createDeal(undefined, actor, seen, { title: 'Balapan', counterparty_id: w.cpId, currency: 'IDR', milestones: milestones([1_000_000]) });
    expect(made.deal.is_test).to.equal(false);
    expect((await dealRow(made.deal.id)).is_test).to.equal(false);
  });

  describe('draft edits', () => {
    it('PATCH changes the details and writes deal.updated', async () => {
      const w = await dealWorld(client);
      const d = await createDealVia(client, w.h.operator, dealBody(w.cpId, [1_000_000, 2_000_000], { description: 'Lama', external_ref: 'PO-1' }));
      clock.advance(5000);
      const res = await patch(w.h.operator, d.deal.id, { title: 'Pengadaan server baru', description: 'Baru', external_ref: 'PO-2' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const g = res.body.data as DealData;
      expect(g.deal).to.deep.include({ title: 'Pengadaan server baru', description: 'Baru', external_ref: 'PO-2', status: 'draft' });
      expect(g.deal.updated_at).to.not.equal(d.deal.updated_at);
      expect(g.deal.fee).to.deep.equal(d.deal.fee);
      expect(g.milestones).to.deep.equal(d.milestones);
      expect(g.events.map((e) => e.event)).to.deep.equal(['deal.updated', 'deal.created']);
      const cleared = await patch(w.h.operator, d.deal.id, { description: null, external_ref: null });
      expect(cleared.body.data.deal).to.deep.include({ description: null, external_ref: null, title: 'Pengadaan server baru' });
      // An empty text clears the field too, as create stores it: null, not ''.
      await patch(w.h.operator, d.deal.id, { description: 'Lagi', external_ref: 'PO-3' });
      const emptied = await patch(w.h.operator, d.deal.id, { description: '', external_ref: '' });
      expect(emptied.body.data.deal).to.deep.include({ description: null, external_ref: null });
      expect(await dealRow(d.deal.id)).to.include({ description: null, external_ref: null });
      expectError(await patch(w.h.operator, d.deal.id, {}), 400, 'INVALID_BODY');
      expectError(await patch(w.h.operator, d.deal.id, { title: 'x' }), 400, 'INVALID_BODY');
      expectError(await patch(w.h.operator, d.deal.id, { counterparty_id: w.cpId }), 400, 'INVALID_BODY');
      expectError(await patch(w.h.viewer, d.deal.id, { title: 'Viewer' }), 403, 'FORBIDDEN');
      expectError(await patch(w.h.operator, randomUUID(), { title: 'Tidak ada' }), 404, 'NOT_FOUND');
    });

    it('changing the split re-spreads with the rate and minimum taken at creation, not the pricing in force', async () => {
      const w = await dealWorld(client);
      const d = await createDealVia(client, w.h.operator, dealBody(w.cpId, [1_000_000, 2_000_000]));
      const small = await createDealVia(client, w.h.operator, dealBody(w.cpId, [100_000], { title: 'Kecil' }));
      // Small: 2% of 100,000 = 2,000, below the 5,000 minimum -> 5,000.
      expect(small.deal.fee).to.deep.include({ platform_fee: 5000, min_fee: 5000 });
      // The operator reprices the workspace: 1%, minimum 50,000.
      await db('workspaces').where({ id: w.workspace.id }).update({ fee_rate_bp: 100, fee_min: 50_000 });
      const res = await patch(w.h.operator, d.deal.id, { fee_allocation: 'split', fee_buyer_percent: 50 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const g = res.body.data as DealData;
      // Still 2% of 3,000,000 = 60,000: buyer 30,000, seller 30,000; per milestone 10,000 / 20,000 each.
      expect(g.deal.fee).to.deep.include({ rate_bp: 200, min_fee: 5000, platform_fee: 60_000, allocation: 'split', buyer_percent: 50, seller_percent: 50, buyer_fee: 30_000, seller_fee: 30_000, funding_total: 3_030_000, payout_total: 2_970_000, frozen: false });
      expect(g.milestones.map((m) => [m.buyer_fee, m.seller_fee, m.funding_amount, m.payout_amount])).to.deep.equal([
        [10_000, 10_000, 1_010_000, 990_000],
        [20_000, 20_000, 2_020_000, 1_980_000],
      ]);
      expect(g.events.map((e) => e.event)).to.deep.equal(['deal.updated', 'deal.created']);
      // A percent alone on PATCH means split at it; the allocation must agree with the percent.
      const seller = await patch(w.h.operator, d.deal.id, { fee_allocation: 'seller' });
      expect(seller.body.data.deal.fee).to.deep.include({ allocation: 'seller', buyer_percent: 0, buyer_fee: 0, seller_fee: 60_000, platform_fee: 60_000 });
      const bad = await patch(w.h.operator, d.deal.id, { fee_allocation: 'buyer', fee_buyer_percent: 10 });
      expectError(bad, 400, 'INVALID_BODY');
      expect(bad.body.error.details.fieldErrors).to.have.property('fee_allocation');
      expect((await get(w.h.viewer, d.deal.id)).body.data.deal.fee).to.deep.include({ allocation: 'seller', seller_fee: 60_000 });
      // The small deal keeps its 5,000 minimum when a milestone is added: 2% of 200,000 = 4,000 -> 5,000 (not 50,000, not 1%).
      const added = await addMs(w.h.operator, small.deal.id, { title: 'Tambahan', amount: 100_000 });
      expect(added.status, JSON.stringify(added.body)).to.equal(201);
      expect(added.body.data.deal.fee).to.deep.include({ rate_bp: 200, min_fee: 5000, platform_fee: 5000 });
      // A new deal takes the new pricing: 1% of 3,000,000 = 30,000, below the new 50,000 minimum -> 50,000.
      const fresh = await createDealVia(client, w.h.operator, dealBody(w.cpId, [1_000_000, 2_000_000]));
      expect(fresh.deal.fee).to.deep.include({ rate_bp: 100, min_fee: 50_000, platform_fee: 50_000 });
    });

    it('adding a milestone: at the end, the fee re-spread over the new total; 20 at most', async () => {
      pinNow();
      const w = await dealWorld(client);
      const d = await createDealVia(client, w.h.operator, dealBody(w.cpId, [1_000_000, 2_000_000]));
      const res = await addMs(w.h.operator, d.deal.id, { title: 'Pemasangan', amount: 3_000_000, required_evidence: 'Berita acara', due_offset_days: 30 });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const g = res.body.data as DealData;
      // 6,000,000 at 2% = 120,000, all on the buyer: 20,000 / 40,000 / 60,000.
      expect(g.deal).to.deep.include({ total_amount: 6_000_000, status: 'draft' });
      expect(g.deal.fee).to.deep.include({ platform_fee: 120_000, buyer_fee: 120_000, seller_fee: 0, funding_total: 6_120_000 });
      expect(g.milestones.map((m) => [m.sequence_no, m.title, m.amount, m.buyer_fee, m.funding_amount, m.status])).to.deep.equal([
        [1, 'Tahap 1', 1_000_000, 20_000, 1_020_000, 'draft'],
        [2, 'Tahap 2', 2_000_000, 40_000, 2_040_000, 'draft'],
        [3, 'Pemasangan', 3_000_000, 60_000, 3_060_000, 'draft'],
      ]);
      expect(g.milestones[2]).to.deep.include({ required_evidence: 'Berita acara', due_at: new Date(Date.parse(d.deal.created_at as string) + 30 * DAY).toISOString() });
      expect(g.events.map((e) => e.event)).to.deep.equal(['deal.updated', 'deal.created']);
      for (const body of [{ title: 'Kecil', amount: 9_999 }, { title: 'Besar', amount: 50_000_000_001 }, { amount: 100_000 }, { title: 'Hari', amount: 100_000, due_offset_days: 366 }]) {
        expectError(await addMs(w.h.operator, d.deal.id, body), 400, 'INVALID_BODY');
      }
      // 19 milestones take one more; 20 take none.
      const nineteen = await createDealVia(client, w.h.operator, dealBody(w.cpId, Array.from({ length: 19 }, () => 10_000)));
      const twenty = await addMs(w.h.operator, nineteen.deal.id, { title: 'Kedua puluh', amount: 10_000 });
      expect(twenty.status, JSON.stringify(twenty.body)).to.equal(201);
      expect(twenty.body.data.milestones).to.have.length(20);
      expect(twenty.body.data.milestones[19]).to.deep.include({ sequence_no: 20, title: 'Kedua puluh' });
      expectError(await addMs(w.h.operator, nineteen.deal.id, { title: 'Kedua puluh satu', amount: 10_000 }), 409, 'INVALID_STATE');
      expect(await milestoneRows(nineteen.deal.id)).to.have.length(20);
    });

    it('updating a milestone: title, evidence, due date; a new amount re-spreads the fee and recounts approvals', async () => {
      pinNow();
      const w = await dealWorld(client);
      const d = await createDealVia(client, w.h.operator, dealBody(w.cpId, [1_000_000, 2_000_000]));
      const [m1, m2] = d.milestones;
      clock.advance(60_000); // the due date counts from the deal's creation, not from the edit
      const res = await patchMs(w.h.operator, d.deal.id, m1!.id, { title: 'Uang muka', required_evidence: 'Faktur', due_offset_days: 14 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.milestones[0]).to.deep.include({
        title: 'Uang muka',
        required_evidence: 'Faktur',
        due_at: new Date(Date.parse(d.deal.created_at as string) + 14 * DAY).toISOString(),
        amount: 1_000_000,
        buyer_fee: 20_000,
      });
      const amount = await patchMs(w.h.operator, d.deal.id, m2!.id, { amount: 149_000_000 });
      expect(amount.status, JSON.stringify(amount.body)).to.equal(200);
      // 150,000,000 at 2% = 3,000,000: floor(3,000,000 x 1,000,000 / 150,000,000) = 20,000; the last 2,980,000.
      expect(amount.body.data.deal).to.deep.include({ total_amount: 150_000_000 });
      expect(amount.body.data.deal.fee).to.deep.include({ platform_fee: 3_000_000, buyer_fee: 3_000_000 });
      expect((amount.body.data as DealData).milestones.map((m) => [m.amount, m.buyer_fee, m.approvals_required])).to.deep.equal([
        [1_000_000, 20_000, 1],
        [149_000_000, 2_980_000, 2],
      ]);
      expect((amount.body.data as DealData).events.map((e) => e.event)).to.deep.equal(['deal.updated', 'deal.updated', 'deal.created']);
      expectError(await patchMs(w.h.operator, d.deal.id, m1!.id, {}), 400, 'INVALID_BODY');
      expectError(await patchMs(w.h.operator, d.deal.id, m1!.id, { amount: 5_000 }), 400, 'INVALID_BODY');
      expectError(await patchMs(w.h.operator, d.deal.id, randomUUID(), { title: 'Tidak ada' }), 404, 'NOT_FOUND');
      expectError(await patchMs(w.h.viewer, d.deal.id, m1!.id, { title: 'Viewer' }), 403, 'FORBIDDEN');
      // A milestone of another deal of the same workspace is not this deal's.
      const other = await createDealVia(client, w.h.operator, dealBody(w.cpId));
      expectError(await patchMs(w.h.operator, d.deal.id, other.milestones[0]!.id, { title: 'Salah deal' }), 404, 'NOT_FOUND');
      expect((await milestoneRows(other.deal.id))[0]!.title).to.equal('Tahap 1');
    });
  });

  describe('activate', () => {
    it('sandbox: fee frozen, every milestone awaiting_funding, deal awaiting_funding; deal.updated', async () => {
      const w = await dealWorld(client);
      const d = await createDealVia(client, w.h.operator, dealBody(w.cpId, [1_000_000, 2_000_000], { fee_allocation: 'seller' }));
      const res = await client.post(`${DEALS}/${d.deal.id}/activate`).set(w.h.operator).send({});
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const g = res.body.data as DealData;
      expect(Object.keys(g).sort()).to.deep.equal(['deal', 'events', 'milestones', 'outcome']);
      expect(g.deal.status).to.equal('awaiting_funding');
      expect(g.deal.fee).to.deep.equal({ ...d.deal.fee, frozen: true });
      expect(g.milestones.map((m) => m.status)).to.deep.equal(['awaiting_funding', 'awaiting_funding']);
      expect(g.milestones.map((m) => [m.amount, m.buyer_fee, m.seller_fee, m.funding_amount, m.payout_amount])).to.deep.equal(
        d.milestones.map((m) => [m.amount, m.buyer_fee, m.seller_fee, m.funding_amount, m.payout_amount]),
      );
      expect(g.events.map((e) => e.event)).to.deep.equal(['deal.updated', 'deal.created']);
      expect((await dealRow(d.deal.id)).fee_frozen).to.equal(true);
      expectError(await client.post(`${DEALS}/${d.deal.id}/activate`).set(w.h.viewer).send({}), 403, 'FORBIDDEN');
      expectError(await client.post(`${DEALS}/${d.deal.id}/activate`).set(w.h.operator).send({ now: true }), 400, 'INVALID_BODY');
    });

    it('from activation on, nothing of the terms changes: 409 INVALID_STATE and nothing moves', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w);
      const before = await dealSnapshot(w.workspace.id);
      const mid = d.milestones[0]!.id;
      const refusals = [
        await patch(w.h.operator, d.deal.id, { title: 'Baru' }),
        await patch(w.h.operator, d.deal.id, { fee_allocation: 'seller' }),
        await addMs(w.h.operator, d.deal.id, { title: 'Tambah', amount: 100_000 }),
        await patchMs(w.h.operator, d.deal.id, mid, { amount: 500_000 }),
        await patchMs(w.h.operator, d.deal.id, mid, { title: 'Baru' }),
        await client.post(`${DEALS}/${d.deal.id}/activate`).set(w.h.operator).send({}),
      ];
      for (const r of refusals) expectError(r, 409, 'INVALID_STATE');
      expect(await dealSnapshot(w.workspace.id)).to.deep.equal(before);
    });

    it('a cancelled deal cannot be activated or edited', async () => {
      const w = await dealWorld(client);
      const d = await createDealVia(client, w.h.operator, dealBody(w.cpId));
      expect((await cancel(w.h.operator, d.deal.id)).status).to.equal(200);
      const before = await dealSnapshot(w.workspace.id);
      expectError(await client.post(`${DEALS}/${d.deal.id}/activate`).set(w.h.operator).send({}), 409, 'INVALID_STATE');
      expectError(await patch(w.h.operator, d.deal.id, { title: 'Baru' }), 409, 'INVALID_STATE');
      expectError(await addMs(w.h.operator, d.deal.id, { title: 'Tambah', amount: 100_000 }), 409, 'INVALID_STATE');
      expectError(await patchMs(w.h.operator, d.deal.id, d.milestones[0]!.id, { title: 'Baru' }), 409, 'INVALID_STATE');
      expect(await dealSnapshot(w.workspace.id)).to.deep.equal(before);
    });

    it('live workspace, counterparty not verified: terms_review with draft milestones until staff verify the counterparty', async () => {
      const w = await dealWorld(client);
      const otherCp = await counterpartyVia(client, w.h.owner, { name: 'PT Belum Diverifikasi' });
      await goLive(w.workspace.id);
      const d = await createDealVia(client, w.h.operator, dealBody(w.cpId));
      expect(d.deal.is_test).to.equal(false);
      expect(d.events[0]).to.deep.include({ event: 'deal.created', livemode: true });
      const waiting = await activateVia(client, w.h.operator, d.deal.id);
      expect(waiting.deal.status).to.equal('terms_review');
      expect(waiting.deal.fee.frozen).to.equal(true);
      expect(waiting.milestones.map((m) => m.status)).to.deep.equal(['draft', 'draft']);
      // Another deal of another unverified counterparty, and a draft deal of this one, are not touched by the verification.
      const otherDeal = await activateVia(client, w.h.operator, (await createDealVia(client, w.h.operator, dealBody(otherCp))).deal.id);
      const draftOfCp = await createDealVia(client, w.h.operator, dealBody(w.cpId, [500_000], { title: 'Masih draf' }));
      // Terms are fixed while it waits, and it is listed under terms_review.
      expectError(await patch(w.h.operator, d.deal.id, { title: 'Baru' }), 409, 'INVALID_STATE');
      expectError(await patchMs(w.h.operator, d.deal.id, d.milestones[0]!.id, { title: 'Baru' }), 409, 'INVALID_STATE');
      expectError(await addMs(w.h.operator, d.deal.id, { title: 'Tambah', amount: 100_000 }), 409, 'INVALID_STATE');
      expectError(await client.post(`${DEALS}/${d.deal.id}/activate`).set(w.h.operator).send({}), 409, 'INVALID_STATE');
      const listed = await client.get(`${DEALS}?status=terms_review`).set(w.h.viewer);
      expect((listed.body.data as { id: string }[]).map((x) => x.id)).to.deep.equal([otherDeal.deal.id, d.deal.id]);

      const staff = await staffHeaders();
      const v = await client.post(`/v1/admin/enterprise/counterparties/${w.cpId}/verify`).set(staff).send({});
      expect(v.status, JSON.stringify(v.body)).to.equal(200);
      const after = (await get(w.h.viewer, d.deal.id)).body.data as DealData;
      expect(after.deal.status).to.equal('awaiting_funding');
      expect(after.deal.counterparty).to.deep.include({ kyb_status: 'verified' });
      expect(after.milestones.map((m) => m.status)).to.deep.equal(['awaiting_funding', 'awaiting_funding']);
      expect(after.events[0]).to.deep.include({ event: 'deal.updated', actor: null, actor_label: 'Operator', livemode: true, deal_id: d.deal.id });
      expect((await get(w.h.viewer, otherDeal.deal.id)).body.data.deal.status).to.equal('terms_review');
      expect(await statusesOf(otherDeal.deal.id)).to.deep.equal(['draft', 'draft']);
      expect((await get(w.h.viewer, draftOfCp.deal.id)).body.data.deal.status).to.equal('draft');
      // Now verified: a new deal of this counterparty awaits funding at once.
      const direct = await activateVia(client, w.h.operator, (await createDealVia(client, w.h.operator, dealBody(w.cpId))).deal.id);
      expect(direct.deal.status).to.equal('awaiting_funding');
      expect(direct.milestones.map((m) => m.status)).to.deep.equal(['awaiting_funding', 'awaiting_funding']);
    });

    it('a deal cancelled while in terms_review stays cancelled when the counterparty is verified', async () => {
      const w = await dealWorld(client);
      await goLive(w.workspace.id);
      const d = await activateVia(client, w.h.operator, (await createDealVia(client, w.h.operator, dealBody(w.cpId))).deal.id);
      expect(d.deal.status).to.equal('terms_review');
      const c = await cancel(w.h.operator, d.deal.id);
      expect(c.status, JSON.stringify(c.body)).to.equal(200);
      expect(c.body.data.deal.status).to.equal('cancelled');
      const staff = await staffHeaders();
      expect((await client.post(`/v1/admin/enterprise/counterparties/${w.cpId}/verify`).set(staff).send({})).status).to.equal(200);
      expect(await statusesOf(d.deal.id)).to.deep.equal(['cancelled', 'cancelled']);
      expect((await get(w.h.viewer, d.deal.id)).body.data.deal.status).to.equal('cancelled');
      expect((await feedRows(w.workspace.id, d.deal.id)).map((e) => e.event)).to.deep.equal(['deal.created', 'deal.updated', 'deal.cancelled']);
    });
  });

  describe('cancel', () => {
    it('200 with the detail shape: deal cancelled, milestones cancelled, deal.cancelled; 409 INVALID_STATE the second time', async () => {
      const w = await dealWorld(client);
      const draft = await createDealVia(client, w.h.operator, dealBody(w.cpId, [1_000_000, 2_000_000], { fee_allocation: 'seller' }));
      const res = await cancel(w.h.operator, draft.deal.id);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const g = res.body.data as DealData;
      expect(Object.keys(g).sort()).to.deep.equal(['deal', 'events', 'milestones', 'outcome']);
      expect(Object.keys(g.deal).sort()).to.deep.equal([...DEAL_KEYS].sort());
      expect(g.deal.status).to.equal('cancelled');
      expect(g.milestones.map((m) => m.status)).to.deep.equal(['cancelled', 'cancelled']);
      expect(g.events.map((e) => e.event)).to.deep.equal(['deal.cancelled', 'deal.created']);
      expect(g.events[0]).to.deep.include({ entity_type: 'deal', entity_id: draft.deal.id, deal_id: draft.deal.id, actor: { id: w.users.operator.id, name: w.users.operator.full_name }, livemode: false });
      // The fee keeps its terms; its funding and payout totals, like total_amount, cover the milestones not cancelled (none): never below zero.
      expect(g.deal).to.deep.include({ total_amount: 0, funded_amount: 0, released_amount: 0 });
      expect(g.deal.fee).to.deep.include({ platform_fee: 60_000, buyer_fee: 0, seller_fee: 60_000, funding_total: 0, payout_total: 0 });
      expect(await statusesOf(draft.deal.id)).to.deep.equal(['cancelled', 'cancelled']);
      expect((await dealRow(draft.deal.id)).cancelled_at).to.not.equal(null);
      expect((await get(w.h.viewer, draft.deal.id)).body.data).to.deep.equal(g);
      const before = await dealSnapshot(w.workspace.id);
      expectError(await cancel(w.h.operator, draft.deal.id), 409, 'INVALID_STATE');
      expect(await dealSnapshot(w.workspace.id)).to.deep.equal(before);
      // An active deal whose milestones await funding is cancelled the same way.
      const active = await activeDeal(client, w);
      const c2 = await cancel(w.h.operator, active.deal.id);
      expect(c2.status).to.equal(200);
      expect((c2.body.data as DealData).milestones.map((m) => m.status)).to.deep.equal(['cancelled', 'cancelled']);
      expectError(await cancel(w.h.viewer, active.deal.id), 403, 'FORBIDDEN');
      expectError(await cancel(w.h.operator, randomUUID()), 404, 'NOT_FOUND');
      expectError(await client.post(`${DEALS}/${active.deal.id}/cancel`).set(w.h.operator).send({ reason: 'x' }), 400, 'INVALID_BODY');
    });

    it('409 NOT_CANCELLABLE once a milestone is funded (or further on), and nothing changes', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w);
      await fundVia(client, w.h.finance, d.deal.id, d.milestones[0]!.id);
      const before = await dealSnapshot(w.workspace.id);
      expectError(await cancel(w.h.operator, d.deal.id), 409, 'NOT_CANCELLABLE');
      expect(await dealSnapshot(w.workspace.id)).to.deep.equal(before);
      for (const status of ['evidence_submitted', 'revision_requested', 'approved', 'released', 'disputed'] as const) {
        const x = await activeDeal(client, w);
        await setMilestoneStatus(x.milestones[1]!.id, status);
        const snap = await dealSnapshot(w.workspace.id);
        expectError(await cancel(w.h.operator, x.deal.id), 409, 'NOT_CANCELLABLE');
        expect(await dealSnapshot(w.workspace.id), status).to.deep.equal(snap);
      }
    });

    it('a deal already cancelled by its milestones (sandbox closed) answers 409 INVALID_STATE', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w);
      for (const m of d.milestones) await setMilestoneStatus(m.id, 'cancelled');
      expect((await get(w.h.viewer, d.deal.id)).body.data.deal.status).to.equal('cancelled');
      const before = await dealSnapshot(w.workspace.id);
      expectError(await cancel(w.h.operator, d.deal.id), 409, 'INVALID_STATE');
      expect(await dealSnapshot(w.workspace.id)).to.deep.equal(before);
    });
  });

  describe('four-eyes', () => {
    it('approvals_required is 2 at or above settings.four_eyes_threshold, 1 below', async () => {
      const w = await dealWorld(client);
      // The default threshold is 100,000,000.
      const d = await createDealVia(client, w.h.operator, dealBody(w.cpId, [99_999_999, 100_000_000, 100_000_001]));
      expect(d.milestones.map((m) => m.approvals_required)).to.deep.equal([1, 2, 2]);
      const s = await client.patch('/v1/enterprise/settings').set(w.h.owner).send({ four_eyes_threshold: 50_000_000 });
      expect(s.status, JSON.stringify(s.body)).to.equal(200);
      const e = await createDealVia(client, w.h.operator, dealBody(w.cpId, [49_999_999, 50_000_000]));
      expect(e.milestones.map((m) => m.approvals_required)).to.deep.equal([1, 2]);
      const added = await addMs(w.h.operator, e.deal.id, { title: 'Besar', amount: 60_000_000 });
      expect((added.body.data as DealData).milestones.map((m) => m.approvals_required)).to.deep.equal([1, 2, 2]);
      const lowered = await patchMs(w.h.operator, e.deal.id, e.milestones[1]!.id, { amount: 10_000 });
      expect((lowered.body.data as DealData).milestones.map((m) => m.approvals_required)).to.deep.equal([1, 1, 2]);
      // Activation counts with the threshold in force then: 99,999,999 now needs two.
      const a = await activateVia(client, w.h.operator, d.deal.id);
      expect(a.milestones.map((m) => m.approvals_required)).to.deep.equal([2, 2, 2]);
    });
  });

  describe('events', () => {
    it('every write appends its event with the deal, the actor and livemode false in a sandbox; the feed shows them', async () => {
      const w = await dealWorld(client);
      const d = await createDealVia(client, w.h.operator, dealBody(w.cpId, [1_000_000, 2_000_000, 3_000_000]));
      const id = d.deal.id;
      const [m1, m2, m3] = d.milestones;
      expect((await patch(w.h.operator, id, { title: 'Judul baru' })).status).to.equal(200);
      expect((await addMs(w.h.operator, id, { title: 'Keempat', amount: 100_000 })).status).to.equal(201);
      expect((await patchMs(w.h.operator, id, m1!.id, { title: 'Pertama' })).status).to.equal(200);
      await activateVia(client, w.h.operator, id);
      await fundVia(client, w.h.finance, id, m1!.id);
      await fundVia(client, w.h.finance, id, m2!.id);
      const ev = await client.post(`${DEALS}/${id}/milestones/${m1!.id}/submit-evidence`).set(w.h.operator).send({ summary: 'Terkirim' });
      expect(ev.status, JSON.stringify(ev.body)).to.equal(200);
      const dis = await client.post(`${DEALS}/${id}/milestones/${m2!.id}/dispute`).set(w.h.operator).send({ reason: 'Rusak' });
      expect(dis.status, JSON.stringify(dis.body)).to.equal(200);
      const other = await createDealVia(client, w.h.operator, dealBody(w.cpId, [500_000], { title: 'Batal' }));
      expect((await cancel(w.h.operator, other.deal.id)).status).to.equal(200);

      const rows = await feedRows(w.workspace.id);
      const dealEvents = rows.filter((r) => r.deal_id !== null);
      expect(dealEvents.map((r) => [r.event, r.deal_id, r.entity_type, r.entity_id])).to.deep.equal([
        ['deal.created', id, 'deal', id],
        ['deal.updated', id, 'deal', id],
        ['deal.updated', id, 'deal', id],
        ['deal.updated', id, 'deal', id],
        ['deal.updated', id, 'deal', id],
        ['milestone.funded', id, 'milestone', m1!.id],
        ['milestone.funded', id, 'milestone', m2!.id],
        ['milestone.evidence_submitted', id, 'milestone', m1!.id],
        ['milestone.disputed', id, 'milestone', m2!.id],
        ['deal.created', other.deal.id, 'deal', other.deal.id],
        ['deal.cancelled', other.deal.id, 'deal', other.deal.id],
      ]);
      const ms = await milestoneRows(id);
      expect(dealEvents.filter((r) => r.event === 'milestone.funded').map((r) => Number(r.amount))).to.deep.equal([Number(ms[0]!.funding_amount), Number(ms[1]!.funding_amount)]);
      for (const r of dealEvents) {
        expect(r.livemode, r.event).to.equal(false);
        expect(r.deal_reference, r.event).to.equal(r.deal_id === id ? 'DL-000001' : 'DL-000002');
        expect(r.actor_label, r.event).to.equal(null);
        expect(r.summary, r.event).to.be.a('string').and.not.equal('');
      }
      const actors = dealEvents.map((r) => r.actor_id);
      expect(actors.filter((a) => a === w.users.finance.id)).to.have.length(2); // the funds
      expect(actors.filter((a) => a === w.users.operator.id)).to.have.length(9);
      // The feed answers the same events (seq only increases).
      const feed = await client.get('/v1/enterprise/events?limit=100').set(w.h.viewer);
      expect(feed.status).to.equal(200);
      const items = (feed.body.data as { event: string; deal_id: string | null; livemode: boolean; seq: number }[]).filter((e) => e.deal_id !== null);
      expect(items.map((e) => e.event).sort()).to.deep.equal(dealEvents.map((r) => r.event).sort());
      expect(items.every((e) => e.livemode === false)).to.equal(true);
      // m3 never moved.
      expect(ms[2]!.status).to.equal('awaiting_funding');
      expect(m3!.id).to.equal(ms[2]!.id);
    });
  });

  describe("another workspace's deals", () => {
    async function twoWorlds() {
      const a = await dealWorld(client, 'A');
      const b = await dealWorld(client, 'B');
      const bDraft = await createDealVia(client, b.h.operator, dealBody(b.cpId, [1_000_000, 2_000_000], { title: 'B secret deal' }));
      const bActive = await activeDeal(client, b, [1_000_000, 2_000_000], { title: 'B secret active' });
      await fundVia(client, b.h.finance, bActive.deal.id, bActive.milestones[0]!.id);
      const aDeal = await activeDeal(client, a);
      return { a, b, bDraft, bActive, aDeal };
    }

    it('every id-taking route answers 404 NOT_FOUND for B ids and nothing in B changes', async () => {
      const { a, b, bDraft, bActive, aDeal } = await twoWorlds();
      const before = await dealSnapshot(b.workspace.id);
      const aBefore = await dealSnapshot(a.workspace.id);
      const fundedMid = bActive.milestones[0]!.id;
      const awaitingMid = bActive.milestones[1]!.id;
      const attempts: ['GET' | 'POST' | 'PATCH', string, object | undefined, Record<string, string>][] = [
        ['GET', `${DEALS}/${bDraft.deal.id}`, undefined, a.h.viewer],
        ['PATCH', `${DEALS}/${bDraft.deal.id}`, { title: 'Mine now' }, a.h.owner],
        ['POST', `${DEALS}/${bDraft.deal.id}/milestones`, { title: 'Extra', amount: 100_000 }, a.h.owner],
        ['PATCH', `${DEALS}/${bDraft.deal.id}/milestones/${bDraft.milestones[0]!.id}`, { amount: 10_000 }, a.h.owner],
        ['POST', `${DEALS}/${bDraft.deal.id}/activate`, {}, a.h.owner],
        ['POST', `${DEALS}/${bDraft.deal.id}/cancel`, {}, a.h.owner],
        ['POST', `${DEALS}/${bActive.deal.id}/cancel`, {}, a.h.owner],
        ['POST', `${DEALS}/${bActive.deal.id}/milestones/${awaitingMid}/fund`, { method: 'sandbox' }, a.h.owner],
        ['POST', `${DEALS}/${bActive.deal.id}/milestones/${fundedMid}/submit-evidence`, { summary: 'x' }, a.h.owner],
        ['POST', `${DEALS}/${bActive.deal.id}/milestones/${fundedMid}/dispute`, { reason: 'x' }, a.h.owner],
        // A's own deal with B's milestone ids.
        ['PATCH', `${DEALS}/${aDeal.deal.id}/milestones/${bDraft.milestones[0]!.id}`, { amount: 10_000 }, a.h.owner],
        ['POST', `${DEALS}/${aDeal.deal.id}/milestones/${awaitingMid}/fund`, { method: 'sandbox' }, a.h.owner],
        ['POST', `${DEALS}/${aDeal.deal.id}/milestones/${fundedMid}/submit-evidence`, { summary: 'x' }, a.h.owner],
        ['POST', `${DEALS}/${aDeal.deal.id}/milestones/${fundedMid}/dispute`, { reason: 'x' }, a.h.owner],
      ];
      for (const [method, path, body, h] of attempts) {
        const req = method === 'GET' ? client.get(path) : method === 'POST' ? client.post(path) : client.patch(path);
        const res = await (body === undefined ? req.set(h) : req.set(h).send(body));
        expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.equal(404);
        expect(res.body.error.code).to.equal('NOT_FOUND');
        expect(JSON.stringify(res.body)).to.not.include('B secret');
      }
      expect(await dealSnapshot(b.workspace.id)).to.deep.equal(before);
      expect(await dealSnapshot(a.workspace.id)).to.deep.equal(aBefore);
      // A's list never shows B's deals; B's list does.
      const aList = await client.get(DEALS).set(a.h.viewer);
      expect((aList.body.data as { id: string }[]).map((d) => d.id)).to.deep.equal([aDeal.deal.id]);
      expect(JSON.stringify(aList.body)).to.not.include('B secret');
      expect((await client.get(`${DEALS}?q=secret`).set(a.h.viewer)).body.pagination.total).to.equal(0);
      expect((await client.get(DEALS).set(b.h.viewer)).body.pagination.total).to.equal(2);
    });

    it("naming B's workspace in X-Enterprise-Account is 403 NO_WORKSPACE", async () => {
      const { a, b, bDraft } = await twoWorlds();
      const h = headersOf(await sessionOf(a.owner), b.workspace.id);
      expectError(await client.get(`${DEALS}/${bDraft.deal.id}`).set(h), 403, 'NO_WORKSPACE');
      expectError(await client.get(DEALS).set(h), 403, 'NO_WORKSPACE');
    });
  });
});

