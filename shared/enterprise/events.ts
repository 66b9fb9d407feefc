/**
 * The workspace event feed (enterprise spec 4.9, 6). Every change appends its event in
 * the change's own transaction. `seq` comes from `UPDATE workspaces SET last_event_seq =
 * last_event_seq + 1 ... RETURNING`: the row lock this takes is held until the writer
 * commits, so a second writer of the same workspace waits and takes the next number
 * only after the first committed. Readers therefore never see seq N+1 before seq N, and
 * a rolled-back writer gives its number back (no gaps). `livemode` is fixed here, at
 * write time: true for every event of a live workspace, false in a sandbox and for events
 * about a sandbox deal (`sandbox`) after the switch to live (spec 2 and 6: it equals the
 * webhook flag; issue 42). No IP address is ever stored.
 */
import { clock } from '../clock.js';
import { db, type Db } from '../db.js';
import type { WorkspaceActor } from './access.js';
import * as repo from './events-repo.js';
import type { EventRow, FeedFilter } from './events-repo.js';
import { setting } from './repo.js';
import { nudgeWebhooksSql } from '../webhooks/nudge.js';

export type { EventRow } from './events-repo.js';

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
   * True for an event about a sandbox object in a live workspace: a deal made in the
   * sandbox (`is_test`) that finishes or is cancelled after the switch to live. Its
   * livemode is false; every other event of a live workspace is live, whether or not it
   * moves money. It can only lower livemode, never raise it.
   */
  sandbox?: boolean;
}

export const DEFAULT_OPERATOR_LABEL = 'Operator';

/**
 * The label operator actions carry in the feed (decision D9): the setting
 * `enterprise_operator_label`, default "Operator". Staff moves pass it as `actorLabel`
 * with no `actor`, so no staff member's name or address reaches a workspace.
 */
export async function operatorLabel(trx: Db): Promise<string> {
  const value = await setting(trx, 'enterprise_operator_label');
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : DEFAULT_OPERATOR_LABEL;
}

/** Appends one event; must run inside the transaction that makes the change. */
export async function appendEvent(trx: Db, workspaceId: string, input: EventInput): Promise<EventRow> {
  return (await appendEvents(trx, workspaceId, [input]))[0]!;
}

/**
 * Appends events in the order given, with consecutive seqs, in one statement (issue 29:
 * it was two per event): the workspace's counter moved by their number (the row lock that
 * orders the feed, above), the events inserted from it, and the webhook
 * nudge (nudge.ts) as a data-modifying CTE of the same statement. Must run inside the
 * transaction that makes the change.
 */
export async function appendEvents(trx: Db, workspaceId: string, inputs: readonly EventInput[]): Promise<EventRow[]> {
  if (!trx.isTransaction) throw new Error('appendEvents must run inside the change transaction');
  if (inputs.length === 0) return [];
  // Outbound webhooks: the workspace's endpoints are nudged after this transaction commits (decision 0020).
  const rows = await repo.insertEvents(trx, workspaceId, clock.now(), inputs.map(fieldsOf), nudgeWebhooksSql(trx, workspaceId));
  if (rows.length !== inputs.length) throw new Error(`workspace ${workspaceId} not found for event ${inputs[0]!.event}`);
  return rows;
}

/**
 * `appendEvents` for a change that needs no rows back, held for its COMMIT (`writeAtCommit`:
 * in a keyed request it travels with the COMMIT's round trip, or with the next reads', so a
 * move that ends with its events costs no round trip for them). Only for events of a row
 * whose foreign key keeps the workspace there (a deal's: shared/deals/events.ts), as the
 * unknown-workspace check of `appendEvents` cannot run on a held statement. The seq is taken
 * when the statement runs, under the same row lock, so the feed's order rules hold.
 */
export async function appendEventsAtCommit(trx: Db, workspaceId: string, inputs: readonly EventInput[]): Promise<void> {
  if (!trx.isTransaction) throw new Error('appendEventsAtCommit must run inside the change transaction');
  if (inputs.length === 0) return;
  await repo.insertEventsAtCommit(trx, workspaceId, clock.now(), inputs.map(fieldsOf), nudgeWebhooksSql(trx, workspaceId));
}

function fieldsOf(input: EventInput): repo.EventFields {
  return {
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
    real_money: input.sandbox !== true,
  };
}

export type FeedQuery = FeedFilter;

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
export async function readFeed(actor: WorkspaceActor, q: FeedQuery, trx: Db = db): Promise<FeedPage> {
  const items = await repo.feedPage(trx, actor.workspaceId, { ...q, before: q.order === 'desc' ? q.before : undefined });
  const seqs = items.map((e) => Number(e.seq));
  if (q.order === 'asc') return { items, next_after: seqs.length ? seqs[seqs.length - 1]! : q.after };
  return {
    items,
    next_after: seqs.length ? Math.max(q.after, seqs[0]!) : q.after,
    next_before: seqs.length === q.limit ? seqs[seqs.length - 1]! : null,
  };
}
