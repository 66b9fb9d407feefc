/**
 * Authority is checked when the money moves (issue 42 point 5; decision 0019 "Issue 42:
 * authority when money moves"): decide, release and payout-instruction writes read the
 * acting member again under the workspace lock, inside the money's transaction. A member
 * demoted, removed or suspended, or a workspace key revoked, while the request is in flight
 * (after the auth layer let it in, before its transaction read the member) is refused with
 * the code the auth layer would give now, and nothing moves.
 *
 * "In flight" is made exact: the test holds the workspace row's lock (as a member write
 * does), changes the member in that transaction, lets the request pass the auth layer and
 * block on the lock, then commits. Then a race of real concurrent requests (a demotion
 * through PATCH /members against a release): the release either ran before the demotion
 * committed (its events come first in the feed) or is refused.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { api } from '../../helpers/app.js';
import { dealSnapshot, feedRows, milestoneRows, type DealWorld, type Headers } from '../../factories/deals.js';
import { headersOf, workspaceKey } from '../../factories/enterprise.js';
import { approve, disbursementsOf, fundedDeal, instructionVia, releasePath, type ReleaseWorld } from '../../factories/releases.js';
import { approvalWorld, decide, decisionRows, submittedDeal } from '../approvals/support.js';
import { db } from '../../../shared/db.js';

type Res = { status: number; body: { success?: boolean; error?: { code: string }; data?: unknown } };

const memberOf = async (workspaceId: string, userId: string): Promise<string> =>
  (await db('workspace_members').where({ workspace_id: workspaceId, user_id: userId }).first<{ id: string }>('id')).id;

/** A member write as members.ts makes it: the workspace row locked first, then the change. */
const demote = (memberId: string, role: string) => (trx: Knex.Transaction) => trx('workspace_members').where({ id: memberId }).update({ role, updated_at: new Date() });
const remove = (memberId: string) => (trx: Knex.Transaction) => trx('workspace_members').where({ id: memberId }).update({ status: 'removed', removed_at: new Date(), updated_at: new Date() });
const suspend = (memberId: string) => (trx: Knex.Transaction) => trx('workspace_members').where({ id: memberId }).update({ status: 'suspended', updated_at: new Date() });
const revoke = (keyId: string) => (trx: Knex.Transaction) => trx('workspace_api_keys').where({ id: keyId }).update({ revoked_at: new Date() });

/**
 * `send` runs while a transaction holds the workspace row's lock and has made `change`: the
 * request passes the auth layer (the change is not committed), then waits on the lock; the
 * change commits; the request's answer is returned.
 */
