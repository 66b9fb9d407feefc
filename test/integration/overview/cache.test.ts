/**
 * The overview cache (enterprise spec 4.9: "cached 15 seconds per workspace and user (own
 * writes clear it)"; decision 0020): a second read within 15 seconds by the clock is the
 * first answer (shown by changing the data straight in the database), at 15 seconds it is
 * computed again; the caller's own successful write clears it (keyed or not, through a
 * session or their workspace key), a refused write does not, another user's write does not,
 * a write in another workspace does not; each user and workspace has their own answer.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { addMember, createWorkspace, headersOf, sessionOf, workspaceKey } from '../../factories/enterprise.js';
import { activeDeal, counterpartyVia, dealWorld, fundPath, type DealWorld, type Headers } from '../../factories/deals.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { redis } from '../../../shared/redis.js';
import { OVERVIEW_CACHE_SECONDS } from '../../../shared/overview/cache.js';
import { overviewOf, pinAt } from './support.js';

describe('enterprise overview: the 15-second cache and its invalidation', () => {
  const client = api();
  afterEach(() => clock.reset());

  /** A workspace with one activated deal of two milestones awaiting funding. */
  async function world(): Promise<{ w: DealWorld; dealId: string; mids: string[] }> {
    pinAt('2026-12-10T08:00:00.000Z');
    const w = await dealWorld(client);
    const d = await activeDeal(client, w);
    // Each request names the workspace (a member of two would otherwise get the first joined).
    const h = (x: Headers): Headers => ({ ...x, 'X-Enterprise-Account': w.workspace.id });
    w.h = { owner: h(w.h.owner), operator: h(w.h.operator), finance: h(w.h.finance), viewer: h(w.h.viewer) };
    return { w, dealId: d.deal.id, mids: d.milestones.map((m) => m.id) };
  }

  /**
   * A change the routes never make: a milestone marked funded straight in the table, and the
   * funding counted in the rollup transactions_secured reads (`report_event_days`, which the
   * milestone.funded event would have moved).
   */
  const plant = async (mid: string) => {
    const [m] = await db('deal_milestones').where({ id: mid }).update({ status: 'funded', funded_at: clock.now() }).returning<{ workspace_id: string }[]>('workspace_id');
    await db.raw(
      `INSERT INTO report_event_days AS r (workspace_id, day, counterparty_id, currency, funded_count) VALUES (?, ?::date, ?, 'IDR', 1)
       ON CONFLICT (workspace_id, day, counterparty_id, currency) DO UPDATE SET funded_count = r.funded_count + 1`,
      [m!.workspace_id, clock.now().toISOString().slice(0, 10), '00000000-0000-0000-0000-000000000000'],
    );
  };

  const secured = async (h: Headers) => (await overviewOf(client, h)).stats.transactions_secured;

  it('a second read within 15 seconds is the first answer; at 15 seconds it is computed again; each user has their own', async () => {
    const { w, mids } = await world();
    const first = await overviewOf(client, w.h.viewer);
    expect(first.stats.transactions_secured).to.equal(0);
    await plant(mids[0]!);
    clock.advance(OVERVIEW_CACHE_SECONDS * 1000 - 1);
    expect(await overviewOf(client, w.h.viewer)).to.deep.equal(first); // generated_at included
    // Another user of the same workspace has no answer cached: theirs is computed now.
    expect(await secured(w.h.operator)).to.equal(1);
    clock.advance(1);
    const again = await overviewOf(client, w.h.viewer);
    expect(again.stats.transactions_secured).to.equal(1);
    expect(again.generated_at).to.equal(new Date(clock.nowMs()).toISOString());
    // Redis keeps the key no longer than the same 15 seconds.
    const ttl = await redis.ttl(`${config.queuePrefix}:ent-overview:${w.workspace.id}:${w.users.viewer.id}:viewer`);
    expect(ttl).to.be.within(1, OVERVIEW_CACHE_SECONDS);
  });

  it("the caller's own write clears it; a refused write, another user's write and a write in another workspace do not", async () => {
    const { w, mids } = await world();
    expect(await secured(w.h.viewer)).to.equal(0);
    await plant(mids[0]!);

    // Another user's write (the operator adds a counterparty): the viewer's answer stays.
    await counterpartyVia(client, w.h.operator, { name: 'PT Penulis Lain' });
    expect(await secured(w.h.viewer)).to.equal(0);
    // The viewer's own refused write (400 INVALID_BODY): still cached.
    const refused = await client.patch('/v1/enterprise/members/me/preferences').set(w.h.viewer).send({ email: 'yes' });
    expect(refused.status).to.equal(400);
    expect(await secured(w.h.viewer)).to.equal(0);
    // The viewer's write in another workspace they belong to: this workspace's answer stays.
    const other = await createWorkspace(undefined, 'Lain');
    await addMember(other.workspace.id, 'viewer', w.users.viewer);
    const elsewhere = await client.patch('/v1/enterprise/members/me/preferences').set({ ...w.h.viewer, 'X-Enterprise-Account': other.workspace.id }).send({ email: false });
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).to.equal(200);
    expect(await secured(w.h.viewer)).to.equal(0);
    // The viewer's own write here: the next read is computed afresh.
    const own = await client.patch('/v1/enterprise/members/me/preferences').set(w.h.viewer).send({ email: false });
    expect(own.status, JSON.stringify(own.body)).to.equal(200);
    expect(await secured(w.h.viewer)).to.equal(1);
  });

  it('a keyed write (Idempotency-Key) clears it once committed, and the read shows the write', async () => {
    const { w, dealId, mids } = await world();
    expect(await secured(w.h.finance)).to.equal(0);
    const key = randomUUID();
    const res = await client.post(fundPath(dealId, mids[0]!)).set({ ...w.h.finance, 'Idempotency-Key': key }).send({ method: 'sandbox' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(await secured(w.h.finance)).to.equal(1);
    // A replay of the same key answers the stored reply and changes nothing (the cache is cleared again, harmlessly).
    await plant(mids[1]!);
    const replay = await client.post(fundPath(dealId, mids[0]!)).set({ ...w.h.finance, 'Idempotency-Key': key }).send({ method: 'sandbox' });
    expect(replay.headers['idempotent-replay']).to.equal('true');
    expect(await secured(w.h.finance)).to.equal(2);
  });

  it("a write through the user's workspace key clears their cache; the answers of a read key (a viewer) and of their session are kept apart", async () => {
    const { w, mids } = await world();
    const admin = await addMember(w.workspace.id, 'admin');
    const session = headersOf(await sessionOf(admin.user));
    const readKey = { Authorization: `Bearer ${(await workspaceKey(w.workspace.id, admin, ['read'])).key}` };
    const writeKey = { Authorization: `Bearer ${(await workspaceKey(w.workspace.id, admin, ['read', 'write'])).key}` };
    expect(await secured(session)).to.equal(0);
    expect(await secured(readKey)).to.equal(0);
    await plant(mids[0]!);
    expect(await secured(session)).to.equal(0);
    expect(await secured(readKey)).to.equal(0);
    await counterpartyVia(client, writeKey, { name: 'PT Lewat Kunci' });
    expect(await secured(session)).to.equal(1);
    expect(await secured(readKey)).to.equal(1);
  });

  it('two workspaces of one user: each answer is its own workspace', async () => {
    const a = await world();
    const b = await dealWorld(client, 'Kedua');
    await addMember(b.workspace.id, 'viewer', a.w.users.viewer);
    await plant(a.mids[0]!);
    expect(await secured(a.w.h.viewer)).to.equal(1);
    const inB = await overviewOf(client, { ...a.w.h.viewer, 'X-Enterprise-Account': b.workspace.id });
    expect(inB.stats.transactions_secured).to.equal(0);
    expect(inB.stats.deals_active).to.equal(0);
    expect((await overviewOf(client, a.w.h.viewer)).stats.deals_active).to.equal(1);
  });
});
