import { expect } from 'chai';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { enqueue, outboxJobId, relayAll, relayOnce } from '../../../shared/outbox.js';
import { getQueue, QUEUE_NAMES } from '../../../shared/queues.js';
import { runJobs } from '../../helpers/jobs.js';
import { countRows, rejection } from '../../helpers/platform-factories.js';

const PURGE = 'maintenance.purge-idempotency-keys';

/** Jobs in every queue, in any state. */
async function allJobCount(): Promise<number> {
  let total = 0;
  for (const name of QUEUE_NAMES) {
    const counts = await getQueue(name).getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized');
    total += Object.values(counts).reduce((a, b) => a + b, 0);
  }
  return total;
}

/** An idempotency key that expired an hour ago: the purge job deletes it (its observable effect). */
async function insertExpiredKey(): Promise<void> {
  const past = new Date(clock.nowMs() - 25 * 3600_000);
  await db('idempotency_keys').insert({
    scope: 'ip:127.0.0.1',
    endpoint: 'POST /probe',
    key: '0b6b2a4e-3c1d-4f5e-8a9b-0c1d2e3f4a5b',
    request_hash: 'x',
    state: 'completed',
    response_status: 201,
    response_body: JSON.stringify({}),
    locked_at: past,
    created_at: past,
    expires_at: new Date(clock.nowMs() - 3600_000),
  });
}


describe('platform: transactional outbox', () => {
  it('a job written in a rolled-back transaction is never relayed and never runs', async () => {
    await insertExpiredKey();
    const err = await rejection(
      db.transaction(async (trx) => {
        const id = await enqueue(trx, PURGE, {});
        expect(id).to.be.a('number');
        throw new Error('the change failed');
      }),
    );
    expect((err as Error).message).to.equal('the change failed');
    expect(await countRows('outbox')).to.equal(0);
    expect(await relayOnce()).to.equal(0);
    expect(await runJobs()).to.deep.equal([]);
    expect(await allJobCount()).to.equal(0);
    expect(await countRows('idempotency_keys')).to.equal(1);
  });

  it('a committed job is enqueued once with jobId outbox-<id>, even if the relay runs twice or crashes after enqueueing', async () => {
    await insertExpiredKey();
    const id = await db.transaction((trx) => enqueue(trx, PURGE, { reason: 'test' }));
    const row = (await db('outbox').where({ id }).first()) as { queue: string; job: string; payload: unknown; relayed_at: Date | null };
    expect(row).to.include({ queue: 'timers', job: PURGE, relayed_at: null });
    expect(row.payload).to.deep.equal({ reason: 'test' });

    expect(await relayOnce()).to.equal(1);
    expect(await relayOnce()).to.equal(0); // already relayed
    const relayed = (await db('outbox').where({ id }).first()) as { relayed_at: Date | null };
    expect(relayed.relayed_at).to.be.instanceOf(Date);

    // Crash simulation: BullMQ took the job but the relayed_at update never committed.
    await db('outbox').where({ id }).update({ relayed_at: null });
    expect(await relayOnce()).to.equal(1); // the row is re-sent...
    const timers = getQueue('timers');
    expect(await timers.getJobCounts('waiting')).to.deep.equal({ waiting: 1 }); // ...but BullMQ keeps one job
    const job = await timers.getJob(outboxJobId(id));
    expect(job?.id).to.equal(`outbox-${id}`);
    expect(job?.name).to.equal(PURGE);
    expect(job?.data).to.deep.equal({ reason: 'test' });

    const ran = await runJobs();
    expect(ran).to.have.length(1);
    expect(ran[0]).to.deep.include({ queue: 'timers', name: PURGE, id: `outbox-${id}` });
    expect(ran[0]!.error).to.equal(undefined);
    expect(ran[0]!.result).to.deep.equal({ purged: 1 });
    expect(await countRows('idempotency_keys')).to.equal(0);

    // A late re-send after the job completed is ignored too: nothing runs a second time.
    await db('outbox').where({ id }).update({ relayed_at: null });
    expect(await runJobs()).to.deep.equal([]);
    expect(await timers.getJobCounts('completed', 'waiting')).to.deep.equal({ completed: 1, waiting: 0 });
  });

  it('two relays running at once move each row once', async () => {
    const ids = await db.transaction(async (trx) => [await enqueue(trx, PURGE, { n: 1 }), await enqueue(trx, PURGE, { n: 2 })]);
    const moved = await Promise.all([relayOnce(), relayOnce(), relayOnce()]);
    expect(moved.reduce((a, b) => a + b, 0)).to.equal(2);
    const ran = await runJobs();
    expect(ran.map((r) => r.id).sort()).to.deep.equal(ids.map(outboxJobId).sort());
  });

  it('a job with runAt in the future is not relayed until the clock passes it', async () => {
    clock.set(new Date('2026-11-22T12:00:00.000Z'));
    const runAt = new Date('2026-11-22T13:00:00.000Z');
    const id = await db.transaction((trx) => enqueue(trx, PURGE, {}, { runAt }));

    expect(await relayAll()).to.equal(0);
    expect(await runJobs()).to.deep.equal([]);
    clock.advance(60 * 60_000 - 1); // one millisecond early
    expect(await relayOnce()).to.equal(0);
    expect(await allJobCount()).to.equal(0);

    clock.advance(1);
    const ran = await runJobs();
    expect(ran.map((r) => r.id)).to.deep.equal([outboxJobId(id)]);
    expect(await runJobs()).to.deep.equal([]);
  });
});
