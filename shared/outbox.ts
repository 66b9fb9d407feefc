/**
 * Transactional outbox (ARCHITECTURE rule 4, decision 0006). Services call `enqueue`
 * inside the transaction that makes the change; the relay moves committed, due rows to
 * BullMQ with the stable jobId `outbox-<id>`, so a crash between commit and enqueue delays
 * a job but never loses or doubles it.
 *
 * A row lives until its job completes: the worker records `completed_at` when the job
 * succeeds (`markCompleted`), and `sweepOutbox` re-sends rows whose job Redis lost, records
 * completions the worker missed, and dead-letters jobs that failed for good. A row the
 * relay cannot deliver (unknown queue or job) is dead-lettered instead of stalling the rest.
 *
 * With tracing on (shared/tracing.ts) a row also keeps the `traceparent` of the span that
 * wrote it, and the relay adds its job within that context: BullMQ's producer span, the
 * worker's consumer span and the job's own work continue the trace of the request or job
 * that wrote the row. With tracing off rows are written and relayed as they always were.
 */
import type { Knex } from 'knex';
import { clock } from './clock.js';
import { db, deleteInBatches, type Db } from './db.js';
import { logger } from './logger.js';
import { outboxDeadLetters, outboxReenqueued } from './metrics.js';
import { redis } from './redis.js';
import { checkPayload, getQueue, isJobName, isQueueName, JOBS, type JobData, type JobName, type JobPayloads, type QueueName } from './queues.js';
import { currentTraceparent, tracingOn, withTraceparent } from './tracing.js';

export interface EnqueueOptions {
  /** Do not run before this time (durable timers). */
  runAt?: Date;
}

/** One job for `enqueueMany`. */
export interface OutboxItem<N extends JobName = JobName> {
  job: N;
  data: JobPayloads[N];
  options?: EnqueueOptions;
}

/** An OutboxItem, its payload type checked against its job name. */
export const outboxItem = <N extends JobName>(job: N, data: JobPayloads[N], options?: EnqueueOptions): OutboxItem => ({ job, data, options });

/**
 * Writes job `job` to the outbox in `trx`. The payload is checked against the job's schema
 * first: a wrong one throws JobPayloadError (and the caller's transaction rolls back).
 */
export async function enqueue<N extends JobName>(trx: Db, job: N, data: JobPayloads[N], options: EnqueueOptions = {}): Promise<number> {
  const [id] = await enqueueMany(trx, [outboxItem(job, data, options)]);
  return id!;
}

/**
 * Writes several jobs to the outbox in `trx` with one INSERT (one round trip), in order;
 * each payload checked as `enqueue` checks it. Returns the rows' ids in the same order.
 */
