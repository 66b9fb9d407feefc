/**
 * What every floor module shares (floor-escrows.ts, floor-release.ts, floor-pay.ts,
 * floor-fund.ts): the caller, the error envelope, the id checks, the escrow record and its
 * answer, the idempotency hashing and the request body. Copied from the service on purpose
 * (a floor imports nothing of it: shared/ids.ts, shared/escrows/serialize.ts,
 * shared/idempotency.ts, koa-body's limit), once for all the floors.
 */
import { createHash } from 'node:crypto';
import type Koa from 'koa';
import type pg from 'pg';

/** The caller, as floor-server.ts authenticated it. */
export interface FloorCaller {
  id: string;
  role: string;
}

/** Answers the error envelope of the API; returns undefined, so `return fail(...)` ends any handler. */
export function fail(ctx: Koa.Context, status: number, code: string, message: string): undefined {
  ctx.status = status;
  ctx.body = { success: false, error: { code, message } };
  return undefined;
}

/** A stored keyed answer sent again, as the API replays it (api/middleware/idempotency.ts). */
export function replayStored(ctx: Koa.Context, status: number | null, body: string | null): void {
  ctx.status = status ?? 200;
  ctx.type = 'application/json';
  ctx.body = body ?? 'null';
  ctx.set('Idempotent-Replay', 'true');
}

// shared/ids.ts
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** shared/idempotency.ts IDEMPOTENCY_TTL_MS. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;

export const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** An `escrows` row as `SELECT *` answers it. */
export interface EscrowRecord {
  id: string;
  buyer_id: string;
  seller_id: string;
  created_by: string;
  source: string;
  item_name: string;
  description: string;
  amount: number;
  category: string;
  status: string;
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

/** The field list of shared/escrows/serialize.ts `serializeEscrow`, inline. */
export function serializeEscrow(e: EscrowRecord, publicBaseUrl: string) {
  if (e.courier || e.tracking_number) throw new Error('floor: escrows with tracking are not serialised here (the bench has none)');
  return {
    id: e.id,
    buyer_id: e.buyer_id,
    seller_id: e.seller_id,
    item_name: e.item_name,
    amount: String(e.amount),
    description: e.description,
    category: e.category,
    status: e.status,
    partner_ref: e.partner_ref,
    partner_sig_version: e.partner_sig_version,
    source: e.source,
    created_at: e.created_at.toISOString(),
    updated_at: e.updated_at.toISOString(),
    escrow_url: `${publicBaseUrl}/pay/${e.id}`,
    expires_at: e.expires_at.toISOString(),
    paid_at: iso(e.paid_at),
    sent_at: iso(e.sent_at),
    received_at: iso(e.received_at),
    released_at: iso(e.released_at),
    disputed_at: iso(e.disputed_at),
    refunded_at: iso(e.refunded_at),
    cancelled_at: iso(e.cancelled_at),
    cancel_reason: e.cancel_reason,
    auto_release_at: iso(e.auto_release_at),
    extension_count: e.extension_count,
    platform_fee: e.fee_amount,
    seller_amount: e.fee_amount === null ? null : e.amount - e.fee_amount,
  };
}

/** shared/idempotency.ts canonicalJson: object keys sorted, so equal bodies hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

/** koa-body's limit. */
const BODY_LIMIT = 1024 * 1024;

/** The request body as text; undefined beyond koa-body's limit (1 MiB). */
export async function rawBody(ctx: Koa.Context): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `text` parsed as JSON; `{}` for an empty body when `emptyIsObject` (koa-body's reading); undefined when not JSON. */
export function parseJson(text: string | undefined, emptyIsObject = false): unknown {
  if (text === undefined) return undefined;
  if (emptyIsObject && text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

// ---- BEGIN with the first statement, COMMIT with the last (node-postgres pipelining, decision 0025) ----
// The floor server's pool is in pipeline mode (`pipeline: true`, pg 8.23): a query is written
// without waiting for the answer to the one before, so two statements given together travel
// in one round trip, each with its values bound, as the API's keyed transactions send them.

/** Both answers of two pipelined statements, or the first failure (the later one fails with it). */
async function both<A, B>(first: Promise<A>, second: Promise<B>): Promise<[A, B]> {
  const [a, b] = await Promise.allSettled([first, second]);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return [a.value, b.value];
}

/**
 * Opens a transaction with its first statement in one round trip: BEGIN at READ COMMITTED
 * and the statement (named, values bound) pipelined. The caller has marked the transaction
 * open before calling, so a failure is rolled back; answers the statement's rows.
 */
export async function beginWith<R extends pg.QueryResultRow>(client: pg.PoolClient, statement: { name?: string; text: string; values: readonly unknown[] }): Promise<R[]> {
  const [, result] = await both(client.query('BEGIN ISOLATION LEVEL READ COMMITTED'), client.query<R>({ ...statement, values: [...statement.values] }));
  return result.rows;
}

/**
 * Sends a transaction's last statement with its COMMIT in one round trip (pipelined, the
 * statement named and its values bound), as the API sends a write it holds for the COMMIT
 * (shared/db.ts writeAtCommit). For a statement whose rows the caller does not need: it
 * fails (and COMMIT then only ends the aborted transaction), or the transaction commits with it.
 */
export async function commitWith(client: pg.PoolClient, statement: { name: string; text: string; values: readonly unknown[] }): Promise<void> {
  await both(client.query({ ...statement, values: [...statement.values] }), client.query('COMMIT'));
}
