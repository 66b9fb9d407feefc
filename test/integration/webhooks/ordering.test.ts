/**
 * Feed order per endpoint under concurrent writers (D8; decision 0020 "Webhooks"): events of
 * a workspace are written by many concurrent changes while a real BullMQ worker (several
 * jobs at once) delivers to three receivers, one of which fails the first attempt of every
 * message. Each receiver sees its events in `seq` order, never a later one before an
 * earlier one (retries repeat the head of the line only), each delivered exactly once,
 * and exactly the events its filter takes.
 */
import { expect } from 'chai';
import { Worker } from 'bullmq';
import { startReceiver, verified, type Receiver } from '../../helpers/webhook-receiver.js';
import { addMember, createWorkspace } from '../../factories/enterprise.js';
import { actorOf, feedEvent, makeEndpoint } from '../../factories/webhooks.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { relayAll } from '../../../shared/outbox.js';
import { createQueueConnection } from '../../../shared/redis.js';
import { getQueue } from '../../../shared/queues.js';
import { RETRY_DELAYS_MS } from '../../../shared/webhooks/states.js';
import { buildRegistry, queueProcessor } from '../../../workers/registry.js';

const NAMES = ['deal.created', 'deal.updated', 'milestone.funded', 'milestone.released', 'disbursement.queued'];

describe('webhook order per endpoint under concurrent writers', function () {
  this.timeout(60_000);
  const receivers: Receiver[] = [];
  let worker: Worker | undefined;
  let connection: ReturnType<typeof createQueueConnection> | undefined;
  let stopRelay: () => Promise<void> = () => Promise.resolve();

  afterEach(async () => {
    await stopRelay();
    await worker?.close();
    connection?.disconnect();
    for (const r of receivers.splice(0)) await r.close();
  });

  const settled = async (): Promise<boolean> => {
    const leases = await db('webhook_endpoints').whereNotNull('lease_until').count<{ count: number }[]>('* as count');
    const counts = await getQueue('webhooks').getJobCounts('waiting', 'active', 'prioritized');
    const due = await db('outbox').whereNull('relayed_at').whereNull('dead_at').where('available_at', '<=', clock.now()).count<{ count: number }[]>('* as count');
    return Number(leases[0]!.count) === 0 && (counts.waiting ?? 0) + (counts.active ?? 0) + (counts.prioritized ?? 0) === 0 && Number(due[0]!.count) === 0;
  };

  it('three receivers, one failing every first attempt: in seq order, once each, exactly their events', async () => {
    clock.set(new Date('2026-12-01T08:00:00Z'));
    const ws = await createWorkspace();
    const admin = await addMember(ws.workspace.id, 'admin');
    const actor = actorOf(ws.workspace.id, admin);
    for (let i = 0; i < 3; i += 1) receivers.push(await startReceiver());
    const [steady, flaky, filtered] = receivers as [Receiver, Receiver, Receiver];
    const tries = new Map<string, number>();
    let flakyOk = 0;
    flaky.answer((r) => {
      const n = (tries.get(r.headers['webhook-id']!) ?? 0) + 1;
      tries.set(r.headers['webhook-id']!, n);
      if (n === 1) return { status: 503 };
      flakyOk += 1;
      return { status: 200 };
    });
    const endpoints = [
      await makeEndpoint(actor, { url: steady.url }),
      await makeEndpoint(actor, { url: flaky.url }),
      await makeEndpoint(actor, { url: filtered.url, events: ['milestone.funded', 'milestone.released'] }),
    ];

    connection = createQueueConnection();
    worker = new Worker('webhooks', queueProcessor(buildRegistry(), 'webhooks'), { connection, prefix: config.queuePrefix, concurrency: 5 });
    await worker.waitUntilReady();
    let relaying = true;
    const relay = (async () => {
      while (relaying) {
        await relayAll();
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    stopRelay = async () => {
      relaying = false;
      await relay;
    };

    // 60 events from concurrent changes, in waves.
    for (let wave = 0; wave < 4; wave += 1) {
      await Promise.all(Array.from({ length: 15 }, (_, i) => feedEvent(ws.workspace.id, { event: NAMES[(wave * 15 + i) % NAMES.length]! })));
    }
    const lastSeq = Number((await db('workspaces').where({ id: ws.workspace.id }).first()).last_event_seq);
    const expectedSeqs = (after: number, filter: string[] | null) =>
      db('workspace_events')
        .where('workspace_id', ws.workspace.id)
        .where('seq', '>', after)
        .modify((q) => {
          if (filter) void q.whereIn('event', filter);
        })
        .orderBy('seq')
        .then((rows: { seq: number }[]) => rows.map((r) => Number(r.seq)));
    // Each endpoint starts after its own creation.
    const from = endpoints.map((e) => Number(e.endpoint.cursor_seq));
    const want = {
      steady: await expectedSeqs(from[0]!, null),
      flaky: await expectedSeqs(from[1]!, null),
      filtered: await expectedSeqs(from[2]!, ['milestone.funded', 'milestone.released']),
    };
    expect(want.steady.at(-1)).to.equal(lastSeq);
    expect(want.steady.slice(0, 2)).to.deep.equal([from[0]! + 1, from[0]! + 2]); // the two later endpoints' created events

    // Retries come due as the clock moves; it moves only while nothing is in flight.
    const deadline = Date.now() + 45_000;
    for (;;) {
      while (!(await settled())) {
        if (Date.now() > deadline) throw new Error('deliveries did not settle');
        await new Promise((r) => setTimeout(r, 25));
      }
      if (steady.received.length >= want.steady.length && flakyOk >= want.flaky.length && filtered.received.length >= want.filtered.length) break;
      if (Date.now() > deadline) throw new Error(`not all delivered: ${steady.received.length}, ${flakyOk}, ${filtered.received.length}`);
      clock.advance(RETRY_DELAYS_MS[0]!);
    }
    await stopRelay();

    const seqsOf = (r: Receiver) => r.received.map((m) => m.json.data.seq as number);
    // Exactly their events, in order, once each.
    expect(seqsOf(steady)).to.deep.equal(want.steady);
    expect(seqsOf(filtered)).to.deep.equal(want.filtered);
    // The flaky receiver: every message twice (503, then 200), never a later event before an earlier one.
    const flakySeqs = seqsOf(flaky);
    expect(flakySeqs).to.deep.equal(want.flaky.flatMap((s) => [s, s]));
    for (const r of flaky.received) verified(endpoints[1]!.secret, r);
    for (const r of filtered.received) verified(endpoints[2]!.secret, r);
    // Every attempt recorded: one per delivery to steady and filtered, two per event for flaky.
    const count = async (id: string) => Number((await db('webhook_deliveries').where({ endpoint_id: id }).count<{ count: number }[]>('* as count'))[0]!.count);
    expect(await count(endpoints[0]!.endpoint.id)).to.equal(want.steady.length);
    expect(await count(endpoints[1]!.endpoint.id)).to.equal(2 * want.flaky.length);
    expect(await count(endpoints[2]!.endpoint.id)).to.equal(want.filtered.length);
    for (const e of endpoints) expect(Number((await db('webhook_endpoints').where({ id: e.endpoint.id }).first()).cursor_seq)).to.equal(lastSeq);
  });
});
