/**
 * Review R4: every staff queue (open payouts, disputed milestones to rule, KYB applications to
 * review) goes through the one helper shared/staff/queue.ts: live workspaces' items before
 * sandbox ones even when the sandbox ones are older, oldest first within each, and keyset
 * pages that reach every item exactly once. The console pages link to the next page.
 */
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { disputedForStaff } from '../../../shared/deals/staff.js';
import { reviewQueue } from '../../../shared/kyb/review.js';
import { openPayouts } from '../../../shared/payouts/staff.js';
import type { QueueCursor, QueuePage } from '../../../shared/staff/queue.js';
import { setMilestoneStatus } from '../../factories/deals.js';
import { submittedApplication } from '../../factories/kyb-review.js';
import { fundedDeal, releasedMilestone } from '../../factories/releases.js';
import { createUser, signIn } from '../../factories/users.js';
import { api } from '../../helpers/app.js';

const client = api();

/** Every page of a queue read one item at a time: the ids in order, each once. */
async function walk<T>(read: (page: QueueCursor) => Promise<QueuePage<T>>, idOf: (row: T) => string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 20; i += 1) {
    const page: QueuePage<T> = await read({ cursor, limit: 1 });
    ids.push(...page.rows.map(idOf));
    if (page.next === null) return ids;
    cursor = page.next;
  }
  throw new Error('the queue never ended');
}

describe('staff queues share one live-first keyset shape (review R4)', () => {
  afterEach(() => clock.reset());

  it('open payouts: a live payout before older sandbox ones; pages of one reach each once; the console shows live first and links the next page', async () => {
    const old = Date.now() - 3_600_000;
    clock.set(new Date(old));
    const sandboxA = await releasedMilestone(client, 'sandbox');
    clock.set(new Date(old + 60_000));
    const sandboxB = await releasedMilestone(client, 'sandbox');
    clock.reset();
    const live = await releasedMilestone(client, 'live');
    const ids = [live, sandboxA, sandboxB].map((r) => r.disbursements[0]!.id);
    for (const id of ids) expect((await db('disbursements').where({ id }).first<{ status: string }>('status')).status).to.equal('queued');
    expect(await walk((p) => openPayouts(db, p), (r) => r.id)).to.deep.equal(ids);

    const admin = (await createUser({ role: 'admin', fullName: 'Staf Antrean' })).user;
    const browser = supertest.agent(createApp().callback());
    await signIn(browser, admin.email);
    const page = await browser.get('/admin/payouts');
    expect([...page.text.matchAll(/<tr data-id="([0-9a-f-]{36})"/g)].map((m) => m[1])).to.deep.equal(ids);
    expect(page.text).to.not.include('id="next-page"');
  });

  it('rulings: a live deal\'s dispute before older sandbox ones, oldest dispute first, every one reached', async () => {
    const sandbox = await fundedDeal(client, 'sandbox', [1_000_000, 2_000_000]);
    const live = await fundedDeal(client, 'live', [1_000_000]);
    const t = Date.now();
    await setMilestoneStatus(sandbox.mids[1]!, 'disputed', { disputed_at: new Date(t - 3_000_000), dispute_reason: 'b' });
    await setMilestoneStatus(sandbox.mids[0]!, 'disputed', { disputed_at: new Date(t - 2_000_000), dispute_reason: 'a' });
    await setMilestoneStatus(live.mids[0]!, 'disputed', { disputed_at: new Date(t - 1_000), dispute_reason: 'live' });
    expect(await walk((p) => disputedForStaff(db, p), (r) => r.milestone_id)).to.deep.equal([live.mids[0], sandbox.mids[1], sandbox.mids[0]]);
  });

  it('KYB review: a live workspace\'s counterparty application before older sandbox ones; every one reached', async () => {
    const t = Date.now();
    const a = await submittedApplication({ name: 'Sandbox A', at: new Date(t - 3_000_000) });
    const b = await submittedApplication({ name: 'Sandbox B', at: new Date(t - 2_000_000) });
    const c = await submittedApplication({ name: 'Live C', counterparty: 'PT Mitra Live', at: new Date(t - 1_000) });
    await db('workspaces').where({ id: c.workspace.id }).update({ is_sandbox: false, kyb_status: 'verified' });
    expect(await walk((p) => reviewQueue(db, p), (r) => r.id)).to.deep.equal([c.application.id, a.application.id, b.application.id]);
  });
});
