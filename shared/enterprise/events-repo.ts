/** SQL of the workspace event feed: the per-workspace sequence, the rows, a page of the feed. */
import type { Knex } from 'knex';
import { nativeOf, preparedNative, writeAtCommit, type Db, type NativeStatement } from '../db.js';

export interface EventRow {
  workspace_id: string;
  seq: string | number;
  id: string;
  event: string;
  entity_type: string;
  entity_id: string | null;
  deal_id: string | null;
  deal_reference: string | null;
  actor_id: string | null;
  actor_name: string | null;
  actor_label: string | null;
  amount: string | number | null;
  summary: string;
  livemode: boolean;
  created_at: Date;
}

export type NewEvent = Omit<EventRow, 'id'>;

/** An event as `insertEvents` takes it: livemode is decided in SQL from the workspace and `real_money` (false only for a sandbox deal's event). */
export type EventFields = Omit<NewEvent, 'workspace_id' | 'seq' | 'livemode' | 'created_at'> & { real_money: boolean };

/**
 * The events in one statement: the workspace's counter moved by their number (`UPDATE ...
 * SET last_event_seq = last_event_seq + n RETURNING`, whose row lock events.ts explains), the rows numbered from it in the order given, livemode false for a sandbox
 * workspace or an event that moves no real money, and `also` (a data-modifying statement
 * with `?` bindings, e.g. the webhook nudge) run with them. Rows in seq order; none for an
 * unknown workspace.
 */
export async function insertEvents(trx: Db, workspaceId: string, at: Date, events: readonly EventFields[], also?: NativeStatement): Promise<EventRow[]> {
  const rows = await preparedNative<EventRow>(trx as Knex, eventsStatement(trx, workspaceId, at, events, also, true));
  return rows.sort((a, b) => Number(a.seq) - Number(b.seq));
}

/**
 * `insertEvents` held for the transaction's COMMIT (`writeAtCommit`): for a change that
 * does not need the rows and holds a row whose foreign key keeps the workspace (a deal's
 * events), so the counter's row is there when the statement runs. Nothing is returned
 * (no rows for node-postgres to read back).
 */
export async function insertEventsAtCommit(trx: Db, workspaceId: string, at: Date, events: readonly EventFields[], also?: NativeStatement): Promise<void> {
  await writeAtCommit(trx, eventsStatement(trx, workspaceId, at, events, also, false));
}

/** The statement of `insertEvents` (one text per `also` text and `returning`: prepared once per connection). */
function eventsStatement(trx: Db, workspaceId: string, at: Date, events: readonly EventFields[], also: NativeStatement | undefined, returning: boolean): NativeStatement {
  const col = <K extends keyof EventFields>(k: K) => events.map((e) => e[k]);
  return nativeOf(
    trx,
    `WITH ws AS (UPDATE workspaces SET last_event_seq = last_event_seq + ? WHERE id = ? RETURNING last_event_seq, is_sandbox)${also ? `,
          also AS (${also.sql})` : ''}
     INSERT INTO workspace_events (workspace_id, seq, event, entity_type, entity_id, deal_id, deal_reference, actor_id, actor_name, actor_label, amount, summary, livemode, created_at)
     SELECT ?, ws.last_event_seq - ? + e.ord, e.event, e.entity_type, e.entity_id, e.deal_id, e.deal_reference, e.actor_id, e.actor_name, e.actor_label, e.amount, e.summary,
            NOT ws.is_sandbox AND e.real_money, ?
       FROM ws, unnest(?::text[], ?::text[], ?::uuid[], ?::uuid[], ?::text[], ?::uuid[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::boolean[])
                WITH ORDINALITY AS e(event, entity_type, entity_id, deal_id, deal_reference, actor_id, actor_name, actor_label, amount, summary, real_money, ord)
      ORDER BY e.ord${returning ? `
     RETURNING *` : ''}`,
    [
      events.length,
      workspaceId,
      ...(also?.bindings ?? []),
      workspaceId,
      events.length,
      at,
      col('event'),
      col('entity_type'),
      col('entity_id'),
      col('deal_id'),
      col('deal_reference'),
      col('actor_id'),
      col('actor_name'),
      col('actor_label'),
      col('amount'),
      col('summary'),
      col('real_money'),
    ],
  );
}

export interface FeedFilter {
  after: number;
  order: 'asc' | 'desc';
  before?: number;
  limit: number;
  deal_id?: string;
  event?: string;
}

/** Events above `after` (and below `before` when given), in `order`, at most `limit`. */
export async function feedPage(trx: Db, workspaceId: string, q: FeedFilter): Promise<EventRow[]> {
  return (await feedPageQuery(trx, workspaceId, q)) as EventRow[];
}

/** `feedPage`'s query, to run with other reads (`readTogether`). */
export function feedPageQuery(trx: Db, workspaceId: string, q: FeedFilter): Knex.QueryBuilder {
  const query = trx('workspace_events').where('workspace_id', workspaceId).where('seq', '>', q.after);
  if (q.before !== undefined) query.where('seq', '<', q.before);
  if (q.deal_id) query.where('deal_id', q.deal_id);
  if (q.event) query.where('event', q.event);
  return query.orderBy('seq', q.order).limit(q.limit).select('*');
}

/** Events created in [from, to) with seq above `afterSeq`, oldest first, at most `limit` (the audit export reads it page by page). */
export async function eventsBetween(trx: Db, workspaceId: string, from: Date, to: Date, afterSeq: number, limit: number): Promise<EventRow[]> {
  return (await trx('workspace_events')
    .where({ workspace_id: workspaceId })
    .where('seq', '>', afterSeq)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .orderBy('seq', 'asc')
    .limit(limit)) as EventRow[];
}
