/** SQL for withdrawals and fee vouchers. Callers pass the transaction. */
import type { Knex } from 'knex';
import type { Db } from '../db.js';
import { queuePage, type QueueCursor, type QueuePage, type StaffSearch } from '../staff/queue.js';
import type { VoucherOffer } from './fees.js';
import type { RiskFacts } from './risk.js';
import type { WithdrawalMethod, WithdrawalStatus } from './states.js';

export interface WithdrawalRow {
  id: string;
  user_id: string;
  amount: number;
  fee_base: number;
  loyalty_discount: number;
  voucher_discount: number;
  voucher_redemption_id: string | null;
  fee_amount: number;
  net_amount: number;
  method: WithdrawalMethod;
  destination_details: Record<string, string>;
  destination_key: string;
  destination_ack: boolean;
  status: WithdrawalStatus;
  risk_action: 'allow' | 'review';
  risk_flags: string[];
  admin_note: string | null;
  processed_by: string | null;
  processed_at: Date | null;
  approved_by: string | null;
  approved_at: Date | null;
  payout_lease_until: Date | null;
  payout_attempts: number;
  payout_reference: string | null;
  payout_error: string | null;
  paid_at: Date | null;
  rejected_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type NewWithdrawal = Pick<
  WithdrawalRow,
  | 'user_id'
  | 'amount'
  | 'fee_base'
  | 'loyalty_discount'
  | 'voucher_discount'
  | 'voucher_redemption_id'
  | 'fee_amount'
  | 'net_amount'
  | 'method'
  | 'destination_details'
  | 'destination_key'
  | 'destination_ack'
  | 'risk_action'
  | 'risk_flags'
  | 'created_at'
  | 'updated_at'
> & { id?: string };

export async function insert(trx: Db, row: NewWithdrawal): Promise<WithdrawalRow> {
  const [created] = (await trx('withdrawals')
    .insert({ ...row, destination_details: JSON.stringify(row.destination_details), risk_flags: JSON.stringify(row.risk_flags) })
    .returning('*')) as WithdrawalRow[];
  if (!created) throw new Error('withdrawals insert returned no row');
  return created;
}

export async function findById(trx: Db, id: string): Promise<WithdrawalRow | undefined> {
  return (await trx('withdrawals').where({ id }).first()) as WithdrawalRow | undefined;
}

export async function findForUpdate(trx: Db, id: string): Promise<WithdrawalRow | undefined> {
  return (await trx('withdrawals').where({ id }).forUpdate().first()) as WithdrawalRow | undefined;
}

/**
 * Compare-and-set (ARCHITECTURE rule 3): moves the withdrawal only if its status is still
 * one of `from` and every extra condition holds. Undefined when someone else moved it first.
 */
export async function move(
  trx: Db,
  id: string,
  from: readonly WithdrawalStatus[],
  changes: Partial<WithdrawalRow>,
  extra?: (q: Knex.QueryBuilder) => void,
): Promise<WithdrawalRow | undefined> {
  const q = trx('withdrawals').where({ id }).whereIn('status', from);
  if (extra) extra(q);
  const [row] = (await q.update(changes).returning('*')) as WithdrawalRow[];
  return row;
}

/** Processing withdrawals whose payout claim ran out before `now`, longest stuck first. */
export async function stuckProcessing(trx: Db, now: Date, limit: number): Promise<Pick<WithdrawalRow, 'id' | 'payout_attempts'>[]> {
  return trx('withdrawals')
    .where({ status: 'processing' })
    .where('payout_lease_until', '<=', now)
    .orderBy('payout_lease_until')
    .limit(limit)
    .select<Pick<WithdrawalRow, 'id' | 'payout_attempts'>[]>('id', 'payout_attempts');
}

export interface ListFilter {
  userId?: string;
  status?: WithdrawalStatus;
  page: number;
  limit: number;
  /** Oldest first (the staff queue) instead of newest first. */
  oldestFirst?: boolean;
}

export async function list(trx: Db, f: ListFilter): Promise<{ rows: WithdrawalRow[]; total: number }> {
  const base = () => {
    const q = trx('withdrawals');
    if (f.userId) void q.where({ user_id: f.userId });
    if (f.status) void q.where({ status: f.status });
    return q;
  };
  const order = f.oldestFirst ? 'asc' : 'desc';
  const [rows, count] = await Promise.all([
    base()
      .select('*')
      .orderBy([
        { column: 'created_at', order },
        { column: 'id', order },
      ])
      .limit(f.limit)
      .offset((f.page - 1) * f.limit),
    base().count<{ count: string }[]>('* as count'),
  ]);
  return { rows: rows as WithdrawalRow[], total: Number(count[0]?.count ?? 0) };
}

/** What staff narrow the withdrawal queue by (issue 46): a search term, how long a request has waited. */
export type QueuedWithdrawal = WithdrawalRow & { requester_username: string; requester_email: string; requester_full_name: string };

/** `q`: the withdrawal's or requester's id exactly, or part of the requester's e-mail, username or name; `before`: requested then or earlier. */
const SEARCHED = { ids: ['w.id', 'u.id'], text: ['u.email', 'u.username', 'u.full_name'] } as const;

/** One page of the pending withdrawals with their requester, the longest waiting first (keyset pages, shared/staff/queue.ts). */
export async function staffQueue(trx: Db, f: StaffSearch, page: QueueCursor): Promise<QueuePage<QueuedWithdrawal>> {
  const q = trx('withdrawals as w')
    .join('users as u', 'u.id', 'w.user_id')
    .where('w.status', 'pending')
    .select('w.*', { requester_username: 'u.username', requester_email: 'u.email', requester_full_name: 'u.full_name' });
  return queuePage<QueuedWithdrawal>(q, { sandbox: null, since: 'w.created_at', id: 'w.id' }, page, { by: f, columns: SEARCHED });
}

export async function recentForUser(trx: Db, userId: string, limit: number): Promise<WithdrawalRow[]> {
  return (await trx('withdrawals')
    .where({ user_id: userId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit)) as WithdrawalRow[];
}

/** The staff queue's requesters, by id. */
export async function requesters(trx: Db, ids: readonly string[]): Promise<{ id: string; username: string; email: string; full_name: string }[]> {
  if (ids.length === 0) return [];
  return trx('users').whereIn('id', [...ids]).select<{ id: string; username: string; email: string; full_name: string }[]>('id', 'username', 'email', 'full_name');
}

/** Escrows released to the user as seller. */
export async function releasedAsSeller(trx: Db, userId: string): Promise<number> {
  const [row] = (await trx('escrows').where({ seller_id: userId, status: 'released' }).count<{ n: string }[]>('* as n')) as { n: string }[];
  return Number(row?.n ?? 0);
}

export async function paidCount(trx: Db, userId: string): Promise<number> {
  const [row] = (await trx('withdrawals').where({ user_id: userId, status: 'paid' }).count<{ n: string }[]>('* as n')) as { n: string }[];
  return Number(row?.n ?? 0);
}

/** A settings value (withdraw_fee, withdraw_limits), or undefined when it is not set. */
export async function setting(trx: Db, key: string): Promise<unknown> {
  const row = (await trx('settings').select('value').where({ key }).first()) as { value: unknown } | undefined;
  return row?.value;
}

// ---- Risk facts (risk.ts decides on them) ---------------------------------------------------

/** Two accounts using one destination at once see each other: a transaction advisory lock on it. */
export async function lockDestination(trx: Db, destinationKey: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`withdrawal-destination:${destinationKey}`]);
}

