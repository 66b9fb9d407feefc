/**
 * Milestone moves over HTTP (enterprise spec 3 milestone table, 4.4 fund, 5, 7, 8; D7;
 * issue 26): fund in the sandbox (finance; the answer's exact shape; the method always
 * recorded as sandbox; 403 on a live workspace, 409 for a live deal, 409 when not
 * awaiting_funding; 30 per minute), submit evidence (funded or revision_requested; document
 * ids must name documents of the deal: test/integration/documents), dispute (funded, evidence_submitted,
 * approved; the deal becomes disputed); every move from every status against the spec's
 * table (refusals 409 CONCURRENT_MODIFICATION, nothing changed); races (two funds, cancel
 * against fund); KYB approval of a workspace with sandbox deals (unfinished milestones
 * cancelled, released ones kept, deal.sandbox_closed, the workspace live).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { keyedFlights, statementsOf } from '../../helpers/statements.js';
import { headersOf, sessionOf } from '../../factories/enterprise.js';
import { submittedApplication } from '../../factories/kyb-review.js';
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
  fundPath,
  fundVia,
  milestoneRows,
  setMilestoneStatus,
  staffHeaders,
  statusesOf,
  type DealData,
  type Headers,
} from '../../factories/deals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';
import type { MilestoneStatus } from '../../../shared/deals/states.js';

const ALL: MilestoneStatus[] = ['draft', 'awaiting_funding', 'funded', 'evidence_submitted', 'revision_requested', 'approved', 'released', 'disputed', 'cancelled'];

/** Section 3 (milestone table), written out here: the statuses each move starts from. */
const FROM: Record<'fund' | 'submit-evidence' | 'dispute', MilestoneStatus[]> = {
  fund: ['awaiting_funding'],
  'submit-evidence': ['funded', 'revision_requested'],
  dispute: ['funded', 'evidence_submitted', 'approved'],
};
const TO = { fund: 'funded', 'submit-evidence': 'evidence_submitted', dispute: 'disputed' } as const;
const BODY = { fund: { method: 'va' }, 'submit-evidence': { summary: 'Barang diterima lengkap' }, dispute: { reason: 'Barang rusak' } };

const pinNow = () => clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));

