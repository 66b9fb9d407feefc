/** SQL for escrows and their event log. Callers pass the transaction. */
import type { Knex } from 'knex';
import { nativeOf, prepared, preparedNative, preparedRaw, takeReadAhead, writeAtCommit, type Db, type NativeStatement, type ReadAhead } from '../db.js';
import { isUuid } from '../ids.js';
import { outboxInsertSql, type OutboxItem } from '../outbox.js';
import type { UserRow } from '../users/repo.js';
import type { Category, EscrowEventName, EscrowStatus } from './states.js';

export interface EscrowRow {
  id: string;
  buyer_id: string;
  seller_id: string;
  created_by: string;
  source: 'link' | 'direct';
  item_name: string;
  description: string;
  amount: number;
  category: Category;
  status: EscrowStatus;
  partner_ref: string | null;
  partner_sig_version: number | null;
  courier: string | null;
  tracking_number: string | null;
  expires_at: Date;
  auto_release_at: Date | null;
  extension_count: number;
  fee_amount: number | null;
  cancel_reason: string | null;
  paid_at: Date | null;
  sent_at: Date | null;
  received_at: Date | null;
  released_at: Date | null;
  disputed_at: Date | null;
  refunded_at: Date | null;
  cancelled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type NewEscrow = Pick<
  EscrowRow,
  'buyer_id' | 'seller_id' | 'created_by' | 'source' | 'item_name' | 'description' | 'amount' | 'category' | 'expires_at' | 'created_at' | 'updated_at'
> &
  Partial<Pick<EscrowRow, 'partner_ref' | 'partner_sig_version'>>;

/**
 * The statement that inserts the escrow, its first event and its outbox jobs (one round
 * trip): the event row takes the new escrow's id and creation time from the insert's
 * RETURNING; the jobs (which name the escrow) need `row.id` made by the caller. It answers
 * the new row, or (`answer: 'count'`, for a write held for COMMIT, whose result nobody
 * reads) only how many rows were inserted: 28 columns fewer to describe and parse.
 */
function creationStatement(
  trx: Db,
  row: NewEscrow & { id: string },
  first: Omit<EscrowEvent, 'escrowId' | 'at'>,
  jobs: readonly OutboxItem[],
  answer: 'row' | 'count',
): { sql: string; bindings: unknown[] } {
  const escrow = trx('escrows').insert(row).returning('*').toSQL();
  const outbox = outboxInsertSql(trx, jobs);
  return {
    sql: `WITH e AS (${escrow.sql}),
          ev AS (INSERT INTO escrow_events (escrow_id, event, actor_id, actor_role, data, created_at)
                 SELECT e.id, ?, ?, ?, ?::jsonb, e.created_at FROM e)${outbox ? `,
          ob AS (${outbox.sql})` : ''}
     SELECT ${answer === 'row' ? '*' : 'count(*)'} FROM e`,
    bindings: [...escrow.bindings, first.event, first.actorId, first.actorRole, JSON.stringify(first.data ?? {}), ...(outbox?.bindings ?? [])],
  };
}

/** Inserts the escrow with its first event and its outbox jobs (`creationStatement`) now; answers the row Postgres wrote. */
export async function insertWithEvent(trx: Db, row: NewEscrow & { id: string }, first: Omit<EscrowEvent, 'escrowId' | 'at'>, jobs: readonly OutboxItem[] = []): Promise<EscrowRow> {
  const statement = creationStatement(trx, row, first, jobs, 'row');
  const rows = await preparedRaw<EscrowRow>(trx as Knex, statement.sql, statement.bindings);
  const created = rows[0];
  if (!created) throw new Error('escrows insert returned no row');
  return created;
}

/**
 * The columns a new escrow takes from their defaults (migration 20261124000100): with the
 * values the creation writes, the whole row (`insertWithEventAtCommit`).
 */
const NEW_ESCROW_DEFAULTS = {
  status: 'pending_payment',
  partner_ref: null,
  partner_sig_version: null,
  courier: null,
  tracking_number: null,
  auto_release_at: null,
  extension_count: 0,
  fee_amount: null,
  cancel_reason: null,
  paid_at: null,
  sent_at: null,
  received_at: null,
  released_at: null,
  disputed_at: null,
  refunded_at: null,
  cancelled_at: null,
} as const satisfies Omit<EscrowRow, Exclude<keyof NewEscrow, 'partner_ref' | 'partner_sig_version'> | 'id'>;

/**
 * `insertWithEvent` held for the transaction's COMMIT (`writeAtCommit`: in a keyed
 * request's folded transaction it goes with the stored answer and the COMMIT, one round
 * trip fewer), for a creation whose statement can only fail as a fault: no constraint of
 * the row maps to an answer of its own (a direct creation has no partner ref; the link
 * creation, whose duplicate ref is a 409, uses `insertWithEvent`). A failure fails the
 * COMMIT: the request answers 5xx and nothing of it is written. Answers the row as
 * Postgres writes it: the values given and the columns' defaults (no BEFORE trigger
 * changes an escrow row); a test holds it equal to the row read back.
 */
export async function insertWithEventAtCommit(trx: Db, row: NewEscrow & { id: string }, first: Omit<EscrowEvent, 'escrowId' | 'at'>, jobs: readonly OutboxItem[] = []): Promise<EscrowRow> {
  const statement = creationStatement(trx, row, first, jobs, 'count');
  await writeAtCommit(trx, nativeOf(trx, statement.sql, statement.bindings));
  // Text as Postgres stores it: node-postgres sends a lone UTF-16 surrogate (valid in a
  // JSON body) as U+FFFD.
  return { ...NEW_ESCROW_DEFAULTS, ...row, item_name: row.item_name.toWellFormed(), description: row.description.toWellFormed() };
}

export async function findById(trx: Db, id: string, options: { lock?: boolean } = {}): Promise<EscrowRow | undefined> {
  // A named statement, prepared once per connection (shared/db.ts prepared; on the
  // transaction's connection inside one), no query building: every escrow read and move
  // starts here.
  // A keyed route sent this read with its key's statement (escrowReadAhead): taken once. A
  // locked read discards it (a later plain read must not see the row from before the lock).
  const ahead = takeReadAhead<EscrowRow>(trx, `escrow:${id}`);
  if (options.lock) return (await prepared<EscrowRow>('escrows_by_id_locked', 'SELECT * FROM escrows WHERE id = $1 FOR UPDATE', [id], trx))[0];
  if (ahead) return ahead[0];
  // (`SELECT *`: a migration adding a column makes each connection's next call fail once;
  // `prepared` then prepares it anew.)
  return (await prepared<EscrowRow>('escrows_by_id', 'SELECT * FROM escrows WHERE id = $1', [id], trx))[0];
}

// ---- Reads a keyed route sends with its key's statement (shared/db.ts ReadAhead) ------------
// Each is the statement its reader below would send, with its values bound; the reader
// takes the rows under the same key.

/** `findById(trx, id)` (unlocked) ahead of time; nothing for an id that is not a UUID (its route answers 404 before reading). */
export function escrowReadAhead(id: string): ReadAhead[] {
  return isUuid(id) ? [{ key: `escrow:${id}`, sql: 'SELECT * FROM escrows WHERE id = $1', bindings: [id] }] : [];
}

/** What a pay reads of the escrow it locks: its state, its deadline and what the link charges for. */
export type PayableEscrow = Pick<EscrowRow, 'id' | 'status' | 'expires_at' | 'amount' | 'item_name'>;

/**
 * The escrow locked for its buyer (a pay's first statement, sent with BEGIN): no row when
 * it does not exist or the caller is not its buyer, so nobody else ever takes its lock.
 * Only the columns a pay reads (`PayableEscrow`): the other 23 are not described or parsed.
 */
export function lockedForBuyerSql(id: string, buyerId: string): NativeStatement {
  return { sql: 'SELECT id, status, expires_at, amount, item_name FROM escrows WHERE id = $1 AND buyer_id = $2 FOR UPDATE', bindings: [id, buyerId] };
}

/** `setting(trx, key)` ahead of time. */
export function settingReadAhead(key: string): ReadAhead[] {
  return [{ key: `setting:${key}`, sql: 'SELECT value FROM settings WHERE key = $1', bindings: [key] }];
}

/** `userByUsername(trx, username)` ahead of time (the username already lowercased). */
export function counterpartyReadAhead(username: string): ReadAhead[] {
  return [{ key: `counterparty:${username}`, sql: 'SELECT id, status, role FROM users WHERE username = $1', bindings: [username] }];
}

export async function findByIds(trx: Db, ids: readonly string[], options: { lock?: boolean } = {}): Promise<EscrowRow[]> {
  if (ids.length === 0) return [];
  // Locked in id order, like every path that locks several rows.
  const q = trx('escrows').whereIn('id', [...ids]).orderBy('id');
  if (options.lock) void q.forUpdate();
  return (await q) as EscrowRow[];
}

/** Compare-and-set of several escrows with the same change; returns the rows that moved. */
export async function moveMany(trx: Db, ids: readonly string[], from: readonly EscrowStatus[], changes: Partial<EscrowRow>): Promise<EscrowRow[]> {
  if (ids.length === 0) return [];
  return (await trx('escrows').whereIn('id', [...ids]).whereIn('status', from).update(changes).returning('*')) as EscrowRow[];
}

/**
 * Compare-and-set (ARCHITECTURE rule 3): moves the escrow only if its status is still one
 * of `from` and every extra condition holds. Undefined when someone else moved it first.
 */
export async function move(
  trx: Db,
  id: string,
  from: readonly EscrowStatus[],
  changes: Partial<EscrowRow>,
  extra?: (q: Knex.QueryBuilder) => void,
): Promise<EscrowRow | undefined> {
  const q = trx('escrows').where({ id }).whereIn('status', from);
  if (extra) extra(q);
  // A named statement per shape (the columns a move sets): Postgres plans it once per connection.
  const [row] = await preparedNative<EscrowRow>(trx as Knex, q.update(changes).returning('*').toSQL().toNative());
  return row;
}

export interface ListFilter {
  userId: string;
  role?: 'buyer' | 'seller';
  status?: EscrowStatus;
  page: number;
  limit: number;
}

type Side = 'buyer_id' | 'seller_id';

/**
 * The list's one statement per sides asked (both, buyer, seller): the page and the total
 * together. Each side walks its own (party, created_at) index and stops after the page's
 * rows ($3 = page x limit); the two sides never overlap (a buyer is never the seller), so
 * UNION ALL is exact. The total rides on every row (and on one row of NULLs when the page
 * is empty). $2 is the status filter or NULL.
 */
function listSql(sides: readonly Side[]): string {
  const where = (c: Side) => `${c} = $1 AND ($2::text IS NULL OR status = $2::text)`;
  const page = (c: Side) => `(SELECT * FROM escrows WHERE ${where(c)} ORDER BY created_at DESC, id DESC LIMIT $3)`;
  const count = (c: Side) => `(SELECT count(*) FROM escrows WHERE ${where(c)})`;
  return `WITH page AS (SELECT * FROM (${sides.map(page).join(' UNION ALL ')}) mine ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5)
    SELECT page.*, t.total FROM (SELECT ${sides.map(count).join(' + ')} AS total) t LEFT JOIN page ON true
    ORDER BY page.created_at DESC, page.id DESC`;
}

const LIST_SIDES: Record<'both' | 'buyer' | 'seller', Side[]> = { both: ['buyer_id', 'seller_id'], buyer: ['buyer_id'], seller: ['seller_id'] };
const LIST_SQL = Object.fromEntries(Object.entries(LIST_SIDES).map(([k, sides]) => [k, listSql(sides)])) as Record<keyof typeof LIST_SIDES, string>;

/** A user's escrows, newest first, and their total: one prepared statement on the pool (never inside a transaction). */
export async function listForUser(knex: Knex, f: ListFilter): Promise<{ rows: EscrowRow[]; total: number }> {
  const which = f.role ?? 'both';
  const values = [f.userId, f.status ?? null, f.page * f.limit, f.limit, (f.page - 1) * f.limit];
  const found = await prepared<EscrowRow & { total: string }>(`escrows_list_${which}`, LIST_SQL[which], values, knex);
  const total = Number(found[0]?.total ?? 0);
  const rows = found.filter((r) => r.id !== null).map(({ total: _total, ...row }) => row);
  return { rows, total };
}

export interface EscrowEvent {
  escrowId: string;
  event: EscrowEventName;
  actorId: string | null;
  actorRole: 'buyer' | 'seller' | 'admin' | 'system';
  data?: Record<string, unknown>;
  at: Date;
}

/**
 * The escrow's event and, when given, the change's outbox jobs (its notices as
 * `noticeJobs` makes them, its timers) in one statement: the event INSERT as a
 * data-modifying CTE of the outbox INSERT (outbox rows in the order given).
 */
export async function recordEvent(trx: Db, e: EscrowEvent, jobs: readonly OutboxItem[] = []): Promise<void> {
  const outbox = outboxInsertSql(trx, jobs);
  if (!outbox) return await recordEvents(trx, [e]);
  // Nothing in the request reads these rows back, and they lock nothing: in a keyed
  // request they travel with its COMMIT (shared/db.ts writeAtCommit).
  await writeAtCommit(
    trx,
    trx
      .raw(
        `WITH ev AS (INSERT INTO escrow_events (escrow_id, event, actor_id, actor_role, data, created_at) VALUES (?, ?, ?, ?, ?::jsonb, ?))
     ${outbox.sql}`,
        [e.escrowId, e.event, e.actorId, e.actorRole, JSON.stringify(e.data ?? {}), e.at, ...(outbox.bindings as Knex.RawBinding[])],
      )
      .toSQL()
      .toNative(),
  );
}

export async function recordEvents(trx: Db, list: readonly EscrowEvent[]): Promise<void> {
  if (list.length === 0) return;
  await trx('escrow_events').insert(
    list.map((e) => ({
      escrow_id: e.escrowId,
      event: e.event,
      actor_id: e.actorId,
      actor_role: e.actorRole,
      data: JSON.stringify(e.data ?? {}),
      created_at: e.at,
    })),
  );
}

export async function events(trx: Db, escrowId: string): Promise<{ event: string; actor_role: string; data: unknown; created_at: Date }[]> {
  return (await trx('escrow_events').select('event', 'actor_role', 'data', 'created_at').where({ escrow_id: escrowId }).orderBy('id')) as {
    event: string;
    actor_role: string;
    data: unknown;
    created_at: Date;
  }[];
}

/** Escrows whose timer is due (the sweeper's scans, using the partial indexes). */
export async function dueAutoReleases(trx: Db, now: Date, limit: number): Promise<string[]> {
  const rows = (await trx('escrows').select('id').whereIn('status', ['sent', 'received']).where('auto_release_at', '<=', now).orderBy('auto_release_at').limit(limit)) as { id: string }[];
  return rows.map((r) => r.id);
}

export async function dueExpiries(trx: Db, now: Date, limit: number): Promise<string[]> {
  const rows = (await trx('escrows').select('id').where({ status: 'pending_payment' }).where('expires_at', '<=', now).orderBy('expires_at').limit(limit)) as { id: string }[];
  return rows.map((r) => r.id);
}

/** Locks the escrow row for the rest of the transaction (cancel and pay serialise on it). */
export async function lockRow(trx: Db, id: string): Promise<void> {
  await trx('escrows').select('id').where({ id }).forUpdate();
}

/**
 * A payment that may still complete: a gateway link not yet expired, or a manual transfer
 * claimed and awaiting staff (an unclaimed manual transfer does not count, nor a claim made
 * late, which staff credit or return and which never pays the escrow). `until` is when it
 * stops counting (claims: an hour from now, re-checked then).
 */
export async function livePayment(trx: Db, escrowId: string, now: Date): Promise<{ until: Date } | undefined> {
  const row = (await trx('payments')
    .select('status', 'expires_at')
    .where({ escrow_id: escrowId })
    .where(
      (w) =>
        void w
          .where((c) => void c.where('status', 'awaiting_confirmation').whereRaw("flag IS DISTINCT FROM 'late_claim'"))
          .orWhere((p) => void p.where('status', 'pending').where('is_manual', false).where('expires_at', '>', now)),
    )
    .orderBy('expires_at', 'desc')
    .first()) as { status: string; expires_at: Date | null } | undefined;
  if (!row) return undefined;
  if (row.status === 'awaiting_confirmation' || !row.expires_at) return { until: new Date(now.getTime() + 3600_000) };
  return { until: row.expires_at };
}

/** A settings value (escrow_fee, escrow_timers), or undefined when it is not set. */
export async function setting(trx: Db, key: string): Promise<unknown> {
  const [row] = takeReadAhead<{ value: unknown }>(trx, `setting:${key}`) ?? (await prepared<{ value: unknown }>('settings_value', 'SELECT value FROM settings WHERE key = $1', [key], trx));
  return row?.value;
}

/**
 * The counterparty of a direct escrow, by username (already lowercased): the columns the
 * creation checks, by a named statement on the transaction's connection when given one
 * (shared/db.ts prepared; the columns named, so a migration adding one changes nothing).
 */
export async function userByUsername(trx: Db, username: string): Promise<Pick<UserRow, 'id' | 'status' | 'role'> | undefined> {
  const ahead = takeReadAhead<Pick<UserRow, 'id' | 'status' | 'role'>>(trx, `counterparty:${username}`);
  if (ahead) return ahead[0];
  return (await prepared<Pick<UserRow, 'id' | 'status' | 'role'>>('users_by_username_party', 'SELECT id, status, role FROM users WHERE username = $1', [username], trx))[0];
}

// ---- The sellers' link-signing secrets (decision D3) -------------------------------------

export async function saveLinkSecret(trx: Db, row: { user_id: string; secret_sealed: string; preview: string; created_at: Date }): Promise<void> {
  await trx('link_secrets').insert(row).onConflict('user_id').merge();
}

export async function linkSecretRow(trx: Db, userId: string): Promise<{ secret_sealed: string; preview: string; created_at: Date } | undefined> {
  return (await trx('link_secrets').select('secret_sealed', 'preview', 'created_at').where({ user_id: userId }).first()) as
    | { secret_sealed: string; preview: string; created_at: Date }
    | undefined;
}