async function inFlight(workspaceId: string, change: (trx: Knex.Transaction) => Promise<unknown>, send: () => PromiseLike<Res>): Promise<Res> {
  const trx = await db.transaction();
  let answered = false;
  let pending: Promise<Res>;
  try {
    await trx('workspaces').where({ id: workspaceId }).forUpdate().first('id');
    await change(trx);
    pending = Promise.resolve(send()).then((r) => {
      answered = true;
      return r;
    });
    let waiting = false;
    for (let i = 0; i < 500 && !waiting && !answered; i++) {
      const rows = await db.raw<{ rows: unknown[] }>(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()`);
      waiting = rows.rows.length > 0;
      if (!waiting) await new Promise((r) => setTimeout(r, 10));
    }
    expect(answered, 'the request answered before it reached the workspace lock').to.equal(false);
    expect(waiting, 'the request never waited on the workspace lock').to.equal(true);
  } catch (err) {
    await trx.rollback();
    throw err;
  }
  await trx.commit();
  return pending;
}

function refused(res: Res, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.error!.code).to.equal(code);
}

describe('issue 42: authority is checked when the money moves', () => {
  const client = api();

  describe('release', () => {
    let r: ReleaseWorld;
    let mid: string;
    let body: { splits: { payout_instruction_id: string; amount: number }[] };
    let financeMember: string;
    beforeEach(async () => {
      r = await fundedDeal(client, 'live');
      mid = r.mids[0]!;
      await approve(mid);
      const a = await instructionVia(client, r, 'Utama');
      body = { splits: [{ payout_instruction_id: a, amount: Number((await milestoneRows(r.deal.deal.id))[0]!.payout_amount) }] };
      financeMember = await memberOf(r.w.workspace.id, r.w.users.finance.id);
    });
    const release = (h: Headers, key?: string) => {
      const req = client.post(releasePath(r.deal.deal.id, mid)).set(h);
      return (key ? req.set('Idempotency-Key', key) : req).send(body);
    };
    /** Nothing of the workspace moved: deals, milestones, events, no payout. */
    const nothingMoved = async (fn: () => Promise<void>) => {
      const before = await dealSnapshot(r.w.workspace.id);
      await fn();
      expect(await dealSnapshot(r.w.workspace.id)).to.deep.equal(before);
      expect(await disbursementsOf(mid)).to.deep.equal([]);
    };

    for (const keyed of [false, true]) {
      const how = keyed ? 'keyed (the member read ahead with the key statement)' : 'without Idempotency-Key';
      it(`${how}: demoted to operator while in flight: 403 FORBIDDEN, nothing moves`, () =>
        nothingMoved(async () => {
          refused(await inFlight(r.w.workspace.id, demote(financeMember, 'operator'), () => release(r.w.h.finance, keyed ? randomUUID() : undefined)), 403, 'FORBIDDEN');
        }));

      it(`${how}: removed while in flight: 403 NO_WORKSPACE, nothing moves`, () =>
        nothingMoved(async () => {
          refused(await inFlight(r.w.workspace.id, remove(financeMember), () => release(r.w.h.finance, keyed ? randomUUID() : undefined)), 403, 'NO_WORKSPACE');
        }));
    }

    it('suspended (member status) while in flight: 403 NO_WORKSPACE, nothing moves', () =>
      nothingMoved(async () => {
        refused(await inFlight(r.w.workspace.id, suspend(financeMember), () => release(r.w.h.finance)), 403, 'NO_WORKSPACE');
      }));

    it("a workspace key: revoked, or its creator removed, while in flight: 401 INVALID_TOKEN; its creator demoted to viewer: 403 FORBIDDEN; nothing moves", async () => {
      const key = await workspaceKey(r.w.workspace.id, { member: r.w.ownerMember, user: r.w.owner }, ['read', 'write']);
      const h = headersOf({ kind: 'workspace_key', key: key.key });
      const key2 = await workspaceKey(r.w.workspace.id, { member: r.w.ownerMember, user: r.w.owner }, ['read', 'write']);
      const h2 = headersOf({ kind: 'workspace_key', key: key2.key });
      await nothingMoved(async () => {
        refused(await inFlight(r.w.workspace.id, revoke(key.id), () => release(h, randomUUID())), 401, 'INVALID_TOKEN');
        // The creator is put back after each (the test's own writes, not a route's).
        refused(await inFlight(r.w.workspace.id, demote(r.w.ownerMember.id, 'viewer'), () => release(h2)), 403, 'FORBIDDEN');
        await db('workspace_members').where({ id: r.w.ownerMember.id }).update({ role: 'owner' });
        refused(await inFlight(r.w.workspace.id, remove(r.w.ownerMember.id), () => release(h2, randomUUID())), 401, 'INVALID_TOKEN');
        await db('workspace_members').where({ id: r.w.ownerMember.id }).update({ status: 'active', removed_at: null });
      });
    });

    it('a change that keeps the rights (finance promoted to admin in flight) releases, acting with the new role', async () => {
      const res = await inFlight(r.w.workspace.id, demote(financeMember, 'admin'), () => release(r.w.h.finance, randomUUID()));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(await disbursementsOf(mid)).to.have.length(1);
    });

    it('a demotion racing a release (real concurrent requests): the release either ran before the demotion committed, or is refused; never after it', async () => {
      const outcomes = new Set<string>();
      for (let round = 0; round < 6; round++) {
        const rr = round === 0 ? r : await fundedDeal(client, 'live', undefined, undefined, r.w);
        const m = rr.mids[0]!;
        await approve(m);
        const a = await instructionVia(client, rr, `Utama ${round}`);
        const payout = Number((await db('deal_milestones').where({ id: m }).first<{ payout_amount: string }>('payout_amount')).payout_amount);
        const [rel, dem] = await Promise.all([
          client.post(releasePath(rr.deal.deal.id, m)).set(r.w.h.finance).set('Idempotency-Key', randomUUID()).send({ splits: [{ payout_instruction_id: a, amount: payout }] }),
          client.patch(`/v1/enterprise/members/${financeMember}`).set(r.w.h.owner).send({ role: 'operator' }),
        ]);
        expect(dem.status, JSON.stringify(dem.body)).to.equal(200);
        const feed = await feedRows(r.w.workspace.id);
        const demotedAt = Number(feed.filter((e) => e.event === 'member.role_changed').at(-1)!.seq);
        const released = feed.find((e) => e.event === 'milestone.released' && e.entity_id === m);
        if (rel.status === 200) {
          // It read the member before the demotion committed: its events precede the demotion's.
          expect(Number(released!.seq)).to.be.lessThan(demotedAt);
          outcomes.add('released first');
        } else {
          // The auth layer or the re-read under the lock saw the demotion.
          refused(rel, 403, 'FORBIDDEN');
          expect(released).to.equal(undefined);
          expect(await disbursementsOf(m)).to.deep.equal([]);
          outcomes.add('refused');
        }
        const back = await client.patch(`/v1/enterprise/members/${financeMember}`).set(r.w.h.owner).send({ role: 'finance' });
        expect(back.status).to.equal(200);
      }
      expect(outcomes.size).to.be.greaterThan(0);
    });
  });

  describe('decide', () => {
    it('demoted, removed, or its key revoked while in flight: 403 FORBIDDEN, 403 NO_WORKSPACE, 401 INVALID_TOKEN; no decision is saved', async () => {
      const w = await approvalWorld(client);
      const d = await submittedDeal(client, w, [1_000_000]);
      const mid = d.milestones[0]!.id;
      const financeMember = await memberOf(w.workspace.id, w.users.finance.id);
      const key = await workspaceKey(w.workspace.id, { member: w.ownerMember, user: w.owner }, ['read', 'write']);
      const before = await dealSnapshot(w.workspace.id);
      refused(await inFlight(w.workspace.id, demote(financeMember, 'viewer'), () => decide(client, w.h.finance, mid)), 403, 'FORBIDDEN');
      await db('workspace_members').where({ id: financeMember }).update({ role: 'finance' });
      refused(
        await inFlight(w.workspace.id, remove(financeMember), () => decide(client, w.h.finance, mid).set('Idempotency-Key', randomUUID())),
        403,
        'NO_WORKSPACE',
      );
      refused(await inFlight(w.workspace.id, revoke(key.id), () => decide(client, headersOf({ kind: 'workspace_key', key: key.key }), mid)), 401, 'INVALID_TOKEN');
      expect(await decisionRows(mid)).to.deep.equal([]);
      const after = await dealSnapshot(w.workspace.id);
      expect(after.milestones).to.deep.equal(before.milestones);
      expect(after.events).to.deep.equal(before.events);
      // The control: finance2, untouched, decides.
      const ok = await decide(client, w.finance2.h, mid);
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    });
  });

  describe('payout instruction writes', () => {
    let w: DealWorld;
    let financeMember: string;
    let id: string;
    beforeEach(async () => {
      const r = await fundedDeal(client, 'sandbox');
      w = r.w;
      financeMember = await memberOf(w.workspace.id, w.users.finance.id);
      id = await instructionVia(client, r, 'Utama');
    });
    const P = '/v1/enterprise/payout-instructions';
    const rows = () => db('payout_instructions').where({ workspace_id: w.workspace.id }).orderBy('id');

    it('create, change and delete by a member demoted, removed or suspended in flight: refused, nothing written', async () => {
      const before = await rows();
      const create = () => client.post(P).set(w.h.finance).send({ label: 'Baru', counterparty_id: w.cpId, bank_name: 'BNI', account_number: '1234567890', account_holder: 'PT Pemasok Jaya' });
      refused(await inFlight(w.workspace.id, demote(financeMember, 'operator'), create), 403, 'FORBIDDEN');
      await db('workspace_members').where({ id: financeMember }).update({ role: 'finance' });
      refused(await inFlight(w.workspace.id, remove(financeMember), () => client.patch(`${P}/${id}`).set(w.h.finance).send({ account_holder: 'Orang Lain' })), 403, 'NO_WORKSPACE');
      await db('workspace_members').where({ id: financeMember }).update({ status: 'active', removed_at: null });
      refused(await inFlight(w.workspace.id, suspend(financeMember), () => client.delete(`${P}/${id}`).set(w.h.finance).set('Idempotency-Key', randomUUID())), 403, 'NO_WORKSPACE');
      expect(await rows()).to.deep.equal(before);
    });

    it('a workspace key revoked in flight: 401 INVALID_TOKEN on create, change and delete; nothing written', async () => {
      const before = await rows();
      for (const send of [
        (h: Headers) => client.post(P).set(h).send({ label: 'Baru', counterparty_id: w.cpId, bank_name: 'BNI', account_number: '1234567890', account_holder: 'PT Pemasok Jaya' }),
        (h: Headers) => client.patch(`${P}/${id}`).set(h).send({ account_number: '999888777666' }),
        (h: Headers) => client.delete(`${P}/${id}`).set(h),
      ]) {
        const key = await workspaceKey(w.workspace.id, { member: w.ownerMember, user: w.owner }, ['read', 'write']);
        refused(await inFlight(w.workspace.id, revoke(key.id), () => send(headersOf({ kind: 'workspace_key', key: key.key }))), 401, 'INVALID_TOKEN');
      }
      expect(await rows()).to.deep.equal(before);
      // The control: the same change by a live key goes through.
      const live = await workspaceKey(w.workspace.id, { member: w.ownerMember, user: w.owner }, ['read', 'write']);
      expect((await client.patch(`${P}/${id}`).set(headersOf({ kind: 'workspace_key', key: live.key })).send({ label: 'Diganti' })).status).to.equal(200);
    });
  });
});