describe('enterprise milestone moves', () => {
  const client = api();
  afterEach(() => clock.reset());

  const move = (h: Headers, dealId: string, mid: string, name: keyof typeof FROM, body: object = BODY[name]) =>
    client.post(`${DEALS}/${dealId}/milestones/${mid}/${name}`).set(h).send(body);

  function expectError(res: { status: number; body: { success?: boolean; error?: { code: string }; data?: unknown } }, status: number, code: string, label = ''): void {
    expect(res.status, `${label} ${JSON.stringify(res.body)}`).to.equal(status);
    expect(res.body.success, label).to.equal(false);
    expect(res.body.error!.code, label).to.equal(code);
    expect(res.body, label).to.not.have.property('data');
  }

  describe('fund (sandbox)', () => {
    it("reads the workspace, the deal and its milestones with the key's statement, locked in that order; its event goes with the COMMIT: three round trips in all", async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w, [1_000_000]);
      const stats = await statementsOf(() => client.post(fundPath(d.deal.id, d.milestones[0]!.id)).set(w.h.finance).set('Idempotency-Key', randomUUID()).send({ method: 'qris' }));
      const res = stats.result;
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const { opening, after } = keyedFlights(stats);
      expect(opening[0]).to.match(/^BEGIN TRANSACTION ISOLATION LEVEL READ COMMITTED/i);
      const order = ['idempotency_open', 'FROM workspaces WHERE id', 'FOR UPDATE OF d', 'FROM deal_milestones'].map((part) => opening.findIndex((t) => t.includes(part)));
      expect(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!)), opening.join('\n')).to.equal(true);
      const others = stats.sent.filter((t) => !opening.includes(t));
      expect(others.filter((t) => /from "workspaces"|from "deals"|select .* from "deal_milestones"/i.test(t)), 'read again on its own').to.deep.equal([]);
      // After the opening: the milestone's compare-and-set, then the event (held for the COMMIT) with the stored answer and COMMIT.
      expect(after.map((f) => f.length), after.map((f) => f.join(' | ')).join('\n')).to.deep.equal([1, 3]);
      expect(after[0]![0]).to.match(/^update "deal_milestones"/);
      expect(after[1]![0]).to.match(/workspace_events/);
      expect(after[1]![1]).to.match(/^INSERT INTO idempotency_keys/);
      expect(after[1]![2]).to.match(/^COMMIT/);
    });

    it('finance funds: the answer has exactly the spec fields, the method is recorded as sandbox; milestone.funded', async () => {
      pinNow();
      const w = await dealWorld(client);
      const d = await activeDeal(client, w, [1_000_000, 2_000_001], { fee_allocation: 'split', fee_buyer_percent: 37 });
      const [m1, m2] = d.milestones;
      const res = await client.post(fundPath(d.deal.id, m1!.id)).set(w.h.finance).send({ method: 'qris', reference: 'QR-2026-0001' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      // Buyer share of milestone 1 (split 37 over 3,000,001, fee 60,000): floor(22,200 x 1,000,000 / 3,000,001) = 7,399.
      expect(res.body).to.deep.equal({
        success: true,
        data: {
          milestone: { id: m1!.id, deal_id: d.deal.id, status: 'funded', amount: 1_000_000, buyer_fee: 7399, funding_amount: 1_007_399, funding_method: 'sandbox' },
          deal_status: 'funded',
        },
      });
      const [row1, row2] = await milestoneRows(d.deal.id);
      expect(row1).to.deep.include({ status: 'funded', funding_method: 'sandbox', funding_reference: 'QR-2026-0001' });
      expect(row1!.funded_at!.toISOString()).to.equal(clock.now().toISOString());
      expect(row2!.status).to.equal('awaiting_funding');
      const g = (await client.get(`${DEALS}/${d.deal.id}`).set(w.h.viewer)).body.data as DealData;
      expect(g.deal).to.deep.include({ status: 'funded', funded_amount: 1_000_000, total_amount: 3_000_001 });
      expect(g.milestones[0]).to.deep.include({ status: 'funded', funding_method: 'sandbox', funded_at: clock.now().toISOString() });
      expect(g.events[0]).to.deep.include({ event: 'milestone.funded', entity_type: 'milestone', entity_id: m1!.id, amount: 1_007_399, livemode: false, actor: { id: w.users.finance.id, name: w.users.finance.full_name } });
      // Every method of the body is accepted and recorded as sandbox; the owner (above finance) may fund too.
      const second = await client.post(fundPath(d.deal.id, m2!.id)).set(w.h.owner).send({ method: 'wire' });
      expect(second.status, JSON.stringify(second.body)).to.equal(200);
      expect(second.body.data.milestone).to.deep.include({ status: 'funded', funding_method: 'sandbox' });
      for (const method of ['va', 'ewallet', 'sandbox']) {
        const x = await activeDeal(client, w, [100_000]);
        const r = await client.post(fundPath(x.deal.id, x.milestones[0]!.id)).set(w.h.finance).send({ method });
        expect(r.status, method).to.equal(200);
        expect(r.body.data.milestone.funding_method).to.equal('sandbox');
        expect((await milestoneRows(x.deal.id))[0]!.funding_reference).to.equal(null);
      }
    });

    it('below finance: 403 FORBIDDEN for an operator and a viewer; nothing moves', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w);
      const before = await dealSnapshot(w.workspace.id);
      expectError(await client.post(fundPath(d.deal.id, d.milestones[0]!.id)).set(w.h.operator).send({ method: 'va' }), 403, 'FORBIDDEN');
      expectError(await client.post(fundPath(d.deal.id, d.milestones[0]!.id)).set(w.h.viewer).send({ method: 'va' }), 403, 'FORBIDDEN');
      expect(await dealSnapshot(w.workspace.id)).to.deep.equal(before);
    });

    it('the body: method required and one of the five; reference 1 to 120 chars', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w, [100_000]);
      const mid = d.milestones[0]!.id;
      const cases: [object, string][] = [
        [{}, 'method'],
        [{ method: 'cash' }, 'method'],
        [{ method: 'QRIS' }, 'method'],
        [{ method: 'va', reference: '' }, 'reference'],
        [{ method: 'va', reference: 'x'.repeat(121) }, 'reference'],
        [{ method: 'va', amount: 100_000 }, 'amount'],
      ];
      for (const [body, field] of cases) {
        const res = await client.post(fundPath(d.deal.id, mid)).set(w.h.finance).send(body);
        expectError(res, 400, 'INVALID_BODY', JSON.stringify(body));
        expect(res.body.error.details.fieldErrors, JSON.stringify(body)).to.have.property(field);
      }
      expect(await statusesOf(d.deal.id)).to.deep.equal(['awaiting_funding']);
      const ok = await client.post(fundPath(d.deal.id, mid)).set(w.h.finance).send({ method: 'va', reference: 'x'.repeat(120) });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    });

    it('a live workspace: 403 LIVE_FUNDING_IS_PLATFORM_CONFIRMED; a live deal in a sandbox: 409 LIVE_DEAL_IN_SANDBOX', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w);
      await db('workspaces').where({ id: w.workspace.id }).update({ is_sandbox: false, kyb_status: 'verified' });
      const before = await dealSnapshot(w.workspace.id);
      expectError(await client.post(fundPath(d.deal.id, d.milestones[0]!.id)).set(w.h.finance).send({ method: 'va' }), 403, 'LIVE_FUNDING_IS_PLATFORM_CONFIRMED');
      expect(await dealSnapshot(w.workspace.id)).to.deep.equal(before);
      // Back in the sandbox, a deal that is not a test deal cannot take sandbox money.
      await db('workspaces').where({ id: w.workspace.id }).update({ is_sandbox: true, kyb_status: 'not_started' });
      await db('deals').where({ id: d.deal.id }).update({ is_test: false });
      const snap = await dealSnapshot(w.workspace.id);
      expectError(await client.post(fundPath(d.deal.id, d.milestones[0]!.id)).set(w.h.finance).send({ method: 'va' }), 409, 'LIVE_DEAL_IN_SANDBOX');
      expect(await dealSnapshot(w.workspace.id)).to.deep.equal(snap);
    });

    it('unknown milestones and milestones of another deal are 404 NOT_FOUND', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w);
      const other = await activeDeal(client, w);
      expectError(await client.post(fundPath(d.deal.id, randomUUID())).set(w.h.finance).send({ method: 'va' }), 404, 'NOT_FOUND');
      expectError(await client.post(fundPath(d.deal.id, 'nope')).set(w.h.finance).send({ method: 'va' }), 404, 'NOT_FOUND');
      expectError(await client.post(fundPath(d.deal.id, other.milestones[0]!.id)).set(w.h.finance).send({ method: 'va' }), 404, 'NOT_FOUND');
      expectError(await client.post(fundPath(randomUUID(), d.milestones[0]!.id)).set(w.h.finance).send({ method: 'va' }), 404, 'NOT_FOUND');
      expect(await statusesOf(other.deal.id)).to.deep.equal(['awaiting_funding', 'awaiting_funding']);
    });

    it('Idempotency-Key: a retried fund replays the first answer instead of 409, and funds once', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w);
      const key = randomUUID();
      const first = await client.post(fundPath(d.deal.id, d.milestones[0]!.id)).set(w.h.finance).set('Idempotency-Key', key).send({ method: 'va' });
      expect(first.status).to.equal(200);
      const again = await client.post(fundPath(d.deal.id, d.milestones[0]!.id)).set(w.h.finance).set('Idempotency-Key', key).send({ method: 'va' });
      expect(again.status).to.equal(200);
      expect(again.headers['idempotent-replay']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expect((await feedRows(w.workspace.id, d.deal.id)).filter((e) => e.event === 'milestone.funded')).to.have.length(1);
      // Without the key, the second fund is refused.
      expectError(await client.post(fundPath(d.deal.id, d.milestones[0]!.id)).set(w.h.finance).send({ method: 'va' }), 409, 'CONCURRENT_MODIFICATION');
    });

    it('30 per minute per user: the 31st is 429 RATE_LIMITED and moves nothing; another user is not limited', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w, [100_000, 200_000]);
      const [m1, m2] = d.milestones;
      await fundVia(client, w.h.finance, d.deal.id, m1!.id); // 1
      for (let i = 2; i <= 30; i++) {
        const r = await client.post(fundPath(d.deal.id, m1!.id)).set(w.h.finance).send({ method: 'va' });
        expect(r.status, `request ${i}`).to.equal(409);
      }
      const limited = await client.post(fundPath(d.deal.id, m2!.id)).set(w.h.finance).send({ method: 'va' });
      expectError(limited, 429, 'RATE_LIMITED');
      expect(Number(limited.headers['retry-after'])).to.be.within(1, 60);
      expect(await statusesOf(d.deal.id)).to.deep.equal(['funded', 'awaiting_funding']);
      const ok = await client.post(fundPath(d.deal.id, m2!.id)).set(w.h.owner).send({ method: 'va' });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    });
  });

  describe('submit evidence', () => {
    it('from funded: evidence_submitted with the summary; milestone.evidence_submitted; the detail answer', async () => {
      pinNow();
      const w = await dealWorld(client);
      const d = await activeDeal(client, w);
      await fundVia(client, w.h.finance, d.deal.id, d.milestones[0]!.id);
      const res = await move(w.h.operator, d.deal.id, d.milestones[0]!.id, 'submit-evidence', { summary: 'Surat jalan dan foto terlampir', document_ids: [] });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const g = res.body.data as DealData;
      expect(Object.keys(g).sort()).to.deep.equal(['deal', 'events', 'milestones', 'outcome']);
      expect(g.milestones[0]).to.deep.include({ status: 'evidence_submitted', evidence_summary: 'Surat jalan dan foto terlampir', evidence_submitted_at: clock.now().toISOString() });
      expect(g.deal.status).to.equal('funded');
      expect(g.events[0]).to.deep.include({ event: 'milestone.evidence_submitted', entity_type: 'milestone', entity_id: d.milestones[0]!.id, livemode: false, actor: { id: w.users.operator.id, name: w.users.operator.full_name } });
      expect((await milestoneRows(d.deal.id))[0]!.evidence_submitted_by).to.equal(w.users.operator.id);
    });

    it('from revision_requested too', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w);
      await fundVia(client, w.h.finance, d.deal.id, d.milestones[0]!.id);
      await setMilestoneStatus(d.milestones[0]!.id, 'revision_requested');
      const res = await move(w.h.operator, d.deal.id, d.milestones[0]!.id, 'submit-evidence', { summary: 'Foto baru' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.milestones[0]).to.deep.include({ status: 'evidence_submitted', evidence_summary: 'Foto baru' });
    });

    it('document_ids naming no document of the deal are refused; the body rules; a viewer is 403', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w);
      const mid = d.milestones[0]!.id;
      await fundVia(client, w.h.finance, d.deal.id, mid);
      const before = await dealSnapshot(w.workspace.id);
      const docs = await move(w.h.operator, d.deal.id, mid, 'submit-evidence', { summary: 'Dengan dokumen', document_ids: [randomUUID()] });
      expectError(docs, 400, 'INVALID_BODY');
      expect(docs.body.error.details.fieldErrors).to.have.property('document_ids');
      for (const [body, field] of [
        [{}, 'summary'],
        [{ summary: '' }, 'summary'],
        [{ summary: 'x'.repeat(2001) }, 'summary'],
        [{ summary: 'ok', document_ids: ['not-a-uuid'] }, 'document_ids.0'],
      ] as [object, string][]) {
        const res = await move(w.h.operator, d.deal.id, mid, 'submit-evidence', body);
        expectError(res, 400, 'INVALID_BODY', JSON.stringify(body));
        expect(res.body.error.details.fieldErrors, JSON.stringify(body)).to.have.property(field);
      }
      expectError(await move(w.h.viewer, d.deal.id, mid, 'submit-evidence'), 403, 'FORBIDDEN');
      expect(await dealSnapshot(w.workspace.id)).to.deep.equal(before);
    });
  });

  describe('dispute', () => {
    for (const from of ['funded', 'evidence_submitted', 'approved'] as const) {
      it(`from ${from}: the milestone and the deal become disputed; milestone.disputed`, async () => {
        pinNow();
        const w = await dealWorld(client);
        const d = await activeDeal(client, w);
        const mid = d.milestones[1]!.id;
        await fundVia(client, w.h.finance, d.deal.id, mid);
        if (from !== 'funded') await setMilestoneStatus(mid, from);
        const res = await move(w.h.operator, d.deal.id, mid, 'dispute', { reason: 'Spesifikasi tidak sesuai' });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        const g = res.body.data as DealData;
        expect(g.deal.status).to.equal('disputed');
        expect(g.milestones.map((m) => m.status)).to.deep.equal(['awaiting_funding', 'disputed']);
        expect(g.milestones[1]).to.deep.include({ dispute_reason: 'Spesifikasi tidak sesuai', disputed_at: clock.now().toISOString() });
        expect(g.events[0]).to.deep.include({ event: 'milestone.disputed', entity_type: 'milestone', entity_id: mid, livemode: false });
        // The held money still counts as funded.
        expect(g.deal).to.deep.include({ funded_amount: 2_000_000 });
        const listed = await client.get(`${DEALS}?status=disputed`).set(w.h.viewer);
        expect((listed.body.data as { id: string }[]).map((x) => x.id)).to.deep.equal([d.deal.id]);
      });
    }

    it('the body needs a reason of 1 to 2000 chars; a viewer is 403', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w);
      const mid = d.milestones[0]!.id;
      await fundVia(client, w.h.finance, d.deal.id, mid);
      for (const body of [{}, { reason: '' }, { reason: 'x'.repeat(2001) }]) {
        const res = await move(w.h.operator, d.deal.id, mid, 'dispute', body);
        expectError(res, 400, 'INVALID_BODY', JSON.stringify(body));
        expect(res.body.error.details.fieldErrors).to.have.property('reason');
      }
      expectError(await move(w.h.viewer, d.deal.id, mid, 'dispute'), 403, 'FORBIDDEN');
      expect(await statusesOf(d.deal.id)).to.deep.equal(['funded', 'awaiting_funding']);
    });
  });

  describe('every move from every status (section 3)', () => {
    for (const name of ['fund', 'submit-evidence', 'dispute'] as const) {
      it(`${name}: allowed only from ${FROM[name].join(', ')}; otherwise 409 CONCURRENT_MODIFICATION and nothing changes`, async () => {
        const w = await dealWorld(client);
        // One milestone in each of the nine statuses (10,000 + i each), on an active sandbox deal.
        const d = await activeDeal(
          client,
          w,
          ALL.map((_, i) => 10_000 + i),
        );
        for (const [i, status] of ALL.entries()) await setMilestoneStatus(d.milestones[i]!.id, status);
        for (const [i, status] of ALL.entries()) {
          const mid = d.milestones[i]!.id;
          const before = (await milestoneRows(d.deal.id))[i]!;
          const eventsBefore = (await feedRows(w.workspace.id)).length;
          const h = name === 'fund' ? w.h.finance : w.h.operator;
          const res = await move(h, d.deal.id, mid, name);
          if (FROM[name].includes(status)) {
            expect(res.status, `${name} from ${status}: ${JSON.stringify(res.body)}`).to.equal(200);
            expect((await milestoneRows(d.deal.id))[i]!.status, `${name} from ${status}`).to.equal(TO[name]);
            expect((await feedRows(w.workspace.id)).length).to.equal(eventsBefore + 1);
          } else {
            expectError(res, 409, 'CONCURRENT_MODIFICATION', `${name} from ${status}`);
            expect((await milestoneRows(d.deal.id))[i], `${name} from ${status}`).to.deep.equal(before);
            expect((await feedRows(w.workspace.id)).length).to.equal(eventsBefore);
          }
        }
      });
    }

    it('moves on a draft deal (not activated) are refused: 409 CONCURRENT_MODIFICATION', async () => {
      const w = await dealWorld(client);
      const d = await createDealVia(client, w.h.operator, dealBody(w.cpId));
      const before = await dealSnapshot(w.workspace.id);
      expectError(await move(w.h.finance, d.deal.id, d.milestones[0]!.id, 'fund'), 409, 'CONCURRENT_MODIFICATION');
      expectError(await move(w.h.operator, d.deal.id, d.milestones[0]!.id, 'submit-evidence'), 409, 'CONCURRENT_MODIFICATION');
      expectError(await move(w.h.operator, d.deal.id, d.milestones[0]!.id, 'dispute'), 409, 'CONCURRENT_MODIFICATION');
      expect(await dealSnapshot(w.workspace.id)).to.deep.equal(before);
    });
  });

  describe('races', () => {
    it('two funds of one milestone at once: one 200, one 409 CONCURRENT_MODIFICATION, funded once', async () => {
      const w = await dealWorld(client);
      const h2 = headersOf(await sessionOf(w.owner));
      for (let round = 0; round < 3; round++) {
        const d = await activeDeal(client, w);
        const mid = d.milestones[0]!.id;
        const results = await Promise.all([
          client.post(fundPath(d.deal.id, mid)).set(w.h.finance).send({ method: 'va' }),
          client.post(fundPath(d.deal.id, mid)).set(h2).send({ method: 'qris' }),
        ]);
        expect(results.map((r) => r.status).sort(), JSON.stringify(results.map((r) => r.body as unknown))).to.deep.equal([200, 409]);
        expect(results.find((r) => r.status === 409)!.body.error.code).to.equal('CONCURRENT_MODIFICATION');
        expect(await statusesOf(d.deal.id)).to.deep.equal(['funded', 'awaiting_funding']);
        expect((await feedRows(w.workspace.id, d.deal.id)).filter((e) => e.event === 'milestone.funded')).to.have.length(1);
      }
    });

    it('two staff confirming one live milestone at once: one 200, one 409; posted once, and the ledger check holds', async () => {
      const w = await dealWorld(client);
      await db('workspaces').where({ id: w.workspace.id }).update({ is_sandbox: false, kyb_status: 'verified' });
      await db('counterparties').where({ id: w.cpId }).update({ kyb_status: 'verified' });
      const [s1, s2] = [await staffHeaders(), await staffHeaders()];
      for (let round = 0; round < 3; round++) {
        const d = await activeDeal(client, w);
        const mid = d.milestones[0]!.id;
        const path = `/v1/admin/enterprise/milestones/${mid}/confirm-funding`;
        const results = await Promise.all([client.post(path).set(s1).send({}), client.post(path).set(s2).send({})]);
        expect(results.map((r) => r.status).sort(), JSON.stringify(results.map((r) => r.body as unknown))).to.deep.equal([200, 409]);
        expect(results.find((r) => r.status === 409)!.body.error.code).to.equal('CONCURRENT_MODIFICATION');
        const entries = await db('journal_entries').where({ ref_type: 'deal_milestone', ref_id: mid });
        expect(entries).to.have.length(1);
        expect(await balanceOf(db, { milestoneId: mid, currency: 'IDR' })).to.equal(d.milestones[0]!.amount);
        expect(await checkLedger(db)).to.deep.equal([]);
      }
    });

    it('cancel against fund: exactly one wins and the final state agrees with it', async () => {
      const w = await dealWorld(client);
      const seen = new Set<string>();
      for (let round = 0; round < 6; round++) {
        const d = await activeDeal(client, w);
        const mid = d.milestones[0]!.id;
        const pair = [
          () => client.post(`${DEALS}/${d.deal.id}/cancel`).set(w.h.operator).send({}),
          () => client.post(fundPath(d.deal.id, mid)).set(w.h.finance).send({ method: 'va' }),
        ];
        // Alternate which request starts first.
        const [cancelRes, fundRes] = round % 2 === 0 ? await Promise.all([pair[0]!(), pair[1]!()]) : (await Promise.all([pair[1]!(), pair[0]!()])).reverse();
        const events = (await feedRows(w.workspace.id, d.deal.id)).map((e) => e.event);
        const row = await dealRow(d.deal.id);
        if (cancelRes!.status === 200) {
          seen.add('cancel');
          expectError(fundRes!, 409, 'CONCURRENT_MODIFICATION');
          expect(await statusesOf(d.deal.id)).to.deep.equal(['cancelled', 'cancelled']);
          expect(row.cancelled_at).to.not.equal(null);
          expect(events).to.include('deal.cancelled').and.not.include('milestone.funded');
        } else {
          seen.add('fund');
          expect(fundRes!.status, JSON.stringify(fundRes!.body)).to.equal(200);
          expectError(cancelRes!, 409, 'NOT_CANCELLABLE');
          expect(await statusesOf(d.deal.id)).to.deep.equal(['funded', 'awaiting_funding']);
          expect(row.cancelled_at).to.equal(null);
          expect(events).to.include('milestone.funded').and.not.include('deal.cancelled');
        }
        const status = (await client.get(`${DEALS}/${d.deal.id}`).set(w.h.viewer)).body.data.deal.status as string;
        expect(status).to.equal(cancelRes!.status === 200 ? 'cancelled' : 'funded');
      }
      expect(seen.size).to.be.greaterThan(0);
    });
  });

  describe('KYB approval of a workspace with sandbox deals', () => {
    it('cancels their unfinished milestones (released ones stay), writes deal.sandbox_closed, and the workspace is live', async () => {
      const { workspace, owner, application } = await submittedApplication({ name: 'Calon Live' });
      const h = headersOf(await sessionOf(owner));
      const cpId = await counterpartyVia(client, h);
      const body = (amounts: number[], title: string) => dealBody(cpId, amounts, { title, fee_allocation: 'split', fee_buyer_percent: 50 });
      // 1: draft.
      const draft = await createDealVia(client, h, body([1_000_000, 2_000_000], 'Draf'));
      // 2: active, one milestone funded with evidence, one awaiting funding.
      const active = await activateVia(client, h, (await createDealVia(client, h, body([1_000_000, 2_000_000], 'Aktif'))).deal.id);
      await fundVia(client, h, active.deal.id, active.milestones[0]!.id);
      expect((await move(h, active.deal.id, active.milestones[0]!.id, 'submit-evidence')).status).to.equal(200);
      // 3: one milestone released, one disputed, one awaiting funding.
      const partial = await activateVia(client, h, (await createDealVia(client, h, body([1_000_000, 2_000_000, 3_000_000], 'Sebagian'))).deal.id);
      await fundVia(client, h, partial.deal.id, partial.milestones[0]!.id);
      await setMilestoneStatus(partial.milestones[0]!.id, 'released', { released_at: clock.now() });
      await fundVia(client, h, partial.deal.id, partial.milestones[1]!.id);
      expect((await move(h, partial.deal.id, partial.milestones[1]!.id, 'dispute')).status).to.equal(200);
      // 4: already cancelled; 5: every milestone released (completed).
      const cancelled = await createDealVia(client, h, body([1_000_000], 'Batal'));
      expect((await client.post(`${DEALS}/${cancelled.deal.id}/cancel`).set(h).send({})).status).to.equal(200);
      const done = await activateVia(client, h, (await createDealVia(client, h, body([1_000_000], 'Selesai'))).deal.id);
      await setMilestoneStatus(done.milestones[0]!.id, 'released', { released_at: clock.now() });
      const untouched = async () => ({
        deals: await db('deals').whereIn('id', [cancelled.deal.id, done.deal.id]).orderBy('id'),
        milestones: await db('deal_milestones').whereIn('deal_id', [cancelled.deal.id, done.deal.id]).orderBy('id'),
      });
      const before = await untouched();
      const releasedBefore = (await milestoneRows(partial.deal.id))[0]!;
      const seqBefore = Math.max(...(await feedRows(workspace.id)).map((e) => Number(e.seq)));

      const staff = await staffHeaders();
      const res = await client.post(`/v1/admin/enterprise/kyb/${application.id}/approve`).set(staff).send({ risk_tier: 'standard' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);

      expect(await db('workspaces').where({ id: workspace.id }).first('is_sandbox', 'kyb_status')).to.deep.equal({ is_sandbox: false, kyb_status: 'verified' });
      expect(await statusesOf(draft.deal.id)).to.deep.equal(['cancelled', 'cancelled']);
      expect(await statusesOf(active.deal.id)).to.deep.equal(['cancelled', 'cancelled']);
      expect(await statusesOf(partial.deal.id)).to.deep.equal(['released', 'cancelled', 'cancelled']);
      expect((await milestoneRows(partial.deal.id))[0]).to.deep.equal(releasedBefore);
      expect(await untouched()).to.deep.equal(before);

      const after = (await feedRows(workspace.id)).filter((e) => Number(e.seq) > seqBefore);
      const closed = after.filter((e) => e.event === 'deal.sandbox_closed');
      expect(closed.map((e) => e.deal_id).sort()).to.deep.equal([draft.deal.id, active.deal.id, partial.deal.id].sort());
      for (const e of closed) {
        expect(e).to.deep.include({ entity_type: 'deal', entity_id: e.deal_id, actor_id: null, actor_label: 'Operator', livemode: false });
        expect(e.deal_reference).to.match(/^DL-\d{6}$/);
      }
      expect(after.map((e) => e.event)).to.include('workspace.live');
      expect(after.filter((e) => e.deal_id === cancelled.deal.id || e.deal_id === done.deal.id)).to.deep.equal([]);

      // The deals read as the rules say: cancelled; the partly released one completed (every milestone still live is released).
      const read = async (id: string) => (await client.get(`${DEALS}/${id}`).set(h)).body.data as DealData;
      expect((await read(draft.deal.id)).deal).to.deep.include({ status: 'cancelled', is_test: true });
      expect((await read(active.deal.id)).deal).to.deep.include({ status: 'cancelled', funded_amount: 0 });
      const p = await read(partial.deal.id);
      expect(p.deal).to.deep.include({ status: 'completed', total_amount: 1_000_000, funded_amount: 1_000_000, released_amount: 1_000_000 });
      // The fee totals cover the milestone that remains: its funding and payout amounts.
      expect(p.deal.fee).to.deep.include({ funding_total: p.milestones[0]!.funding_amount, payout_total: p.milestones[0]!.payout_amount });
      expect((await read(p.deal.id)).events[0]).to.deep.include({ event: 'deal.sandbox_closed', livemode: false });
      // A sandbox deal closed this way cannot be cancelled again.
      expectError(await client.post(`${DEALS}/${draft.deal.id}/cancel`).set(h).send({}), 409, 'INVALID_STATE');

      // The workspace is live: sandbox funding is refused; new deals are real (is_test false, livemode true).
      const live = await createDealVia(client, h, body([1_000_000], 'Live'));
      expect(live.deal.is_test).to.equal(false);
      expect(live.events[0]).to.deep.include({ event: 'deal.created', livemode: true });
      expectError(await client.post(fundPath(done.deal.id, done.milestones[0]!.id)).set(h).send({ method: 'va' }), 403, 'LIVE_FUNDING_IS_PLATFORM_CONFIRMED');
    });
  });
});
