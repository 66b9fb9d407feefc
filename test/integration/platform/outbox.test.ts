import { expect } from 'chai';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { logger } from '../../../shared/logger.js';
import { outboxDeadLetters, outboxReenqueued, registry } from '../../../shared/metrics.js';
import { enqueue, OUTBOX_SWEEP, outboxJobId, relayAll, relayOnce, sweepOutbox } from '../../../shared/outbox.js';
import { getQueue, JobPayloadError, JOBS, QUEUE_NAMES, type JobData } from '../../../shared/queues.js';
import { redis } from '../../../shared/redis.js';
import { Queue, UnrecoverableError, type Job } from 'bullmq';
import { buildRegistry, MAINTENANCE_SCHEDULES, upsertMaintenanceSchedules } from '../../../workers/registry.js';
import { runJobs, startJob } from '../../helpers/jobs.js';
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

    // A late re-send after the job completed is ignored by BullMQ too: nothing runs a
    // second time (the row's completion record is undone here to reach that layer).
    expect(((await db('outbox').where({ id }).first()) as { completed_at: Date | null }).completed_at).to.be.instanceOf(Date);
    await db('outbox').where({ id }).update({ relayed_at: null, completed_at: null });
    expect(await runJobs()).to.deep.equal([]);
    expect(await timers.getJobCounts('completed', 'waiting')).to.deep.equal({ completed: 1, waiting: 0 });
  });

  it('two relays running at once move each row once', async () => {
    const ids = await db.transaction(async (trx) => [await enqueue(trx, PURGE, { reason: 'first' }), await enqueue(trx, PURGE, { reason: 'second' })]);
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

interface Row {
  id: number;
  queue: string;
  job: string;
  relayed_at: Date | null;
  completed_at: Date | null;
  dead_at: Date | null;
  dead_reason: string | null;
}

async function outboxRow(id: number): Promise<Row> {
  return (await db('outbox').where({ id }).first()) as Row;
}

/** A row written as a bug (or an older release) might have: any queue, any job name. */
async function insertRawRow(queue: string, job: string): Promise<number> {
  const now = clock.now();
  const [row] = await db('outbox').insert({ queue, job, payload: {}, available_at: now, created_at: now }).returning<{ id: number }[]>('id');
  return row!.id;
}

/** Captures calls of one logger level while `fn` runs. */
async function capturingLogs<T>(level: 'error' | 'warn', fn: () => Promise<T>): Promise<{ value: T; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const original = logger[level];
  logger[level] = (obj: unknown, msg?: string) => {
    lines.push({ ...(typeof obj === 'object' && obj !== null ? obj : {}), msg: msg ?? obj });
  };
  try {
    return { value: await fn(), lines };
  } finally {
    logger[level] = original;
  }
}

async function counterValue(counter: typeof outboxDeadLetters | typeof outboxReenqueued, labels: Record<string, string>): Promise<number> {
  const { values } = await counter.get();
  const hit = values.find((v) => Object.entries(labels).every(([k, val]) => (v.labels as Record<string, unknown>)[k] === val));
  return hit?.value ?? 0;
}

const PAST_GRACE = OUTBOX_SWEEP.graceMs + 1;

describe('platform: outbox dead letters, completion and the sweeper', () => {
  beforeEach(() => clock.set(new Date('2026-11-23T09:00:00.000Z')));

  it('a row naming an unknown queue, an unknown job or the wrong queue is dead-lettered (log line, metric) while the rest of the batch is relayed and runs', async () => {
    await insertExpiredKey();
    const unknownQueue = await insertRawRow('no-such-queue', 'mail.send');
    const unknownJob = await insertRawRow('timers', 'timers.nonexistent');
    const wrongQueue = await insertRawRow('mail', PURGE);
    const good = await db.transaction((trx) => enqueue(trx, PURGE, {}));
    const before = {
      unknown_queue: await counterValue(outboxDeadLetters, { reason: 'unknown_queue' }),
      unknown_job: await counterValue(outboxDeadLetters, { reason: 'unknown_job' }),
      wrong_queue: await counterValue(outboxDeadLetters, { reason: 'wrong_queue' }),
    };

    const { value: taken, lines } = await capturingLogs('error', () => relayOnce());
    expect(taken).to.equal(4);
    expect(lines.map((l) => [l.outbox_id, l.msg])).to.deep.equal([
      [unknownQueue, 'outbox row dead-lettered; an operator must look at it'],
      [unknownJob, 'outbox row dead-lettered; an operator must look at it'],
      [wrongQueue, 'outbox row dead-lettered; an operator must look at it'],
    ]);
    for (const [reason, n] of Object.entries(before)) {
      expect(await counterValue(outboxDeadLetters, { reason }), reason).to.equal(n + 1);
    }
    const deadAt = clock.now();
    expect(await outboxRow(unknownQueue)).to.deep.include({ dead_at: deadAt, dead_reason: 'unknown queue no-such-queue', relayed_at: null });
    expect(await outboxRow(unknownJob)).to.deep.include({ dead_at: deadAt, dead_reason: 'unknown job timers.nonexistent', relayed_at: null });
    expect(await outboxRow(wrongQueue)).to.deep.include({
      dead_at: deadAt,
      dead_reason: `job ${PURGE} belongs to queue timers, not mail`,
    });
    expect(await outboxRow(good)).to.deep.include({ relayed_at: deadAt, dead_at: null });
    // Any process serving /metrics shows the rows waiting for an operator.
    const gauge = await registry.getSingleMetricAsString('outbox_rows');
    expect(gauge).to.match(/^outbox_rows\{state="dead"\} 3$/m);
    expect(gauge).to.match(/^outbox_rows\{state="unfinished"\} 1$/m);
    expect(gauge).to.match(/^outbox_rows\{state="pending_due"\} 0$/m);

    // Dead rows are never picked again, by the relay or the sweeper.
    expect(await relayOnce()).to.equal(0);
    const ran = await runJobs();
    expect(ran.map((r) => [r.id, r.error])).to.deep.equal([[outboxJobId(good), undefined]]);
    expect(await countRows('idempotency_keys')).to.equal(0);
    clock.advance(OUTBOX_SWEEP.graceMs * 10);
    expect(await sweepOutbox()).to.deep.include({ checked: 0, reenqueued: 0, dead: 0 });
    expect(await relayAll()).to.equal(0);
    expect(await runJobs()).to.deep.equal([]);
    expect(await outboxRow(unknownQueue)).to.deep.include({ dead_at: deadAt, relayed_at: null });
  });

  it('a dead row at the head of the queue does not stop the relay: one row per batch still moves on', async () => {
    const dead = await insertRawRow('no-such-queue', PURGE);
    const good = await db.transaction((trx) => enqueue(trx, PURGE, {}));
    expect(await capturingLogs('error', () => relayOnce(1)).then((r) => r.value)).to.equal(1);
    expect(await relayOnce(1)).to.equal(1);
    expect(await relayOnce(1)).to.equal(0);
    expect((await outboxRow(dead)).dead_at).to.be.instanceOf(Date);
    expect((await outboxRow(good)).relayed_at).to.be.instanceOf(Date);
  });

  it('a relayed row whose job Redis lost is re-enqueued by the sweeper after the grace period, with the same jobId, and runs once', async () => {
    await insertExpiredKey();
    const id = await db.transaction((trx) => enqueue(trx, PURGE, { reason: 'lost' }));
    expect(await relayAll()).to.equal(1);
    await redis.flushdb(); // Redis loses everything (flush, failover to an empty replica)
    expect(await getQueue('timers').getJob(outboxJobId(id))).to.equal(undefined);

    // Within the grace period the sweeper does not look at the row.
    clock.advance(OUTBOX_SWEEP.graceMs - 1);
    expect(await sweepOutbox()).to.deep.include({ checked: 0, reenqueued: 0 });

    clock.advance(2);
    const before = await counterValue(outboxReenqueued, { queue: 'timers' });
    // Two sweepers at once (two worker copies) re-enqueue it once.
    const { value: swept, lines } = await capturingLogs('warn', () => Promise.all([sweepOutbox(), sweepOutbox()]));
    expect(swept.reduce((n, s) => n + s.reenqueued, 0)).to.equal(1);
    expect(lines.filter((l) => l.msg === 'outbox job missing from Redis; enqueued again').map((l) => l.outbox_id)).to.deep.equal([id]);
    expect(await counterValue(outboxReenqueued, { queue: 'timers' })).to.equal(before + 1);
    expect(await outboxRow(id)).to.deep.include({ relayed_at: clock.now(), completed_at: null, dead_at: null });

    const job = await getQueue('timers').getJob(outboxJobId(id));
    expect(job).to.deep.include({ id: outboxJobId(id), name: PURGE, data: { reason: 'lost' } });
    const ran = await runJobs();
    expect(ran.map((r) => [r.id, r.result, r.error])).to.deep.equal([[outboxJobId(id), { purged: 1 }, undefined]]);
    expect((await outboxRow(id)).completed_at).to.deep.equal(clock.now());

    // Completed: later sweeps leave it alone, even when Redis loses the job again.
    await redis.flushdb();
    clock.advance(OUTBOX_SWEEP.graceMs * 10);
    expect(await sweepOutbox()).to.deep.include({ checked: 0, reenqueued: 0 });
    expect(await runJobs()).to.deep.equal([]);
  });

  it('a completed job marks its row completed, and the row is never re-enqueued even when Redis loses the job', async () => {
    await insertExpiredKey();
    const id = await db.transaction((trx) => enqueue(trx, PURGE, {}));
    const ran = await runJobs();
    expect(ran.map((r) => r.id)).to.deep.equal([outboxJobId(id)]);
    const done = clock.now();
    expect(await outboxRow(id)).to.deep.include({ relayed_at: done, completed_at: done });

    await redis.flushdb();
    clock.advance(OUTBOX_SWEEP.graceMs * 60);
    expect(await sweepOutbox()).to.deep.equal({ checked: 0, reenqueued: 0, completed: 0, dead: 0, purged: 0 });
    expect(await runJobs()).to.deep.equal([]);
    expect(await allJobCount()).to.equal(0);
    expect(await outboxRow(id)).to.deep.include({ completed_at: done });
  });

  it('a job BullMQ completed without the row recording it (an older worker) gets completed_at from the sweeper, not a re-send', async () => {
    const id = await db.transaction((trx) => enqueue(trx, PURGE, {}));
    await runJobs();
    await db('outbox').where({ id }).update({ completed_at: null });
    clock.advance(PAST_GRACE);
    expect(await sweepOutbox()).to.deep.include({ checked: 1, completed: 1, reenqueued: 0 });
    expect((await outboxRow(id)).completed_at).to.deep.equal(clock.now());
    expect(await getQueue('timers').getJobCounts('completed', 'waiting')).to.deep.equal({ completed: 1, waiting: 0 });
  });

  it('the sweeper never re-enqueues a row whose job is still waiting or active; the job runs once', async () => {
    await insertExpiredKey();
    const id = await db.transaction((trx) => enqueue(trx, PURGE, {}));
    expect(await relayAll()).to.equal(1);
    const relayedAt = clock.now();
    const timers = getQueue('timers');

    clock.advance(OUTBOX_SWEEP.graceMs * 10); // a long backlog: still waiting
    expect(await sweepOutbox()).to.deep.equal({ checked: 1, reenqueued: 0, completed: 0, dead: 0, purged: 0 });
    expect(await timers.getJobCounts('waiting', 'active')).to.deep.equal({ waiting: 1, active: 0 });
    expect(await outboxRow(id)).to.deep.include({ relayed_at: relayedAt, completed_at: null, dead_at: null });

    const started = await startJob('timers');
    expect(started?.job.id).to.equal(outboxJobId(id));
    clock.advance(OUTBOX_SWEEP.graceMs * 10); // a slow job: still active
    expect(await sweepOutbox()).to.deep.include({ checked: 1, reenqueued: 0 });
    expect(await timers.getJobCounts('waiting', 'active')).to.deep.equal({ waiting: 0, active: 1 });

    const ran = await started!.finish();
    expect(ran).to.deep.include({ id: outboxJobId(id), result: { purged: 1 } });
    expect((await outboxRow(id)).completed_at).to.deep.equal(clock.now());
    expect(await sweepOutbox()).to.deep.include({ checked: 0, reenqueued: 0 });
    expect(await runJobs()).to.deep.equal([]);
  });

  it("a backlog of waiting jobs costs the sweeper a few constant-time lookups per row, never a search of the waiting list (BullMQ's getJobState)", async () => {
    const ids = await db.transaction(async (trx) => Promise.all(Array.from({ length: 120 }, () => enqueue(trx, PURGE, {}))));
    expect(await relayAll()).to.equal(120);
    clock.advance(PAST_GRACE);
    const proto = Queue.prototype as unknown as { getJobState: (...args: unknown[]) => unknown };
    const original = proto.getJobState;
    proto.getJobState = () => {
      throw new Error('getJobState searches the waiting list: O(backlog) per row');
    };
    try {
      expect(await sweepOutbox()).to.deep.equal({ checked: 120, reenqueued: 0, completed: 0, dead: 0, purged: 0 });
    } finally {
      proto.getJobState = original;
    }
    expect(await getQueue('timers').getJobCounts('waiting')).to.deep.equal({ waiting: 120 });
    expect((await runJobs()).map((r) => r.id).sort()).to.deep.equal(ids.map((id) => outboxJobId(id)).sort());
  });

  it('a job that failed for good is dead-lettered by the sweeper (log line, metric) and never re-sent', async () => {
    const emailId = '3f1c2b4a-0000-4000-8000-000000000000'; // no such e-mail: the processor refuses
    const id = await db.transaction((trx) => enqueue(trx, 'mail.send', { emailId }));
    const ran = await runJobs();
    expect(ran.map((r) => r.error)).to.deep.equal([`outbound e-mail ${emailId} does not exist`]);
    expect(await getQueue('mail').getJobState(outboxJobId(id))).to.equal('failed');

    clock.advance(PAST_GRACE);
    const before = await counterValue(outboxDeadLetters, { reason: 'job_failed' });
    const { value: swept, lines } = await capturingLogs('error', () => sweepOutbox());
    expect(swept).to.deep.include({ checked: 1, dead: 1, reenqueued: 0 });
    expect(lines.map((l) => l.outbox_id)).to.deep.equal([id]);
    expect(await counterValue(outboxDeadLetters, { reason: 'job_failed' })).to.equal(before + 1);
    expect(await outboxRow(id)).to.deep.include({
      dead_at: clock.now(),
      dead_reason: `job failed: outbound e-mail ${emailId} does not exist`,
      completed_at: null,
    });

    await redis.flushdb();
    clock.advance(OUTBOX_SWEEP.graceMs * 10);
    expect(await sweepOutbox()).to.deep.include({ checked: 0, reenqueued: 0 });
    expect(await runJobs()).to.deep.equal([]);
  });

  it('a timer is relayed only when due, and the sweeper counts its grace from the relay, not from the enqueue', async () => {
    const id = await db.transaction((trx) => enqueue(trx, PURGE, {}, { runAt: new Date(clock.nowMs() + 30 * 24 * 3600_000) }));
    clock.advance(29 * 24 * 3600_000);
    expect(await sweepOutbox()).to.deep.include({ checked: 0 });
    expect(await relayAll()).to.equal(0);
    clock.advance(24 * 3600_000);
    expect(await relayAll()).to.equal(1);
    // No long BullMQ delay: the job is waiting the moment it is relayed.
    expect(await getQueue('timers').getJobCounts('waiting', 'delayed')).to.deep.equal({ waiting: 1, delayed: 0 });
    await redis.flushdb();
    expect(await sweepOutbox()).to.deep.include({ checked: 0, reenqueued: 0 });
    clock.advance(PAST_GRACE);
    expect(await sweepOutbox()).to.deep.include({ checked: 1, reenqueued: 1 });
    expect((await runJobs()).map((r) => r.id)).to.deep.equal([outboxJobId(id)]);
  });

  it('completed rows are purged once past the retention period; dead and unfinished rows stay', async () => {
    const completed = await db.transaction((trx) => enqueue(trx, PURGE, {}));
    await runJobs();
    const dead = await insertRawRow('no-such-queue', PURGE);
    await capturingLogs('error', () => relayAll());
    const unfinished = await db.transaction((trx) => enqueue(trx, PURGE, {}));
    await relayAll();

    clock.advance(OUTBOX_SWEEP.retentionMs);
    expect(await sweepOutbox()).to.deep.include({ purged: 0 });
    expect((await outboxRow(completed)).completed_at).to.be.instanceOf(Date);
    clock.advance(1);
    expect(await sweepOutbox()).to.deep.include({ purged: 1 });
    expect(await outboxRow(completed)).to.equal(undefined);
    expect((await outboxRow(dead)).dead_at).to.be.instanceOf(Date);
    expect((await outboxRow(unfinished)).completed_at).to.equal(null);
  });

  it('indexes: pending rows exclude dead ones; the sweeper and the purge read their own partial indexes', async () => {
    const rows = (await db('pg_indexes').select('indexname', 'indexdef').where({ tablename: 'outbox' })) as { indexname: string; indexdef: string }[];
    const def = (name: string) => rows.find((r) => r.indexname === name)?.indexdef ?? '';
    expect(def('outbox_pending')).to.match(/\(available_at, id\) WHERE \(\(relayed_at IS NULL\) AND \(dead_at IS NULL\)\)/);
    expect(def('outbox_unfinished')).to.match(/WHERE \(\(relayed_at IS NOT NULL\) AND \(completed_at IS NULL\) AND \(dead_at IS NULL\)\)/);
    expect(def('outbox_completed')).to.match(/\(completed_at\) WHERE \(completed_at IS NOT NULL\)/);
  });

  it('the sweeper runs as a maintenance job on the timers queue, and the schedules come back after Redis loses them', async () => {
    const timers = getQueue('timers');
    await upsertMaintenanceSchedules();
    const ids = MAINTENANCE_SCHEDULES.filter((s) => JOBS[s.job] === 'timers').map((s) => s.id).sort();
    expect((await timers.getJobSchedulers()).map((s) => s.key).sort()).to.deep.equal(ids);
    expect(MAINTENANCE_SCHEDULES.find((s) => s.job === 'maintenance.sweep-outbox')?.everyMs).to.equal(60_000);

    // Only the last runs are kept (a minutely job kept for a week would pile up).
    for (const job of await timers.getJobs(['waiting', 'delayed'])) expect(job.opts.removeOnComplete).to.deep.equal({ count: 100 });
    // Upserting again (every worker copy does, periodically) keeps the next runs as they are.
    const next = (await timers.getJobs(['waiting', 'delayed'])).map((j) => j.id).sort();
    await upsertMaintenanceSchedules();
    expect((await timers.getJobs(['waiting', 'delayed'])).map((j) => j.id).sort()).to.deep.equal(next);

    await redis.flushdb();
    expect(await timers.getJobSchedulers()).to.deep.equal([]);
    await upsertMaintenanceSchedules();
    expect((await timers.getJobSchedulers()).map((s) => s.key).sort()).to.deep.equal(ids);

    // The first runs are due at once; the sweep reports what it did.
    const id = await db.transaction((trx) => enqueue(trx, PURGE, {}));
    const ran = await runJobs(['timers']);
    const sweep = ran.find((r) => r.name === 'maintenance.sweep-outbox');
    expect(sweep?.error).to.equal(undefined);
    expect(sweep?.result).to.deep.equal({ checked: 0, reenqueued: 0, completed: 0, dead: 0, purged: 0 });
    expect(ran.map((r) => r.name)).to.include.members([PURGE, 'maintenance.sweep-outbox']);
    expect((await outboxRow(id)).completed_at).to.be.instanceOf(Date);
  });
});

describe('platform: typed job payloads', () => {
  const WITHDRAWAL = '0b6b2a4e-3c1d-4f5e-8a9b-0c1d2e3f4a5b';

  it('an enqueue with a wrong payload is refused (the compiler and the schema), and the transaction writes nothing', async () => {
    const wrong: [string, () => Promise<unknown>][] = [
      // @ts-expect-error the id is missing
      ['missing id', () => db.transaction((trx) => enqueue(trx, 'payouts.send', {}))],
      // @ts-expect-error an id is a string
      ['number id', () => db.transaction((trx) => enqueue(trx, 'payouts.send', { withdrawal_id: 42 }))],
      // @ts-expect-error job data holds ids only
      ['personal data', () => db.transaction((trx) => enqueue(trx, 'payouts.send', { withdrawal_id: WITHDRAWAL, email: 'a@example.com' }))],
      [
        'notice about nothing',
        () => db.transaction((trx) => enqueue(trx, 'notifications.create', { user_id: WITHDRAWAL, type: 'escrow_paid', escrow_id: null, dispute_id: null, outcome: null })),
      ],
      ['empty batch', () => db.transaction((trx) => enqueue(trx, 'notifications.create-batch', { notices: [] }))],
    ];
    for (const [what, attempt] of wrong) {
      const err = await rejection(attempt());
      expect(err, what).to.be.instanceOf(JobPayloadError);
      expect((err as Error).message, what).to.match(/^job (payouts\.send|notifications\.create(-batch)?): malformed payload: /);
    }
    const err = await rejection(
      db.transaction(async (trx) => {
        await enqueue(trx, PURGE, {});
        // @ts-expect-error the escrow id is missing
        await enqueue(trx, 'escrows.expire', { order_id: WITHDRAWAL });
      }),
    );
    expect((err as Error).message).to.equal('job escrows.expire: malformed payload: "escrow_id" is required');
    expect(await countRows('outbox')).to.equal(0);
  });

  it('a producer adding to a queue directly is refused too; nothing reaches Redis', async () => {
    // @ts-expect-error the id is missing
    const err = await rejection(getQueue('payouts').add('payouts.send', {}, { jobId: 'payout-resend-x-1' }));
    expect(err).to.be.instanceOf(JobPayloadError);
    expect((err as Error).message).to.equal('job payouts.send: malformed payload: "withdrawal_id" is required');
    expect(await allJobCount()).to.equal(0);
    await getQueue('payouts').add('payouts.send', { withdrawal_id: WITHDRAWAL }, { jobId: 'payout-resend-x-1' });
    expect(await getQueue('payouts').getJobCounts('waiting')).to.deep.equal({ waiting: 1 });
  });

  it('a processor given a malformed payload fails unrecoverably: one attempt, the job failed for good, the row left for the sweeper', async () => {
    const now = clock.now();
    const [row] = await db('outbox')
      .insert({ queue: 'payouts', job: 'payouts.send', payload: { withdrawal_id: 7 }, available_at: now, created_at: now })
      .returning<{ id: number }[]>('id');
    const ran = await runJobs(['payouts']);
    expect(ran).to.have.length(1);
    expect(ran[0]!.error).to.equal(`job payouts.send (${outboxJobId(row!.id)}): malformed payload: "withdrawal_id" must be a string`);
    const job = await getQueue('payouts').getJob(outboxJobId(row!.id));
    expect(await job!.getState()).to.equal('failed');
    expect(job!.attemptsMade).to.equal(1);
    expect((await db('outbox').where({ id: row!.id }).first<{ completed_at: Date | null }>()).completed_at).to.equal(null);

    // The registry's processors check before they run, whoever calls them.
    const registry = buildRegistry();
    for (const [name, data] of [
      ['escrows.expire', {}],
      ['notifications.create', { user_id: WITHDRAWAL, type: 'no_such_type', escrow_id: WITHDRAWAL, dispute_id: null, outcome: null }],
      ['mail.send', { emailId: null }],
    ] as const) {
      const failed = await rejection(registry.get(name)!({ id: undefined, name, data } as unknown as Job<JobData>));
      expect(failed, name).to.be.instanceOf(UnrecoverableError);
      expect((failed as Error).message, name).to.match(new RegExp(`^job ${name.replace('.', '\\.')} \\(no id\\): malformed payload: `));
    }
  });
});