export async function enqueueMany(trx: Db, items: readonly OutboxItem[]): Promise<number[]> {
  if (items.length === 0) return [];
  const rows = outboxRows(items);
  const inserted = await trx('outbox').insert(rows).returning<{ id: number }[]>('id');
  if (inserted.length !== rows.length) throw new Error('outbox insert returned fewer rows than it was given');
  // Ids come from one sequence in VALUES order; sorted so callers can rely on it.
  return inserted.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/**
 * The outbox rows of `items`, each payload checked as `enqueue` checks it. With tracing on,
 * each keeps the active span's `traceparent` (null without one: one column list either way,
 * so a named statement has one text); with tracing off, the columns rows always had.
 */
function outboxRows(items: readonly OutboxItem[]) {
  const now = clock.now();
  const traced = tracingOn() ? { trace_context: currentTraceparent() } : undefined;
  return items.map((it) => ({
    queue: JOBS[it.job],
    job: it.job,
    payload: checkPayload(it.job, it.data),
    available_at: it.options?.runAt ?? now,
    created_at: now,
    ...traced,
  }));
}

/**
 * The INSERT of `items` as SQL with `?` bindings, for a caller that writes them inside its
 * own statement (a data-modifying CTE: one round trip for the change and its jobs); rows
 * in the order given, payloads checked. Undefined for no items.
 */
export function outboxInsertSql(trx: Db, items: readonly OutboxItem[]): { sql: string; bindings: readonly unknown[] } | undefined {
  if (items.length === 0) return undefined;
  const q = trx('outbox').insert(outboxRows(items)).toSQL();
  return { sql: q.sql, bindings: q.bindings };
}

/**
 * One item's INSERT that writes the row only when `condition` (SQL with `?` bindings) holds
 * when the statement runs, for a data-modifying CTE (webhooks/nudge.ts: only for a workspace
 * with an active endpoint). Payload checked as `enqueue` checks it.
 */
export function outboxInsertWhereSql(item: OutboxItem, condition: string, conditionBindings: readonly unknown[]): { sql: string; bindings: readonly unknown[] } {
  const [row] = outboxRows([item]);
  if (row!.trace_context !== undefined) {
    return {
      sql: `INSERT INTO outbox (queue, job, payload, available_at, created_at, trace_context) SELECT ?, ?, ?::jsonb, ?::timestamptz, ?::timestamptz, ? WHERE ${condition}`,
      bindings: [row!.queue, row!.job, JSON.stringify(row!.payload), row!.available_at, row!.created_at, row!.trace_context, ...conditionBindings],
    };
  }
  return {
    sql: `INSERT INTO outbox (queue, job, payload, available_at, created_at) SELECT ?, ?, ?::jsonb, ?::timestamptz, ?::timestamptz WHERE ${condition}`,
    bindings: [row!.queue, row!.job, JSON.stringify(row!.payload), row!.available_at, row!.created_at, ...conditionBindings],
  };
}

export function outboxJobId(id: number): string {
  return `outbox-${id}`;
}

/** The outbox row id behind a BullMQ jobId, or null for jobs that did not come from the outbox. */
export function outboxIdOf(jobId: string | undefined): number | null {
  const match = /^outbox-([1-9][0-9]{0,15})$/.exec(jobId ?? '');
  if (!match) return null;
  const id = Number(match[1]);
  return Number.isSafeInteger(id) ? id : null;
}

interface OutboxRow {
  id: number;
  queue: string;
  job: string;
  payload: JobData;
  /** Read only with tracing on: the `traceparent` of the span that wrote the row. */
  trace_context?: string | null;
}

/** The columns the relay and the sweeper read (the trace context only when tracing is on). */
const relayColumns = (): string[] => (tracingOn() ? ['id', 'queue', 'job', 'payload', 'trace_context'] : ['id', 'queue', 'job', 'payload']);

interface DeadLetter {
  id: number;
  queue: string;
  job: string;
  /** Metric label: a small fixed set. */
  kind: 'unknown_queue' | 'unknown_job' | 'wrong_queue' | 'job_failed';
  reason: string;
}

/** Why a row cannot be delivered, or null when its queue and job are known and agree. */
function undeliverable(row: OutboxRow): DeadLetter | null {
  const base = { id: row.id, queue: row.queue, job: row.job };
  if (!isQueueName(row.queue)) return { ...base, kind: 'unknown_queue', reason: `unknown queue ${row.queue}` };
  if (!isJobName(row.job)) return { ...base, kind: 'unknown_job', reason: `unknown job ${row.job}` };
  if (JOBS[row.job] !== row.queue) {
    return { ...base, kind: 'wrong_queue', reason: `job ${row.job} belongs to queue ${JOBS[row.job]}, not ${row.queue}` };
  }
  return null;
}

async function markDead(trx: Knex.Transaction, dead: DeadLetter[]): Promise<void> {
  const now = clock.now();
  for (const d of dead) {
    await trx('outbox').where({ id: d.id }).whereNull('dead_at').update({ dead_at: now, dead_reason: d.reason.slice(0, 1000) });
  }
}

/** Called after the transaction that marked the rows committed, so a rollback is not counted. */
function reportDead(dead: DeadLetter[]): void {
  for (const d of dead) {
    outboxDeadLetters.inc({ reason: d.kind });
    logger.error({ outbox_id: d.id, queue: d.queue, job: d.job, reason: d.reason }, 'outbox row dead-lettered; an operator must look at it');
  }
}

/**
 * Adds rows to BullMQ with the row's stable jobId: one addBulk per queue, or with tracing on
 * one per queue and trace context, each within the context its rows keep (so BullMQ's
 * producer span, and through it the job, continue the trace that wrote them).
 */
async function addJobs(rows: OutboxRow[]): Promise<void> {
  const byQueue = new Map<QueueName, Map<string | null, OutboxRow[]>>();
  for (const row of rows) {
    const queue = row.queue as QueueName; // checked by undeliverable()
    const byTrace = byQueue.get(queue) ?? new Map<string | null, OutboxRow[]>();
    const traceContext = row.trace_context ?? null;
    const list = byTrace.get(traceContext) ?? [];
    list.push(row);
    byTrace.set(traceContext, list);
    byQueue.set(queue, byTrace);
  }
  for (const [queueName, byTrace] of byQueue) {
    const queue = getQueue(queueName);
    const add = (list: OutboxRow[]) => queue.addBulk(list.map((r) => ({ name: r.job, data: r.payload, opts: { jobId: outboxJobId(r.id) } })));
    await Promise.all([...byTrace].map(([traceContext, list]) => withTraceparent(traceContext, () => add(list))));
  }
}

/** The relay's query: due, unrelayed rows, locked (SKIP LOCKED). Exported for the bench's EXPLAIN. */
export function dueRows(trx: Knex.Transaction, limit: number): Knex.QueryBuilder {
  return (
    trx('outbox')
      .select(relayColumns())
      .whereNull('relayed_at')
      .whereNull('dead_at')
      .where('available_at', '<=', clock.now())
      // The order of the outbox_pending index: the scan stops after `limit` due rows,
      // instead of walking the primary key past every relayed row.
      .orderBy([{ column: 'available_at' }, { column: 'id' }])
      .limit(limit)
      .forUpdate()
      .skipLocked()
  );
}

/**
 * Relays up to `limit` due rows. Rows are locked (SKIP LOCKED) so several relays can run;
 * they are marked relayed only after BullMQ accepted them, in the same transaction. A row
 * naming an unknown queue or job is dead-lettered (never picked again) and the rest of the
 * batch goes on. Returns the number of rows taken off the pending list (relayed or dead).
 */
export async function relayOnce(limit = 200, knex: Knex = db): Promise<number> {
  const dead: DeadLetter[] = [];
  const taken = await knex.transaction(async (trx) => {
    const rows = (await dueRows(trx, limit)) as OutboxRow[];
    if (rows.length === 0) return 0;
    const good: OutboxRow[] = [];
    for (const row of rows) {
      const why = undeliverable(row);
      if (why) dead.push(why);
      else good.push(row);
    }
    await markDead(trx, dead);
    await addJobs(good);
    if (good.length > 0) {
      await trx('outbox')
        .whereIn(
          'id',
          good.map((r) => r.id),
        )
        .update({ relayed_at: clock.now() });
    }
    return rows.length;
  });
  reportDead(dead);
  return taken;
}

/** Relays until nothing due is left. */
export async function relayAll(knex: Knex = db): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await relayOnce(200, knex);
    total += n;
    if (n === 0) return total;
  }
}

