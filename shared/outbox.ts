/**
 * Transactional outbox (ARCHITECTURE rule 4). Services call `enqueue` inside the
 * transaction that makes the change; the relay moves committed rows to BullMQ with the
 * stable jobId `outbox-<id>`, so a crash between commit and enqueue delays a job but
 * never loses or doubles it.
 */
import type { Knex } from 'knex';
import { clock } from './clock.js';
import { db, type Db } from './db.js';
import { getQueue, isQueueName, JOBS, type JobData, type JobName } from './queues.js';

export interface EnqueueOptions {
  /** Do not run before this time (durable timers). */
  runAt?: Date;
}

export async function enqueue(trx: Db, job: JobName, data: JobData, options: EnqueueOptions = {}): Promise<number> {
  const now = clock.now();
  const [row] = (await trx('outbox')
    .insert({
      queue: JOBS[job],
      job,
      payload: data,
      available_at: options.runAt ?? now,
      created_at: now,
    })
    .returning<{ id: number }[]>('id'));
  if (!row) throw new Error('outbox insert returned no row');
  return row.id;
}

export function outboxJobId(id: number): string {
  return `outbox-${id}`;
}

interface OutboxRow {
  id: number;
  queue: string;
  job: string;
  payload: JobData;
}

/**
 * Relays up to `limit` due rows. Rows are locked (SKIP LOCKED) so several relays can run;
 * they are marked relayed only after BullMQ accepted them, in the same transaction.
 * Returns the number of rows relayed.
 */
export async function relayOnce(limit = 200, knex: Knex = db): Promise<number> {
  return knex.transaction(async (trx) => {
    const rows = (await trx('outbox')
      .select('id', 'queue', 'job', 'payload')
      .whereNull('relayed_at')
      .where('available_at', '<=', clock.now())
      .orderBy('id')
      .limit(limit)
      .forUpdate()
      .skipLocked()) as OutboxRow[];
    if (rows.length === 0) return 0;
    const byQueue = new Map<string, OutboxRow[]>();
    for (const row of rows) {
      const list = byQueue.get(row.queue) ?? [];
      list.push(row);
      byQueue.set(row.queue, list);
    }
    for (const [queueName, list] of byQueue) {
      if (!isQueueName(queueName)) throw new Error(`outbox row names unknown queue ${queueName}`);
      await getQueue(queueName).addBulk(
        list.map((r) => ({ name: r.job, data: r.payload, opts: { jobId: outboxJobId(r.id) } })),
      );
    }
    await trx('outbox')
      .whereIn(
        'id',
        rows.map((r) => r.id),
      )
      .update({ relayed_at: clock.now() });
    return rows.length;
  });
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
