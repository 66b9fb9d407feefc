/** SQL of the workspace event feed: the per-workspace sequence, the rows, a page of the feed. */
import type { Db } from '../db.js';

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

/**
 * Takes the workspace's next event number: `UPDATE ... SET last_event_seq = last_event_seq
 * + 1 RETURNING`, whose row lock is held until the caller's transaction ends (events.ts
 * explains why that keeps the feed gap-free and in order). Undefined for an unknown workspace.
 */
export async function nextSeq(trx: Db, workspaceId: string): Promise<{ seq: string; isSandbox: boolean } | undefined> {
  const [ws] = await trx('workspaces')
    .where({ id: workspaceId })
    .increment('last_event_seq', 1)
    .returning<{ last_event_seq: string; is_sandbox: boolean }[]>(['last_event_seq', 'is_sandbox']);
  return ws ? { seq: ws.last_event_seq, isSandbox: ws.is_sandbox } : undefined;
}

export async function insertEvent(trx: Db, row: NewEvent): Promise<EventRow> {
  const [inserted] = (await trx('workspace_events').insert(row).returning('*')) as EventRow[];
  return inserted!;
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
  const query = trx('workspace_events').where('workspace_id', workspaceId).where('seq', '>', q.after);
  if (q.before !== undefined) query.where('seq', '<', q.before);
  if (q.deal_id) query.where('deal_id', q.deal_id);
  if (q.event) query.where('event', q.event);
  return (await query.orderBy('seq', q.order).limit(q.limit).select('*')) as EventRow[];
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