/**
 * Records that the job of an outbox row completed. The worker calls it when a processor
 * returns, before BullMQ marks the job completed, so a row is never left uncompleted
 * behind a job BullMQ has already removed. `relayed_at` is filled in case the relay that
 * sent the job rolled back after BullMQ took it.
 */
export async function markCompleted(id: number, knex: Db = db): Promise<boolean> {
  const now = clock.now();
  const n = await knex('outbox')
    .where({ id })
    .whereNull('completed_at')
    .update({ completed_at: now, relayed_at: knex.raw('COALESCE(relayed_at, ?)', [now]) });
  return n > 0;
}

export const OUTBOX_SWEEP = {
  /** A relayed row is checked once its job had this long to show up and finish. */
  graceMs: 60_000,
  /** Completed rows are deleted this long after completion. */
  retentionMs: 7 * 24 * 3600_000,
  /** Rows looked at per transaction. */
  pageSize: 500,
  /** Completed rows deleted per statement. */
  purgeBatch: 5_000,
} as const;

export interface SweepOptions {
  graceMs?: number;
  retentionMs?: number;
  pageSize?: number;
}

export interface SweepResult {
  /** Relayed rows past the grace period whose job had not completed. */
  checked: number;
  /** Job missing from Redis: enqueued again with the same jobId. */
  reenqueued: number;
  /** Job completed in BullMQ without the row knowing: row marked completed. */
  completed: number;
  /** Job failed for good, or the row is no longer deliverable: dead-lettered. */
  dead: number;
  /** Completed rows past retention, deleted. */
  purged: number;
}

/**
 * The outbox sweeper (decision D6's "periodic sweeper", decision 0006). For every row
 * relayed more than `graceMs` ago whose job has not completed, asks BullMQ for the job:
 * - missing (Redis flushed, failover): enqueue it again with the same jobId, so the
 *   job runs (once: a completed row is never looked at, a present job dedupes the add);
 * - completed: mark the row completed;
 * - failed for good: dead-letter the row for an operator (retry it from the dashboard);
 * - waiting, active, delayed, prioritized: leave it.
 * Then deletes completed rows older than `retentionMs`. Rows are locked SKIP LOCKED page
 * by page, so sweepers in several workers share the work.
 */
export async function sweepOutbox(options: SweepOptions = {}, knex: Knex = db): Promise<SweepResult> {
  const graceMs = options.graceMs ?? OUTBOX_SWEEP.graceMs;
  const retentionMs = options.retentionMs ?? OUTBOX_SWEEP.retentionMs;
  const pageSize = options.pageSize ?? OUTBOX_SWEEP.pageSize;
  const result: SweepResult = { checked: 0, reenqueued: 0, completed: 0, dead: 0, purged: 0 };
  const cutoff = new Date(clock.nowMs() - graceMs);
  let afterId = 0;
  for (;;) {
    const page = await sweepPage(knex, { cutoff, afterId, pageSize }, result);
    const last = page.at(-1);
    if (!last || page.length < pageSize) break;
    afterId = last.id;
  }
  result.purged = await purgeCompleted(retentionMs, knex);
  return result;
}

