/**
 * The event feed (enterprise spec 4.9, 6): gap-free increasing seq per workspace under
 * concurrent writers, a poller following `next_after` sees every event exactly once,
 * descending pages with next_before, filters, livemode fixed at write time, operator
 * actions with actor_label and no IP address, no reading another workspace's feed.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { createWorkspace, headersOf, sessionOf, type Cred } from '../../factories/enterprise.js';
import { createDealVia, dealBody, dealWorld, DEALS } from '../../factories/deals.js';
import { notesPath } from '../../factories/documents.js';
import { db } from '../../../shared/db.js';
import { appendEvent, appendEvents, operatorLabel } from '../../../shared/enterprise/events.js';
import { createCounterparty, type WorkspaceActor } from '../../../shared/enterprise/service.js';

interface Item {
  seq: number;
  event: string;
  livemode: boolean;
  actor: { id: string; name: string } | null;
  actor_label: string | null;
  deal_id: string | null;
  amount: number | null;
}

describe('enterprise event feed', () => {
  const client = api();

  async function world() {
    const ws = await createWorkspace();
    const cred = await sessionOf(ws.owner);
    const actor: WorkspaceActor = { workspaceId: ws.workspace.id, memberId: ws.ownerMember.id, userId: ws.owner.id, userName: ws.owner.full_name, role: 'owner' };
    return { ...ws, cred, actor };
  }

  const feed = async (cred: Cred, query: string) => {
    const res = await client.get(`/v1/enterprise/events?${query}`).set(headersOf(cred));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as { data: Item[]; next_after: number; next_before?: number | null };
  };

  it('concurrent writers in two workspaces: seq has no gaps or repeats, a poller sees every event once and in order', async () => {
    const a = await world();
    const b = await world();
    const writers = 30;
    let done = false;
    const seen: number[] = [];
    const poller = (async () => {
      let after = 0;
      for (;;) {
        const finished = done;
        const page = await feed(a.cred, `after=${after}&limit=7`);
        for (const e of page.data) seen.push(e.seq);
        expect(page.next_after).to.equal(page.data.length ? page.data[page.data.length - 1]!.seq : after);
        after = page.next_after;
        if (finished && page.data.length === 0) break;
      }
    })();
    await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        Promise.all([createCounterparty(undefined, a.actor, { name: `A ${i}`, country_code: 'ID', relationship: 'seller' }), createCounterparty(undefined, b.actor, { name: `B ${i}`, country_code: 'ID', relationship: 'seller' })]),
      ),
    );
    done = true;
    await poller;
    const expected = Array.from({ length: writers + 1 }, (_, i) => i + 1);
    expect(seen).to.deep.equal(expected);
    for (const ws of [a, b]) {
      const seqs = (await db('workspace_events').where({ workspace_id: ws.workspace.id }).orderBy('seq').select('seq')).map((r: { seq: string }) => Number(r.seq));
      expect(seqs).to.deep.equal(expected);
      expect(Number((await db('workspaces').where({ id: ws.workspace.id }).first()).last_event_seq)).to.equal(writers + 1);
    }
  });

  it('a rolled-back change gives its seq back (no gap)', async () => {
    const a = await world();
    await db
      .transaction(async (trx) => {
        await appendEvent(trx, a.workspace.id, { event: 'counterparty.created', entityType: 'counterparty', summary: 'doomed' });
        throw new Error('rollback');
      })
      .catch(() => undefined);
    await createCounterparty(undefined, a.actor, { name: 'Kept', country_code: 'ID', relationship: 'seller' });
    const page = await feed(a.cred, 'after=0');
    expect(page.data.map((e) => [e.seq, e.event])).to.deep.equal([
      [1, 'workspace.created'],
      [2, 'counterparty.created'],
    ]);
  });

  it('several events of one change (appendEvents, one statement): consecutive seqs in the order given, livemode per event, after the seqs already taken', async () => {
    const a = await world();
    await db('workspaces').where({ id: a.workspace.id }).update({ is_sandbox: false });
    const rows = await db.transaction((trx) =>
      appendEvents(trx, a.workspace.id, [
        { event: 'milestone.released', entityType: 'milestone', summary: 'first', amount: 900 },
        { event: 'disbursement.queued', entityType: 'disbursement', summary: 'second', amount: 400 },
        { event: 'disbursement.queued', entityType: 'disbursement', summary: 'third', amount: 500, sandbox: true },
      ]),
    );
    expect(rows.map((r) => [Number(r.seq), r.summary, r.livemode])).to.deep.equal([
      [2, 'first', true],
      [3, 'second', true],
      [4, 'third', false],
    ]);
    const ws = (await db('workspaces').where({ id: a.workspace.id }).first()) as { last_event_seq: number };
    expect(Number(ws.last_event_seq)).to.equal(4);
    const page = await feed(a.cred, 'after=1');
    expect(page.data.map((e) => [e.seq, e.event, e.amount])).to.deep.equal([
      [2, 'milestone.released', 900],
      [3, 'disbursement.queued', 400],
      [4, 'disbursement.queued', 500],
    ]);
    const err = await db.transaction((trx) => appendEvents(trx, '00000000-0000-4000-8000-000000000000', [{ event: 'x', entityType: 'deal', summary: 'nowhere' }])).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as Error).message).to.match(/not found/);
  });

  it('polling with nothing new echoes after; descending pages with next_before down to null', async () => {
    const a = await world();
    for (let i = 0; i < 6; i += 1) await createCounterparty(undefined, a.actor, { name: `C ${i}`, country_code: 'ID', relationship: 'seller' });
    const idle = await feed(a.cred, 'after=7');
    expect(idle.data).to.deep.equal([]);
    expect(idle.next_after).to.equal(7);
    expect(idle).to.not.have.property('next_before');
    const p1 = await feed(a.cred, 'order=desc&limit=3');
    expect(p1.data.map((e) => e.seq)).to.deep.equal([7, 6, 5]);
    expect(p1.next_after).to.equal(7);
    expect(p1.next_before).to.equal(5);
    const p2 = await feed(a.cred, `order=desc&limit=3&before=${p1.next_before}`);
    expect(p2.data.map((e) => e.seq)).to.deep.equal([4, 3, 2]);
    const p3 = await feed(a.cred, `order=desc&limit=3&before=${p2.next_before}`);
    expect(p3.data.map((e) => e.seq)).to.deep.equal([1]);
    expect(p3.next_before).to.equal(null);
    const ranged = await feed(a.cred, 'order=desc&after=3&before=6');
    expect(ranged.data.map((e) => e.seq)).to.deep.equal([5, 4]);
    const def = await feed(a.cred, '');
    expect(def.data).to.have.length(7);
    expect(def.data[0]!.seq).to.equal(1);
  });

  it('filters by event name and deal_id; validates the query', async () => {
    const a = await world();
    const deal = '5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3';
    await createCounterparty(undefined, a.actor, { name: 'C', country_code: 'ID', relationship: 'seller' });
    await db.transaction((trx) => appendEvent(trx, a.workspace.id, { event: 'deal.created', entityType: 'deal', entityId: deal, dealId: deal, dealReference: 'D-1', summary: 'deal', amount: 1_000_000 }));
    expect((await feed(a.cred, 'event=counterparty.created')).data.map((e) => e.event)).to.deep.equal(['counterparty.created']);
    const byDeal = await feed(a.cred, `deal_id=${deal}`);
    expect(byDeal.data.map((e) => e.deal_id)).to.deep.equal([deal]);
    for (const bad of ['limit=101', 'limit=0', 'after=-1', 'order=sideways', 'before=5', 'deal_id=nope', 'after=abc']) {
      const res = await client.get(`/v1/enterprise/events?${bad}`).set(headersOf(a.cred));
      expect(res.status, bad).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_QUERY');
    }
  });

  it('issue 42: every event of a live workspace is live, moving money or not (templates, counterparties, notes, deals); a sandbox deal after going live and a sandbox workspace are not', async () => {
    const w = await dealWorld(client);
    const sandboxDeal = await createDealVia(client, w.h.operator, dealBody(w.cpId));
    const sandboxSeq = Number((await db('workspaces').where({ id: w.workspace.id }).first()).last_event_seq);
    await db('workspaces').where({ id: w.workspace.id }).update({ is_sandbox: false });
    const writes = [
      await client.post('/v1/enterprise/counterparties').set(w.h.operator).send({ name: 'PT Live' }),
      await client.post('/v1/enterprise/templates').set(w.h.operator).send({ name: 'Live template', milestones: [{ title: 'Semua', amount_pct: 100 }] }),
      await client.post(DEALS).set(w.h.operator).send(dealBody(w.cpId)),
    ];
    for (const r of writes) expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const liveDeal = writes[2]!.body.data.deal.id as string;
    expect((await client.post(notesPath(liveDeal)).set(w.h.operator).send({ body: 'Catatan live' })).status).to.equal(201);
    // A deal made in the sandbox, cancelled after the switch: its event moves no real money.
    expect((await client.post(`${DEALS}/${sandboxDeal.deal.id}/cancel`).set(w.h.operator).send({})).status).to.equal(200);
    const res = await client.get(`/v1/enterprise/events?after=${sandboxSeq}&limit=100`).set(w.h.viewer);
    const items = (res.body.data as (Item & { deal_id: string | null })[]).map((e) => [e.event, e.livemode]);
    expect(items).to.deep.equal([
      ['counterparty.created', true],
      ['template.created', true],
      ['deal.created', true],
      ['note.added', true],
      ['deal.cancelled', false],
    ]);
    const before = await client.get(`/v1/enterprise/events?after=0&limit=${sandboxSeq}`).set(w.h.viewer);
    expect((before.body.data as Item[]).map((e) => e.livemode)).to.deep.equal(Array.from({ length: sandboxSeq }, () => false));
  });

  it('livemode is fixed when the event happens; operator actions carry actor_label; no IP address anywhere', async () => {
    const a = await world();
    await db('workspaces').where({ id: a.workspace.id }).update({ is_sandbox: false });
    await db.transaction((trx) => appendEvent(trx, a.workspace.id, { event: 'milestone.funded', entityType: 'milestone', actorLabel: 'Operator', summary: 'funds confirmed', amount: 5_000_000 }));
    await db.transaction((trx) => appendEvent(trx, a.workspace.id, { event: 'milestone.released', entityType: 'milestone', summary: 'sandbox deal', sandbox: true }));
    await db('workspaces').where({ id: a.workspace.id }).update({ is_sandbox: true });
    const page = await feed(a.cred, 'after=0');
    expect(page.data.map((e) => e.livemode)).to.deep.equal([false, true, false]);
    const op = page.data[1]!;
    expect(op.actor).to.equal(null);
    expect(op.actor_label).to.equal('Operator');
    expect(page.data[0]!.actor).to.deep.equal({ id: a.owner.id, name: a.owner.full_name });
    expect(Object.keys(op).sort()).to.deep.equal(
      ['seq', 'id', 'event', 'entity_type', 'entity_id', 'deal_id', 'deal_reference', 'actor', 'actor_label', 'amount', 'summary', 'created_at', 'livemode'].sort(),
    );
    expect(JSON.stringify(page)).to.not.match(/127\.0\.0\.1|::1|"ip"/);
  });

  it('the operator label is a setting (default "Operator")', async () => {
    expect(await operatorLabel(db)).to.equal('Operator');
    await db('settings').insert({ key: 'enterprise_operator_label', value: JSON.stringify('Tim Rekber'), updated_at: new Date() });
    expect(await operatorLabel(db)).to.equal('Tim Rekber');
  });

  it("never shows another workspace's events, whatever the query", async () => {
    const a = await world();
    const b = await world();
    await createCounterparty(undefined, b.actor, { name: 'Secret', country_code: 'ID', relationship: 'seller' });
    const mine = await feed(a.cred, 'after=0&limit=100');
    expect(mine.data.map((e) => e.event)).to.deep.equal(['workspace.created']);
    const other = await client.get('/v1/enterprise/events').set(headersOf(a.cred, b.workspace.id));
    expect(other.status).to.equal(403);
    expect(other.body.error.code).to.equal('NO_WORKSPACE');
  });
});
