/**
 * POST /v1/enterprise/approvals/:milestoneId/decide (enterprise spec 3 milestone table, 4.6,
 * 5, 7, 8; D7 Decide): the four-eyes matrix (below, at and above the threshold), one
 * decision per person and round (409 INVALID_STATE), the evidence submitter never decides
 * (403 FORBIDDEN, whatever their role), a rejection or revision request closes the round
 * and the next evidence opens a fresh one needing the full count, roles and key scopes,
 * milestones not in evidence_submitted (409 CONCURRENT_MODIFICATION), other workspaces
 * (404), races of real concurrent requests, 30 per minute, Idempotency-Key, and the deal's
 * outcome (approvals_by_people, revisions).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { addMember, headersOf, sessionOf, workspaceKey } from '../../factories/enterprise.js';
import { activeDeal, DEALS, feedRows, fundVia, type DealData } from '../../factories/deals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import {
  APPROVALS,
  THRESHOLD,
  approvalSnapshot,
  approvalWorld,
  decide,
  decideOk,
  decisionRows,
  expectError,
  milestoneStatus,
  slotRows,
  submitVia,
  submittedDeal,
} from './support.js';

const pinNow = () => clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));

describe('enterprise approvals: decide', () => {
  const client = api();
  afterEach(() => clock.reset());

  describe('the four-eyes matrix (threshold Rp2.000.000)', () => {
    const cases = [
      { label: 'below the threshold', amount: THRESHOLD - 1, required: 1 },
      { label: 'exactly at the threshold', amount: THRESHOLD, required: 2 },
      { label: 'above the threshold', amount: THRESHOLD + 1, required: 2 },
    ];
    for (const c of cases) {
      it(`${c.label} (${c.amount}): ${c.required} approval(s) by different people approve the milestone`, async () => {
        pinNow();
        const w = await approvalWorld(client);
        const d = await submittedDeal(client, w, [c.amount]);
        const mid = d.milestones[0]!.id;
        const first = await decideOk(client, w.h.finance, mid, { decision: 'approve', note: 'Dokumen lengkap' });
        expect(first.item).to.deep.include({ approvals_required: c.required, approvals_done: 1, my_decision: 'approve' });
        expect(first.decision.approvals_required).to.equal(c.required);
        expect(first.decision.approvals[0]).to.deep.equal({
          id: first.decision.approvals[0]!.id,
          approver: { id: w.users.finance.id, name: w.users.finance.full_name },
          status: 'approved',
          note: 'Dokumen lengkap',
          decided_at: clock.now().toISOString(),
        });
        const feed = await feedRows(w.workspace.id, d.deal.id);
        if (c.required === 1) {
          expect(first.item.status).to.equal('approved');
          expect(first.decision.approvals).to.have.length(1);
          expect(feed.at(-1)).to.deep.include({ event: 'milestone.approved', entity_type: 'milestone', entity_id: mid, actor_id: w.users.finance.id, livemode: false });
          expect(Number(feed.at(-1)!.amount)).to.equal(c.amount);
          const row = (await db('deal_milestones').where({ id: mid }).first()) as { status: string; approved_at: Date };
          expect(row.status).to.equal('approved');
          expect(row.approved_at.toISOString()).to.equal(clock.now().toISOString());
          // Approved: no further decision of anybody.
          expectError(await decide(client, w.h.owner, mid), 409, 'CONCURRENT_MODIFICATION');
          return;
        }
        // Four-eyes: the first approval is recorded, the milestone waits for a second person.
        expect(first.item.status).to.equal('evidence_submitted');
        expect(first.decision.approvals.map((s) => s.status)).to.deep.equal(['approved', 'pending']);
        expect(first.decision.approvals[1]).to.deep.include({ approver: null, note: null, decided_at: null });
        expect(feed.at(-1)).to.deep.include({ event: 'milestone.approval_recorded', entity_id: mid, actor_id: w.users.finance.id });
        expect(await milestoneStatus(mid)).to.equal('evidence_submitted');
        clock.advance(60_000);
        const second = await decideOk(client, w.h.owner, mid);
        expect(second.item).to.deep.include({ status: 'approved', approvals_done: 2, my_decision: 'approve' });
        expect(second.decision.approvals.map((s) => [s.status, s.approver?.id])).to.deep.equal([
          ['approved', w.users.finance.id],
          ['approved', w.owner.id],
        ]);
        expect((await feedRows(w.workspace.id, d.deal.id)).at(-1)).to.deep.include({ event: 'milestone.approved', actor_id: w.owner.id });
        expect((await decisionRows(mid)).map((r) => [r.round, r.decision, r.decided_by])).to.deep.equal([
          [1, 'approve', w.users.finance.id],
          [1, 'approve', w.owner.id],
        ]);
      });
    }

    it('approvals_required is the one fixed at activation: a threshold changed afterwards does not change it', async () => {
      const w = await approvalWorld(client);
      const d = await submittedDeal(client, w, [THRESHOLD]);
      const mid = d.milestones[0]!.id;
      await db('workspaces').where({ id: w.workspace.id }).update({ four_eyes_threshold: 1_000_000_000 });
      const first = await decideOk(client, w.h.finance, mid);
      expect(first.item).to.deep.include({ status: 'evidence_submitted', approvals_required: 2, approvals_done: 1 });
      // And the other way: a one-approval milestone stays one even when the threshold drops under it.
      const e = await submittedDeal(client, w, [1_000_000]);
      await db('workspaces').where({ id: w.workspace.id }).update({ four_eyes_threshold: 10_000 });
      expect((await decideOk(client, w.h.finance, e.milestones[0]!.id)).item).to.deep.include({ status: 'approved', approvals_required: 1 });
    });
  });

  describe('who may decide', () => {
    it('the same person approving twice in a round: 409 INVALID_STATE; the milestone stays evidence_submitted with one approval', async () => {
      const w = await approvalWorld(client);
      const d = await submittedDeal(client, w, [THRESHOLD]);
      const mid = d.milestones[0]!.id;
      await decideOk(client, w.h.finance, mid);
      const before = await approvalSnapshot(w.workspace.id);
      for (const decision of ['approve', 'reject', 'revision']) {
        const again = await decide(client, w.h.finance, mid, { decision });
        expectError(again, 409, 'INVALID_STATE', decision);
        expect(again.body.error!.message).to.match(/already decided this round/);
      }
      expect(await approvalSnapshot(w.workspace.id)).to.deep.equal(before);
      expect(await milestoneStatus(mid)).to.equal('evidence_submitted');
      expect((await slotRows(mid)).map((s) => s.status)).to.deep.equal(['approved', 'pending']);
    });

    it('the evidence submitter: 403 FORBIDDEN with a clear message, also when they are finance or the owner; nothing changes', async () => {
      const w = await approvalWorld(client);
      for (const [who, h] of [
        ['operator', w.h.operator],
        ['finance', w.h.finance],
        ['owner', w.h.owner],
      ] as const) {
        const d = await submittedDeal(client, w, [THRESHOLD], h);
        const mid = d.milestones[0]!.id;
        const before = await approvalSnapshot(w.workspace.id);
        if (who !== 'operator') {
          for (const decision of ['approve', 'reject', 'revision']) {
            const res = await decide(client, h, mid, { decision });
            expectError(res, 403, 'FORBIDDEN', `${who} ${decision}`);
            expect(res.body.error!.message).to.match(/submitted the evidence/);
          }
        } else {
          // An operator is below finance anyway.
          expectError(await decide(client, h, mid), 403, 'FORBIDDEN');
        }
        expect(await approvalSnapshot(w.workspace.id), who).to.deep.equal(before);
        // Someone else may decide it.
        expect((await decideOk(client, who === 'finance' ? w.finance2.h : w.h.finance, mid)).item.approvals_done).to.equal(1);
      }
    });

    it('operator and viewer: 403 FORBIDDEN; a read key: 403 SCOPE_REQUIRED; a read+write key of the owner decides', async () => {
      const w = await approvalWorld(client);
      const d = await submittedDeal(client, w, [THRESHOLD]);
      const mid = d.milestones[0]!.id;
      const owner = { member: w.ownerMember, user: w.owner };
      const readKey = await workspaceKey(w.workspace.id, owner, ['read']);
      const before = await approvalSnapshot(w.workspace.id);
      expectError(await decide(client, w.h.operator, mid), 403, 'FORBIDDEN');
      expectError(await decide(client, w.h.viewer, mid), 403, 'FORBIDDEN');
      expectError(await decide(client, headersOf({ kind: 'workspace_key', key: readKey.key }), mid), 403, 'SCOPE_REQUIRED');
      expect(await approvalSnapshot(w.workspace.id)).to.deep.equal(before);
      const writeKey = await workspaceKey(w.workspace.id, owner, ['read', 'write']);
      const res = await decideOk(client, headersOf({ kind: 'workspace_key', key: writeKey.key }), mid);
      expect(res.decision.approvals[0]!.approver).to.deep.equal({ id: w.owner.id, name: w.owner.full_name });
      // The key acts as the owner: the owner cannot approve again in this round.
      expectError(await decide(client, w.h.owner, mid), 409, 'INVALID_STATE');
    });
  });

  describe('reject and revision', () => {
    it('a rejection after one approval closes the round; new evidence opens a round needing the full count, where the earlier approver may approve again', async () => {
      pinNow();
      const w = await approvalWorld(client);
      const d = await submittedDeal(client, w, [THRESHOLD, 500_000]);
      const mid = d.milestones[0]!.id;
      await decideOk(client, w.h.finance, mid, { decision: 'approve' });
      clock.advance(1000);
      const rejected = await decideOk(client, w.finance2.h, mid, { decision: 'reject', note: 'Foto buram' });
      expect(rejected.item).to.deep.include({ status: 'revision_requested', approvals_done: 1, my_decision: 'reject' });
      // The round is closed: its approval stays, the unfilled slot is dropped.
      expect(rejected.decision.approvals.map((s) => [s.status, s.approver?.id])).to.deep.equal([['approved', w.users.finance.id]]);
      expect((await slotRows(mid)).map((s) => [s.round, s.slot, s.status])).to.deep.equal([[1, 1, 'approved']]);
      expect((await feedRows(w.workspace.id, d.deal.id)).at(-1)).to.deep.include({ event: 'milestone.rejected', entity_id: mid, actor_id: w.finance2.user.id });
      expect((await decisionRows(mid)).at(-1)).to.deep.include({ round: 1, decision: 'reject', decided_by: w.finance2.user.id, note: 'Foto buram' });
      // Nobody decides a closed round.
      expectError(await decide(client, w.h.owner, mid), 409, 'CONCURRENT_MODIFICATION');

      // New evidence: round 2, two pending slots again, nobody has decided it yet.
      await submitVia(client, w.h.operator, d.deal.id, mid, 'Foto baru yang jelas');
      expect((await slotRows(mid)).filter((s) => s.round === 2).map((s) => [s.slot, s.status])).to.deep.equal([
        [1, 'pending'],
        [2, 'pending'],
      ]);
      const again = await decideOk(client, w.h.finance, mid);
      expect(again.item).to.deep.include({ status: 'evidence_submitted', approvals_done: 1, my_decision: 'approve' });
      // The one who rejected round 1 may decide round 2 too; two approvals approve it.
      const done = await decideOk(client, w.finance2.h, mid);
      expect(done.item).to.deep.include({ status: 'approved', approvals_done: 2 });
      expect((await decisionRows(mid)).map((r) => [r.round, r.decision, r.decided_by])).to.deep.equal([
        [1, 'approve', w.users.finance.id],
        [1, 'reject', w.finance2.user.id],
        [2, 'approve', w.users.finance.id],
        [2, 'approve', w.finance2.user.id],
      ]);
      // The deal's outcome: three approve decisions by people, one rejection counted as a revision.
      const g = await client.get(`${DEALS}/${d.deal.id}`).set(w.h.viewer);
      expect(g.body.data.outcome).to.deep.include({ approvals_by_people: 3, revisions: 1 });
      expect((g.body.data as DealData).milestones[0]).to.deep.include({ status: 'approved' });
    });

    it('a revision request (first decision of the round): revision_requested, milestone.revision_requested, no slot left pending', async () => {
      const w = await approvalWorld(client);
      const d = await submittedDeal(client, w, [1_000_000]);
      const mid = d.milestones[0]!.id;
      const res = await decideOk(client, w.h.finance, mid, { decision: 'revision', note: 'Lampirkan surat jalan' });
      expect(res.item).to.deep.include({ status: 'revision_requested', approvals_done: 0, my_decision: 'revision' });
      expect(res.decision.approvals).to.deep.equal([]);
      expect(await slotRows(mid)).to.deep.equal([]);
      expect((await feedRows(w.workspace.id, d.deal.id)).at(-1)).to.deep.include({ event: 'milestone.revision_requested', entity_id: mid });
      const g = await client.get(`${DEALS}/${d.deal.id}`).set(w.h.viewer);
      expect(g.body.data.outcome).to.deep.include({ approvals_by_people: 0, revisions: 1 });
      expect(g.body.data.milestones[0]).to.deep.include({ status: 'revision_requested', approvals: [] });
    });
  });

  describe('refusals', () => {
    it('a milestone not in evidence_submitted (funded, awaiting funding, approved): 409 CONCURRENT_MODIFICATION; nothing changes', async () => {
      const w = await approvalWorld(client);
      const d = await activeDeal(client, w, [1_000_000, 1_000_000, 1_000_000]);
      const [m1, m2, m3] = d.milestones;
      await fundVia(client, w.h.finance, d.deal.id, m1!.id);
      await fundVia(client, w.h.finance, d.deal.id, m3!.id);
      await submitVia(client, w.h.operator, d.deal.id, m3!.id);
      await decideOk(client, w.h.finance, m3!.id);
      const before = await approvalSnapshot(w.workspace.id);
      for (const m of [m1!, m2!, m3!]) {
        for (const decision of ['approve', 'reject', 'revision']) expectError(await decide(client, w.finance2.h, m.id, { decision }), 409, 'CONCURRENT_MODIFICATION');
      }
      expect(await approvalSnapshot(w.workspace.id)).to.deep.equal(before);
    });

    it('the body: decision required and one of approve, reject, revision; note at most 2000 chars', async () => {
      const w = await approvalWorld(client);
      const d = await submittedDeal(client, w, [THRESHOLD]);
      const mid = d.milestones[0]!.id;
      const before = await approvalSnapshot(w.workspace.id);
      for (const [body, field] of [
        [{}, 'decision'],
        [{ decision: 'approved' }, 'decision'],
        [{ decision: 'approve', note: 'x'.repeat(2001) }, 'note'],
        [{ decision: 'approve', extra: 1 }, 'extra'],
      ] as [Record<string, unknown>, string][]) {
        const res = await decide(client, w.h.finance, mid, body);
        expectError(res, 400, 'INVALID_BODY', JSON.stringify(body).slice(0, 60));
        expect((res.body.error as unknown as { details: { fieldErrors: Record<string, unknown> } }).details.fieldErrors).to.have.property(field);
      }
      expect(await approvalSnapshot(w.workspace.id)).to.deep.equal(before);
      // 2000 chars is fine; an empty note is saved as none.
      const long = await decideOk(client, w.h.finance, mid, { decision: 'approve', note: 'x'.repeat(2000) });
      expect(long.decision.approvals[0]!.note).to.have.length(2000);
      const empty = await decideOk(client, w.h.owner, mid, { decision: 'approve', note: '' });
      expect(empty.decision.approvals[1]!.note).to.equal(null);
      expect((await decisionRows(mid)).map((r) => r.note?.length ?? null)).to.deep.equal([2000, null]);
    });

    it("another workspace's milestone, an unknown id and a malformed id: 404 NOT_FOUND; nothing changes in either workspace", async () => {
      const a = await approvalWorld(client, 'A');
      const b = await approvalWorld(client, 'B');
      const d = await submittedDeal(client, b, [1_000_000]);
      const mid = d.milestones[0]!.id;
      const beforeA = await approvalSnapshot(a.workspace.id);
      const beforeB = await approvalSnapshot(b.workspace.id);
      for (const id of [mid, randomUUID(), 'not-a-uuid', '00000000-0000-0000-0000-000000000000']) {
        expectError(await decide(client, a.h.owner, id), 404, 'NOT_FOUND', id);
      }
      // A's owner naming B's workspace: not a member there.
      expectError(await decide(client, { ...a.h.owner, 'X-Enterprise-Account': b.workspace.id }, mid), 403, 'NO_WORKSPACE');
      expect(await approvalSnapshot(a.workspace.id)).to.deep.equal(beforeA);
      expect(await approvalSnapshot(b.workspace.id)).to.deep.equal(beforeB);
      expect(await milestoneStatus(mid)).to.equal('evidence_submitted');
    });
  });

  describe('races (real concurrent requests)', () => {
    it('two different finance members approving a four-eyes milestone at once: both 200, approved once with two approved slots', async () => {
      const w = await approvalWorld(client);
      for (let round = 0; round < 3; round++) {
        const d = await submittedDeal(client, w, [THRESHOLD]);
        const mid = d.milestones[0]!.id;
        const results = await Promise.all([decide(client, w.h.finance, mid), decide(client, w.finance2.h, mid)]);
        expect(results.map((r) => r.status), JSON.stringify(results.map((r) => r.body as unknown))).to.deep.equal([200, 200]);
        expect(results.map((r) => (r.body.data as { item: { status: string } }).item.status).sort()).to.deep.equal(['approved', 'evidence_submitted']);
        expect(await milestoneStatus(mid)).to.equal('approved');
        const slots = await slotRows(mid);
        expect(slots.map((s) => s.status)).to.deep.equal(['approved', 'approved']);
        expect(slots.map((s) => s.approver_id).sort()).to.deep.equal([w.users.finance.id, w.finance2.user.id].sort());
        const events = (await feedRows(w.workspace.id, d.deal.id)).map((e) => e.event);
        expect(events.filter((e) => e === 'milestone.approved')).to.have.length(1);
        expect(events.filter((e) => e === 'milestone.approval_recorded')).to.have.length(1);
        expect(await decisionRows(mid)).to.have.length(2);
      }
    });

    it('two approvals of a one-approval milestone at once: one 200, one 409 CONCURRENT_MODIFICATION, one decision row', async () => {
      const w = await approvalWorld(client);
      for (let round = 0; round < 3; round++) {
        const d = await submittedDeal(client, w, [1_000_000]);
        const mid = d.milestones[0]!.id;
        const results = await Promise.all([decide(client, w.h.finance, mid), decide(client, w.finance2.h, mid)]);
        expect(results.map((r) => r.status).sort(), JSON.stringify(results.map((r) => r.body as unknown))).to.deep.equal([200, 409]);
        expect(results.find((r) => r.status === 409)!.body.error.code).to.equal('CONCURRENT_MODIFICATION');
        expect(await milestoneStatus(mid)).to.equal('approved');
        expect(await decisionRows(mid)).to.have.length(1);
        expect((await slotRows(mid)).map((s) => s.status)).to.deep.equal(['approved']);
        expect((await feedRows(w.workspace.id, d.deal.id)).filter((e) => e.event === 'milestone.approved')).to.have.length(1);
      }
    });

    it('one person approving a four-eyes milestone twice at once (two sessions): one 200, one 409 INVALID_STATE', async () => {
      const w = await approvalWorld(client);
      const h2 = headersOf(await sessionOf(w.users.finance));
      const d = await submittedDeal(client, w, [THRESHOLD]);
      const mid = d.milestones[0]!.id;
      const results = await Promise.all([decide(client, w.h.finance, mid), decide(client, h2, mid)]);
      expect(results.map((r) => r.status).sort()).to.deep.equal([200, 409]);
      expect(results.find((r) => r.status === 409)!.body.error.code).to.equal('INVALID_STATE');
      expect((await slotRows(mid)).map((s) => s.status)).to.deep.equal(['approved', 'pending']);
      expect(await decisionRows(mid)).to.have.length(1);
    });

    it('an approval against a rejection at once: exactly one order wins and the rows agree with it', async () => {
      const w = await approvalWorld(client);
      for (let round = 0; round < 3; round++) {
        const d = await submittedDeal(client, w, [1_000_000]);
        const mid = d.milestones[0]!.id;
        const [approve, reject] = await Promise.all([decide(client, w.h.finance, mid), decide(client, w.finance2.h, mid, { decision: 'reject' })]);
        expect([approve.status, reject.status].sort()).to.deep.equal([200, 409]);
        const status = await milestoneStatus(mid);
        expect(status).to.equal(approve.status === 200 ? 'approved' : 'revision_requested');
        expect((await decisionRows(mid)).map((r) => r.decision)).to.deep.equal([approve.status === 200 ? 'approve' : 'reject']);
      }
    });
  });

  describe('limits and idempotency', () => {
    it('30 per minute per user: the 31st is 429 RATE_LIMITED and decides nothing; another user is not limited', async () => {
      const w = await approvalWorld(client);
      const d = await submittedDeal(client, w, [1_000_000, 1_000_000]);
      const [m1, m2] = d.milestones;
      await decideOk(client, w.h.finance, m1!.id); // 1
      for (let i = 2; i <= 30; i++) expect((await decide(client, w.h.finance, m1!.id)).status, `request ${i}`).to.equal(409);
      const limited = await decide(client, w.h.finance, m2!.id);
      expectError(limited, 429, 'RATE_LIMITED');
      expect(Number(limited.headers['retry-after'])).to.be.within(1, 60);
      expect(await milestoneStatus(m2!.id)).to.equal('evidence_submitted');
      expect(await decisionRows(m2!.id)).to.deep.equal([]);
      expect((await decideOk(client, w.finance2.h, m2!.id)).item.status).to.equal('approved');
    });

    it('Idempotency-Key: a retried decision replays the first answer (no 409), decided once; the same key with another body is 422', async () => {
      const w = await approvalWorld(client);
      const d = await submittedDeal(client, w, [THRESHOLD]);
      const mid = d.milestones[0]!.id;
      const key = randomUUID();
      const first = await decide(client, w.h.finance, mid).set('Idempotency-Key', key);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const again = await decide(client, w.h.finance, mid).set('Idempotency-Key', key);
      expect(again.status).to.equal(200);
      expect(again.headers['idempotent-replay']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expect(await decisionRows(mid)).to.have.length(1);
      expect((await feedRows(w.workspace.id, d.deal.id)).filter((e) => e.event === 'milestone.approval_recorded')).to.have.length(1);
      expectError(await decide(client, w.h.finance, mid, { decision: 'reject' }).set('Idempotency-Key', key), 422, 'IDEMPOTENCY_KEY_CONFLICT');
      // Without the key, the second approval of the same person is refused.
      expectError(await decide(client, w.h.finance, mid), 409, 'INVALID_STATE');
    });
  });

  it('members joined later decide too; the decided milestone answers GET /approvals/:id with the same detail', async () => {
    const w = await approvalWorld(client);
    const late = await addMember(w.workspace.id, 'admin');
    const h = headersOf(await sessionOf(late.user));
    const d = await submittedDeal(client, w, [1_000_000]);
    const mid = d.milestones[0]!.id;
    const answer = await decideOk(client, h, mid);
    const read = await client.get(`${APPROVALS}/${mid}`).set(h);
    expect(read.status).to.equal(200);
    expect(read.body.data).to.deep.equal(answer);
  });
});