/** What the sweeper does with one relayed row whose job has not completed (null: leave it). */
type Finding = 'completed' | 'reenqueue' | DeadLetter | null;

/**
 * What the sweeper does with each row of a page, in one Redis round trip for the page: per
 * row three lookups of constant or logarithmic cost (the job's hash, the completed and the
 * failed sets), not BullMQ's getJobState, which also searches the waiting list (LPOS): a
 * sweep over a backlog of n waiting jobs cost n² in Redis and starved the very workers that
 * would drain it (seen: 200,000 queued notices drained at 5 a second, every Redis call
 * behind 10 ms searches of the waiting list).
 */
async function inspectPage(rows: readonly OutboxRow[]): Promise<Finding[]> {
  const why = rows.map(undeliverable);
  const pipeline = redis.pipeline();
  // Row i's three replies start at first[i].
  const first = rows.map((row, i) => {
    if (why[i]) return -1;
    const queue = getQueue(row.queue as QueueName);
    const jobId = outboxJobId(row.id);
    const at = pipeline.length;
    pipeline.exists(queue.toKey(jobId)).zscore(queue.keys.completed!, jobId).zscore(queue.keys.failed!, jobId);
    return at;
  });
  const replies = pipeline.length > 0 ? ((await pipeline.exec()) ?? []) : [];
  return Promise.all(
    rows.map(async (row, i): Promise<Finding> => {
      const dead = why[i];
      if (dead) return dead;
      const at = first[i]!;
      const [exists, completed, failed] = [replies[at], replies[at + 1], replies[at + 2]];
      for (const reply of [exists, completed, failed]) if (!reply || reply[0]) throw reply?.[0] ?? new Error('outbox sweep: Redis sent too few replies');
      if (completed![1] !== null) return 'completed';
      const jobId = outboxJobId(row.id);
      if (failed![1] !== null) {
        const job = await getQueue(row.queue as QueueName).getJob(jobId);
        return { id: row.id, queue: row.queue, job: row.job, kind: 'job_failed', reason: `job failed: ${job?.failedReason ?? 'unknown reason'}` };
      }
      // Its job is still in Redis (waiting, delayed, active, or in no list at all, where a
      // re-add with the same jobId would be swallowed: either way nothing to send again).
      if (exists![1] === 1) return null;
      return 'reenqueue';
    }),
  );
}

/** One page of the sweep in a transaction of its own (rows after `afterId`, locked SKIP LOCKED); adds to `result`, returns the rows looked at. */
async function sweepPage(knex: Knex, at: { cutoff: Date; afterId: number; pageSize: number }, result: SweepResult): Promise<OutboxRow[]> {
  const dead: DeadLetter[] = [];
  const reenqueued: OutboxRow[] = [];
  const page = await knex.transaction(async (trx) => {
    const rows = (await trx('outbox')
      .select(relayColumns())
      .whereNotNull('relayed_at')
      .whereNull('completed_at')
      .whereNull('dead_at')
      .where('relayed_at', '<=', at.cutoff)
      .where('id', '>', at.afterId)
      .orderBy('id')
      .limit(at.pageSize)
      .forUpdate()
      .skipLocked()) as OutboxRow[];
    const completed: number[] = [];
    const findings = await inspectPage(rows);
    rows.forEach((row, i) => {
      const found = findings[i];
      if (found === 'completed') completed.push(row.id);
      else if (found === 'reenqueue') reenqueued.push(row);
      else if (found) dead.push(found);
    });
    const now = clock.now();
    if (completed.length > 0) await trx('outbox').whereIn('id', completed).whereNull('completed_at').update({ completed_at: now });
    await markDead(trx, dead);
    if (reenqueued.length > 0) {
      await addJobs(reenqueued);
      // The grace period starts again: the job had just been sent.
      await trx('outbox')
        .whereIn(
          'id',
          reenqueued.map((r) => r.id),
        )
        .update({ relayed_at: now });
    }
    result.checked += rows.length;
    result.completed += completed.length;
    return rows;
  });
  reportDead(dead);
  result.dead += dead.length;
  for (const row of reenqueued) {
    outboxReenqueued.inc({ queue: row.queue });
    logger.warn({ outbox_id: row.id, queue: row.queue, job: row.job }, 'outbox job missing from Redis; enqueued again');
  }
  result.reenqueued += reenqueued.length;
  return page;
}

/** Deletes completed rows older than the retention period, in batches. Dead rows stay. */
async function purgeCompleted(retentionMs: number, knex: Knex): Promise<number> {
  const before = new Date(clock.nowMs() - retentionMs);
  return deleteInBatches(OUTBOX_SWEEP.purgeBatch, (limit) =>
    knex('outbox')
      .whereIn('id', knex('outbox').select('id').whereNotNull('completed_at').where('completed_at', '<', before).limit(limit))
      .delete(),
  );
}
