/**
 * The shape every staff queue shares (review R4): live workspaces' items before sandbox
 * ones, oldest first within each, read in pages by a keyset cursor so no item is ever out
 * of reach (a sandbox workspace with hundreds of items cannot push a live one off the
 * page). The order is the tuple (is_sandbox, age, id): false sorts before true, so live
 * comes first; the cursor is the last item's tuple, opaque to callers (base64url JSON).
 *
 * Used by every queue of the operator console (disputes, withdrawals, payments, orders, KYB,
 * funding, payout instructions, payouts, rulings; the consumer half's have no sandbox items:
 * `sandbox` null) and the admin API's instruction queue: one helper, not copies.
 */
import type { Knex } from 'knex';
import { db } from '../db.js';
import { fail } from '../errors.js';
import { whereSearch, type SearchColumns } from './search.js';

/** Items per queue page unless the caller asks for fewer. */
export const QUEUE_PAGE = 50;
export const QUEUE_PAGE_MAX = 100;

/**
 * The columns a queue orders by: the workspace's sandbox flag, the item's age, a unique id.
 * `sandbox` null: a queue with no sandbox items (the consumer half's), ordered by age and id.
 */
export interface QueueOrder {
  sandbox: string | null;
  since: string;
  id: string;
  /**
   * An integer column after `id` when `id` alone does not name one item (the funding queue:
   * a deal's milestones share its id and activation and go in their sequence order).
   */
  rank?: string;
  /** A list read newest first (the accounts list) rather than a queue's oldest first; only without `sandbox`. */
  newestFirst?: boolean;
}

interface Key {
  sandbox: boolean;
  since: string;
  id: string;
  rank: number | null;
}

/**
 * What staff narrow a queue by (issue 46): `q` an id (exactly) or part of a name, e-mail,
 * reference (shared/staff/search.ts), `before` only items waiting since that instant or
 * earlier (the queue's `since` column). Null: not narrowed.
 */
export interface StaffSearch {
  q: string | null;
  before: Date | null;
}

/** A queue not narrowed. */
export const NO_SEARCH: StaffSearch = { q: null, before: null };

/** A queue's search: what staff asked for and the columns the queue searches. */
export interface QueueSearch {
  by: StaffSearch;
  columns: SearchColumns;
}

/** Which page of a queue: the cursor a previous page gave (none for the first) and how many. */
export interface QueueCursor {
  cursor?: string | null;
  limit?: number;
}

export interface QueuePage<T> {
  rows: T[];
  /** The cursor of the next page; null on the last one. */
  next: string | null;
}

/** Keys of a row as the queue reads them (aliases the select must provide). */
export interface QueueKeyed {
  queue_sandbox: boolean;
  queue_since: Date;
  queue_id: string;
  queue_rank?: number;
}

export const encodeCursor = (k: Key): string =>
  Buffer.from(JSON.stringify(k.rank === null ? [k.sandbox, k.since, k.id] : [k.sandbox, k.since, k.id, k.rank]), 'utf8').toString('base64url');

const badCursor = () => fail.badRequest('INVALID_QUERY', { en: 'cursor is not a cursor this queue gave', id: 'cursor bukan cursor dari antrean ini' });

/** The key a cursor names; 400 INVALID_QUERY for anything this module did not write. */
export function decodeCursor(cursor: string): Key {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(parsed) || (parsed.length !== 3 && parsed.length !== 4)) throw badCursor();
  const [sandbox, since, id, rank] = parsed as unknown[];
  if (typeof sandbox !== 'boolean' || typeof since !== 'string' || typeof id !== 'string') throw badCursor();
  if (Number.isNaN(Date.parse(since)) || !/^[0-9a-f-]{36}$/i.test(id)) throw badCursor();
  if (rank !== undefined && !Number.isSafeInteger(rank)) throw badCursor();
  return { sandbox, since, id, rank: rank === undefined ? null : (rank as number) };
}

/**
 * One page of a queue: `q` is the query with its joins and filters (no order, no limit);
 * the helper adds the key columns (as queue_sandbox, queue_since, queue_id), the live-first
 * oldest-first order, the cursor's bound, the staff search when given (waiting since
 * `order.since` at the latest, `q` over its columns) and the limit, and answers the rows with
 * the next cursor. Identifiers are bound as identifiers, values as values.
 */
export async function queuePage<T extends object>(
  q: Knex.QueryBuilder,
  order: QueueOrder,
  opts: QueueCursor,
  search?: QueueSearch,
): Promise<QueuePage<T & QueueKeyed>> {
  const limit = Math.min(Math.max(1, opts.limit ?? QUEUE_PAGE), QUEUE_PAGE_MAX);
  const page = q.clone().select({ queue_since: order.since, queue_id: order.id }).limit(limit + 1);
  if (search?.by.before) void page.where(order.since, '<=', search.by.before);
  if (search?.by.q) whereSearch(page, search.by.q, search.columns);
  // The key, as columns and as the cursor's values with their types: (sandbox,) since, id (, rank).
  const columns: string[] = [];
  const bound: string[] = [];
  const values: (string | number | boolean)[] = [];
  const k: Key | null = opts.cursor ? decodeCursor(opts.cursor) : null;
  if (k && (k.rank === null) !== (order.rank === undefined)) throw badCursor();
  if (order.sandbox === null) {
    void page.select(db.raw('false AS queue_sandbox'));
  } else {
    void page.select({ queue_sandbox: order.sandbox });
    columns.push(order.sandbox);
    bound.push('?');
    if (k) values.push(k.sandbox);
  }
  columns.push(order.since, order.id);
  bound.push('?::timestamptz', '?::uuid');
  if (k) values.push(k.since, k.id);
  if (order.rank !== undefined) {
    void page.select({ queue_rank: order.rank });
    columns.push(order.rank);
    bound.push('?::int');
    if (k) values.push(k.rank!);
  }
  const newest = order.newestFirst === true && order.sandbox === null;
  void page.orderBy(columns.map((column) => ({ column, order: newest ? 'desc' : 'asc' })));
  if (k) page.whereRaw(`(${columns.map(() => '??').join(', ')}) ${newest ? '<' : '>'} (${bound.join(', ')})`, [...columns, ...values]);
  const rows = (await page) as (T & QueueKeyed)[];
  const more = rows.length > limit;
  if (more) rows.length = limit;
  const last = rows[rows.length - 1];
  return {
    rows,
    next:
      more && last
        ? encodeCursor({ sandbox: last.queue_sandbox, since: new Date(last.queue_since).toISOString(), id: last.queue_id, rank: order.rank === undefined ? null : Number(last.queue_rank) })
        : null,
  };
}
