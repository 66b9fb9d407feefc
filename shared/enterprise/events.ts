/**
 * The workspace event feed (enterprise spec 4.9, 6). Every change appends its event in
 * the change's own transaction. `seq` comes from `UPDATE workspaces SET last_event_seq =
 * last_event_seq + 1 ... RETURNING`: the row lock this takes is held until the writer
 * commits, so a second writer of the same workspace waits and takes the next number
 * only after the first committed. Readers therefore never see seq N+1 before seq N, and
 * a rolled-back writer gives its number back (no gaps). `livemode` is fixed here, at
 * write time; no IP address is ever stored.
 */
import { clock } from '../clock.js';
import type { Db } from '../db.js';

export interface EventInput {
  event: string;
  entityType: string;
  entityId?: string | null;
  dealId?: string | null;
  dealReference?: string | null;
  /** The person who acted (null for the operator or the system). */
  actor?: { id: string; name: string } | null;
  /** Set for operator actions (decision D9), e.g. "Operator". */
  actorLabel?: string | null;
  amount?: number | null;
  summary: string;
  /**
   * False for events that move no real money even in a live workspace (e.g. a sandbox
   * deal finishing after the switch to live). It can only lower livemode, never raise it.
   */
  realMoney?: boolean;
}

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

export const DEFAULT_OPERATOR_LABEL = 'Operator';

/**
 * The label operator actions carry in the feed (decision D9): the setting
 * `enterprise_operator_label`, default "Operator". Staff moves pass it as `actorLabel`
 * with no `actor`, so no staff member's name or address reaches a workspace.
 */
export async function operatorLabel(trx: Db): Promise<string> {
  const row = (await trx('settings').select('value').where({ key: 'enterprise_operator_label' }).first()) as { value: unknown } | undefined;
  return typeof row?.value === 'string' && row.value.trim() !== '' ? row.value.trim() : DEFAULT_OPERATOR_LABEL;
}

/** Appends one event; must run inside the transaction that makes the change. */
export async function appendEvent(trx: Db, workspaceId: string, input: EventInput): Promise<EventRow> {
  if (!trx.isTransaction) throw new Error('appendEvent must run inside the change transaction');
  const bumped = await trx('workspaces')
    .where({ id: workspaceId })
    .increment('last_event_seq', 1)
    .returning<{ last_event_seq: string; is_sandbox: boolean }[]>(['last_event_seq', 'is_sandbox']);
  const ws = bumped[0];
  if (!ws) throw new Error(`workspace ${workspaceId} not found for event ${input.event}`);
  const [row] = (await trx('workspace_events')
    .insert({
      workspace_id: workspaceId,
      seq: ws.last_event_seq,
      event: input.event,
      entity_type: input.entityType,
      entity_id: input.entityId ?? null,
      deal_id: input.dealId ?? null,
      deal_reference: input.dealReference ?? null,
      actor_id: input.actor?.id ?? null,
      actor_name: input.actor?.name ?? null,
      actor_label: input.actorLabel ?? null,
      amount: input.amount ?? null,
      summary: input.summary,
      livemode: !ws.is_sandbox && input.realMoney !== false,
      created_at: clock.now(),
    })
    .returning('*')) as EventRow[];
  return row!;
}

export interface FeedQuery {
  after: number;
  order: 'asc' | 'desc';
  before?: number;
  limit: number;
  deal_id?: string;
  event?: string;
}

export interface FeedPage {
  items: EventRow[];
  next_after: number;
  next_before?: number | null;
}

/**
 * One page of the feed. Ascending (polling): events above `after`, oldest first;
 * `next_after` is the last seq returned, or `after` itself when nothing is new.
 * Descending: events above `after` and below `before`, newest first; `next_after` is the
 * newest seq returned (or `after`), `next_before` the oldest returned while more may
 * follow (null at the end).
 */
export async function readFeed(trx: Db, workspaceId: string, q: FeedQuery): Promise<FeedPage> {
  const query = trx('workspace_events').where('workspace_id', workspaceId).where('seq', '>', q.after);
  if (q.order === 'desc' && q.before !== undefined) query.where('seq', '<', q.before);
  if (q.deal_id) query.where('deal_id', q.deal_id);
  if (q.event) query.where('event', q.event);
  const items = (await query.orderBy('seq', q.order).limit(q.limit).select('*')) as EventRow[];
  const seqs = items.map((e) => Number(e.seq));
  if (q.order === 'asc') return { items, next_after: seqs.length ? seqs[seqs.length - 1]! : q.after };
  return {
    items,
    next_after: seqs.length ? Math.max(q.after, seqs[0]!) : q.after,
    next_before: seqs.length === q.limit ? seqs[seqs.length - 1]! : null,
  };
}