/** What the risk checks decide on: the user's own history, and other accounts using the destination. */
export async function riskFacts(trx: Db, userId: string, destinationKey: string, since: Date): Promise<RiskFacts> {
  const own = trx('withdrawals').where({ user_id: userId });
  const [counts] = await own
    .clone()
    .select<{ earlier: number; recent: number; largest_paid: number; paid_to_destination: number }[]>(
      trx.raw('count(*)::int AS earlier'),
      trx.raw('count(*) FILTER (WHERE created_at > ?)::int AS recent', [since]),
      trx.raw("COALESCE(max(amount) FILTER (WHERE status = 'paid'), 0)::bigint AS largest_paid"),
      trx.raw("count(*) FILTER (WHERE status = 'paid' AND destination_key = ?)::int AS paid_to_destination", [destinationKey]),
    );
  const lastPaid = await own
    .clone()
    .where({ status: 'paid' })
    .orderBy([
      { column: 'paid_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .first<{ destination_key: string } | undefined>('destination_key');
  const [shared] = await trx('withdrawals')
    .where({ destination_key: destinationKey })
    .whereNot({ user_id: userId })
    .select<{ n: number }[]>(trx.raw('count(DISTINCT user_id)::int AS n'));
  return {
    earlierCount: counts?.earlier ?? 0,
    recentCount: counts?.recent ?? 0,
    largestPaid: counts?.largest_paid ?? 0,
    paidToDestination: counts?.paid_to_destination ?? 0,
    lastPaidDestination: lastPaid?.destination_key ?? null,
    otherAccounts: shared?.n ?? 0,
  };
}

// ---- Vouchers -----------------------------------------------------------------------------

export interface VoucherRow {
  id: string;
  code: string;
  percent_off: number | null;
  amount_off: number | null;
  max_discount_amount: number | null;
  expires_at: Date | null;
  created_at: Date;
}

export interface RedemptionView extends VoucherRow {
  redemption_id: string;
  granted_at: Date;
}

/** The user's unused, unexpired vouchers, earliest expiry first (no expiry last). */
export async function availableVouchers(trx: Db, userId: string, now: Date): Promise<RedemptionView[]> {
  return trx('withdrawal_fee_voucher_redemptions as r')
    .join('withdrawal_fee_vouchers as v', 'v.id', 'r.voucher_id')
    .where('r.user_id', userId)
    .where('r.status', 'available')
    .where((w) => void w.whereNull('v.expires_at').orWhere('v.expires_at', '>', now))
    .select<RedemptionView[]>(
      'r.id as redemption_id',
      'r.created_at as granted_at',
      'v.id',
      'v.code',
      'v.percent_off',
      'v.amount_off',
      'v.max_discount_amount',
      'v.expires_at',
      'v.created_at',
    )
    .orderByRaw('v.expires_at ASC NULLS LAST, r.created_at ASC, r.id ASC');
}

export function toOffer(r: RedemptionView): VoucherOffer {
  return {
    redemptionId: r.redemption_id,
    percentOff: r.percent_off,
    amountOff: r.amount_off,
    maxDiscountAmount: r.max_discount_amount,
    expiresAt: r.expires_at,
    grantedAt: r.granted_at,
  };
}

/**
 * Compare-and-set: marks the user's redemption used by the withdrawal if it is still
 * available and unexpired. False when another request used it first (or it expired).
 */
export async function consumeVoucher(trx: Db, redemptionId: string, userId: string, withdrawalId: string, now: Date): Promise<boolean> {
  const unexpired = trx('withdrawal_fee_vouchers')
    .select('id')
    .where((w) => void w.whereNull('expires_at').orWhere('expires_at', '>', now));
  const n = await trx('withdrawal_fee_voucher_redemptions')
    .where({ id: redemptionId, user_id: userId, status: 'available' })
    .whereIn('voucher_id', unexpired)
    .update({ status: 'used', withdrawal_id: withdrawalId, used_at: now });
  return n === 1;
}

/** Gives a rejected withdrawal's voucher back (only if this withdrawal holds it). */
export async function restoreVoucher(trx: Db, redemptionId: string, withdrawalId: string): Promise<boolean> {
  const n = await trx('withdrawal_fee_voucher_redemptions')
    .where({ id: redemptionId, withdrawal_id: withdrawalId, status: 'used' })
    .update({ status: 'available', withdrawal_id: null, used_at: null });
  return n === 1;
}

export async function voucherOfRedemption(trx: Db, redemptionId: string): Promise<VoucherRow | undefined> {
  return (await trx('withdrawal_fee_voucher_redemptions as r')
    .join('withdrawal_fee_vouchers as v', 'v.id', 'r.voucher_id')
    .where('r.id', redemptionId)
    .select('v.*')
    .first()) as VoucherRow | undefined;
}
