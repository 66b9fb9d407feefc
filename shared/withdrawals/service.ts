/**
 * Withdrawals (consumer spec 2, 3 and 4.4; decisions D1, D2, D10; decision 0008).
 *
 * Money: the amount leaves the balance when the withdrawal is written, in the same
 * transaction (ledger: user -amount, payouts in flight +amount). Paying it out moves
 * payouts in flight -amount to payouts sent +net and platform fees +fee; rejecting it
 * gives the amount back to the balance and restores a used voucher. Each posting has a
 * per-withdrawal posting key, and every move is a compare-and-set from states.ts.
 *
 * Services join the caller's transaction (the idempotent request's) or open one.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { db, inTransaction, type Db } from '../db.js';
import { AppError } from '../errors.js';
import { isUuid } from '../ids.js';
import { logger } from '../logger.js';
import { notify } from '../notifications/service.js';
import { post, type PostingLine } from '../ledger/index.js';
import { enqueue } from '../outbox.js';
import { getQueue } from '../queues.js';
import { recordStaffAction } from '../staff/audit.js';
import * as users from '../users/repo.js';
import {
  LOYALTY_MIN_PAID_WITHDRAWALS,
  LOYALTY_MIN_RELEASED_ESCROWS,
  loadWithdrawFeeRule,
  loadWithdrawLimits,
  quoteFee,
  type WithdrawLimits,
} from './fees.js';
import { payoutAdapter, type PayoutAdapter } from './payout-adapter.js';
import * as repo from './repo.js';
import type { WithdrawalRow } from './repo.js';
import { checkRisk, type RiskResult } from './risk.js';
import { DESTINATION_FIELDS, METHODS, TRANSITIONS, type TransitionName, type WithdrawalMethod, type WithdrawalStatus } from './states.js';

export type { WithdrawalRow } from './repo.js';

/**
 * How long a payout worker owns a claimed withdrawal before another run may take it over
 * (PAYOUT_LEASE_MS, 15 s by default). The run renews it every third of that while the
 * provider call is in flight, so only a dead run's claim runs out.
 */
export const PAYOUT_LEASE_MS = config.payoutLeaseMs;

/** How often the stuck-payout sweeper looks for processing withdrawals whose claim ran out. */
export const PAYOUT_SWEEP_MS = 10_000;

const notFound = () => AppError.legacy(404, 'NOT_FOUND', 'Withdrawal not found');

function invalidState(status: WithdrawalStatus, name: TransitionName): AppError {
  const from = TRANSITIONS[name].from;
  return AppError.legacy(409, 'INVALID_STATE', `The withdrawal is ${status}; this needs ${from.join(' or ')}`, { status });
}

/** Staff may not mark paid a withdrawal a payout worker is sending (its claim has not run out). */
function sending(w: WithdrawalRow): AppError {
  return AppError.legacy(409, 'INVALID_STATE', 'The withdrawal is processing: the payout worker is sending it; wait for the outcome', { status: w.status });
}

/**
 * The compare-and-set of a named transition; a lost race answers INVALID_STATE naming the
 * state it found. `extra` adds conditions to the UPDATE (checked in the same statement).
 */
async function transition(
  trx: Db,
  w: WithdrawalRow,
  name: TransitionName,
  changes: Partial<WithdrawalRow>,
  extra?: { where: (q: Knex.QueryBuilder) => void; refused: (found: WithdrawalRow) => AppError | null },
): Promise<WithdrawalRow> {
  const t = TRANSITIONS[name];
  if (!(t.from as readonly WithdrawalStatus[]).includes(w.status)) throw invalidState(w.status, name);
  const moved = await repo.move(trx, w.id, t.from, { ...changes, status: t.to, updated_at: changes.updated_at ?? clock.now() }, extra?.where);
  if (moved) return moved;
  const now = await repo.findById(trx, w.id);
  if (now && extra && (t.from as readonly WithdrawalStatus[]).includes(now.status)) throw extra.refused(now) ?? invalidState(now.status, name);
  throw invalidState(now?.status ?? w.status, name);
}

// ---- Input checks ---------------------------------------------------------------------------

const invalidAmount = (limits: WithdrawLimits, why: string) =>
  AppError.legacy(400, 'INVALID_AMOUNT', `${why}: amount must be a whole number of rupiah from ${limits.minIdr} to ${limits.maxIdr}, a multiple of ${limits.stepIdr} unless it is your whole balance`, {
    min: limits.minIdr,
    max: limits.maxIdr,
    step: limits.stepIdr,
  });

/** A whole number of rupiah within the limits (a digit string is read as the number it spells). */
export function parseAmount(value: unknown, limits: WithdrawLimits): number {
  const n = typeof value === 'string' && /^[0-9]{1,15}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) throw invalidAmount(limits, 'Not a whole positive number');
  if (n < limits.minIdr) throw invalidAmount(limits, 'Below the minimum');
  if (n > limits.maxIdr) throw invalidAmount(limits, 'Above the maximum');
  return n;
}

export function parseMethod(value: unknown): WithdrawalMethod {
  if (typeof value !== 'string' || !(METHODS as readonly string[]).includes(value)) {
    throw AppError.legacy(400, 'INVALID_METHOD', `method must be one of ${METHODS.join(', ')}`);
  }
  return value as WithdrawalMethod;
}

export interface Destination {
  /** What is stored and sent to the payout provider (normalised). */
  details: Record<string, string>;
  /** sha256 of the method and the normalised destination. */
  key: string;
}

type FieldCheck = (raw: string) => string | null;

const text = (max: number): FieldCheck => (raw) => {
  const v = raw.trim().replace(/\s+/g, ' ');
  return v.length >= 1 && v.length <= max ? v : null;
};

const CHECKS: Record<string, { check: FieldCheck; hint: string }> = {
  bank_name: { check: text(100), hint: '1 to 100 characters' },
  account_holder: { check: text(100), hint: '1 to 100 characters' },
  account_number: {
    check: (raw) => {
      const v = raw.replace(/[\s.-]/g, '');
      return /^[0-9]{5,30}$/.test(v) ? v : null;
    },
    hint: '5 to 30 digits',
  },
  phone: {
    // Indonesian mobile numbers: 08..., 628... or +628..., stored as +628...
    check: (raw) => {
      const v = raw.replace(/[\s().-]/g, '');
      const m = /^(?:\+?62|0)(8[0-9]{7,12})$/.exec(v);
      return m ? `+62${m[1]}` : null;
    },
    hint: 'an Indonesian mobile number such as 081234567890',
  },
  network: {
    check: (raw) => {
      const v = raw.trim();
      return /^[A-Za-z0-9_-]{2,32}$/.test(v) ? v : null;
    },
    hint: '2 to 32 letters, digits, _ or -',
  },
  wallet_address: {
    check: (raw) => {
      const v = raw.trim();
      return /^[A-Za-z0-9:_-]{16,128}$/.test(v) ? v : null;
    },
    hint: '16 to 128 letters or digits',
  },
};

/** The destination fields of the method, checked and normalised; MISSING_DESTINATION names what is wrong. */
export function parseDestination(method: WithdrawalMethod, raw: unknown): Destination {
  const needed = DESTINATION_FIELDS[method];
  const given = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const details: Record<string, string> = {};
  const wrong: string[] = [];
  for (const field of needed) {
    const value = Object.prototype.hasOwnProperty.call(given, field) ? given[field] : undefined;
    const normalised = typeof value === 'string' ? CHECKS[field]!.check(value) : null;
    if (normalised === null) wrong.push(field);
    else details[field] = normalised;
  }
  if (wrong.length > 0) {
    const hints = wrong.map((f) => `${f} (${CHECKS[f]!.hint})`).join(', ');
    throw AppError.legacy(400, 'MISSING_DESTINATION', `destination_details for ${method} needs ${hints}`, { fields: wrong });
  }
  const identity =
    method === 'bank_transfer'
      ? `${details.bank_name!.toLowerCase()}|${details.account_number}`
      : method === 'crypto'
        ? `${details.network!.toLowerCase()}|${/^0x[0-9a-f]+$/i.test(details.wallet_address!) ? details.wallet_address!.toLowerCase() : details.wallet_address}`
        : details.phone!;
  return { details, key: createHash('sha256').update(`${method}|${identity}`).digest('hex') };
}

// ---- Loyalty and configuration --------------------------------------------------------------

/** Loyal (decision 0008): enough escrows released to the user as seller, or enough paid withdrawals. */
export async function isLoyal(trx: Db, userId: string): Promise<boolean> {
  const [escrows] = (await trx('escrows').where({ seller_id: userId, status: 'released' }).count<{ n: string }[]>('* as n')) as { n: string }[];
  if (Number(escrows?.n ?? 0) >= LOYALTY_MIN_RELEASED_ESCROWS) return true;
  const [paid] = (await trx('withdrawals').where({ user_id: userId, status: 'paid' }).count<{ n: string }[]>('* as n')) as { n: string }[];
  return Number(paid?.n ?? 0) >= LOYALTY_MIN_PAID_WITHDRAWALS;
}

/** GET /v1/withdrawals/config: limits and fee from settings (or the fallbacks), the caller's vouchers. */
export async function configFor(userId: string) {
  const [limits, fee, vouchers, loyal] = await Promise.all([
    loadWithdrawLimits(db),
    loadWithdrawFeeRule(db),
    repo.availableVouchers(db, userId, clock.now()),
    isLoyal(db, userId),
  ]);
  return { limits, fee, vouchers, loyal };
}

// ---- Request --------------------------------------------------------------------------------

export interface RequestInput {
  amount?: unknown;
  method?: unknown;
  destination_details?: unknown;
  destination_ack?: boolean;
}

/**
 * POST /v1/withdrawals. Checks in this order: USER_NOT_FOUND, EMAIL_NOT_VERIFIED,
 * INVALID_AMOUNT (shape and limits), INVALID_METHOD, MISSING_DESTINATION, INVALID_AMOUNT
 * (step, unless the whole balance), INSUFFICIENT_BALANCE, FEE_EXCEEDS_AMOUNT, RISK_BLOCKED.
 * The user's row is locked for the whole transaction: two withdrawals of one balance run
 * one after the other, and the second sees what the first took.
 */
export async function requestWithdrawal(trxOrDb: Db | undefined, userId: string, input: RequestInput): Promise<WithdrawalRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const user = isUuid(userId) ? await users.findByIdForUpdate(trx, userId) : undefined;
    if (!user) throw AppError.legacy(404, 'USER_NOT_FOUND', 'User not found');
    if (user.email_verified_at === null) {
      throw AppError.legacy(403, 'EMAIL_NOT_VERIFIED', 'Verify your e-mail address before withdrawing (POST /v1/auth/verify-email)');
    }
    const [limits, rule] = await Promise.all([loadWithdrawLimits(trx), loadWithdrawFeeRule(trx)]);
    const amount = parseAmount(input.amount, limits);
    const method = parseMethod(input.method);
    const destination = parseDestination(method, input.destination_details);
    const wholeBalance = amount === user.balance;
    if (!wholeBalance && amount % limits.stepIdr !== 0) throw invalidAmount(limits, `Not a multiple of ${limits.stepIdr}`);
    if (amount > user.balance) {
      throw AppError.legacy(400, 'INSUFFICIENT_BALANCE', `Saldo tidak mencukupi: your balance is ${user.balance}`, { balance: user.balance });
    }
    const now = clock.now();
    const vouchers = await repo.availableVouchers(trx, user.id, now);
    const quote = quoteFee(amount, rule, { loyal: await isLoyal(trx, user.id), vouchers: vouchers.map(repo.toOffer) });
    if (quote.fee >= amount) {
      throw AppError.legacy(400, 'FEE_EXCEEDS_AMOUNT', `The fee (${quote.fee}) takes the whole amount; withdraw more`, { fee: quote.fee });
    }
    const risk: RiskResult = await checkRisk(trx, { userId: user.id, amount, destinationKey: destination.key, now });
    if (risk.action === 'block') {
      logger.warn({ user_id: user.id, flags: risk.flags }, 'withdrawal refused by the risk checks');
      throw AppError.legacy(403, 'RISK_BLOCKED', 'This withdrawal cannot be made; contact support', { risk: { action: 'block', flags: risk.flags } });
    }
    const id = randomUUID();
    const w = await repo.insert(trx, {
      id,
      user_id: user.id,
      amount,
      fee_base: quote.base,
      loyalty_discount: quote.loyaltyDiscount,
      voucher_discount: quote.voucherDiscount,
      voucher_redemption_id: quote.voucherRedemptionId,
      fee_amount: quote.fee,
      net_amount: quote.net,
      method,
      destination_details: destination.details,
      destination_key: destination.key,
      destination_ack: input.destination_ack === true,
      risk_action: risk.action,
      risk_flags: risk.flags,
      created_at: now,
      updated_at: now,
    });
    if (quote.voucherRedemptionId && !(await repo.consumeVoucher(trx, quote.voucherRedemptionId, user.id, id, now))) {
      // Not reachable while the user's row is locked; kept so a voucher can never be spent twice.
      throw AppError.legacy(409, 'CONCURRENT_MODIFICATION', 'The fee voucher was used by another request; retry');
    }
    await post(trx, {
      kind: 'withdrawal',
      refType: 'withdrawal',
      refId: id,
      postingKey: `withdrawal:${id}`,
      lines: [
        { account: { userId: user.id }, amount: -amount },
        { account: { system: 'payoutsInFlight' }, amount },
      ],
    });
    return w;
  });
}

// ---- Reads ----------------------------------------------------------------------------------

export async function listForUser(userId: string, filter: Omit<repo.ListFilter, 'userId' | 'oldestFirst'>) {
  return repo.list(db, { ...filter, userId });
}

export interface StaffListed {
  row: WithdrawalRow;
  user: { username: string; email: string; full_name: string } | undefined;
}

/** Staff queue: oldest first, with the requester. */
export async function listForStaff(filter: Omit<repo.ListFilter, 'userId' | 'oldestFirst'>): Promise<{ rows: StaffListed[]; total: number }> {
  const { rows, total } = await repo.list(db, { ...filter, oldestFirst: true });
  const ids = [...new Set(rows.map((r) => r.user_id))];
  const people = ids.length
    ? await db('users').whereIn('id', ids).select<{ id: string; username: string; email: string; full_name: string }[]>('id', 'username', 'email', 'full_name')
    : [];
  const byId = new Map(people.map((p) => [p.id, p]));
  return { rows: rows.map((row) => ({ row, user: byId.get(row.user_id) })), total };
}

// ---- Staff moves (D10) ---------------------------------------------------------------------

export interface StaffActor {
  actorId: string;
  ip?: string;
}

async function load(trx: Db, id: string): Promise<WithdrawalRow> {
  const w = isUuid(id) ? await repo.findById(trx, id) : undefined;
  if (!w) throw notFound();
  return w;
}

const noteOf = (note: string | null | undefined) => (note && note.trim() !== '' ? note : null);

/**
 * Staff: pending -> approved, and the payout job queued through the outbox. A withdrawal
 * the risk checks held for review needs a note saying why it may go (400 MISSING_FIELDS).
 */
export async function approve(trxOrDb: Db | undefined, staff: StaffActor, id: string, input: { note?: string | null } = {}): Promise<WithdrawalRow> {
  const note = noteOf(input.note);
  return inTransaction(trxOrDb, async (trx) => {
    const w = await load(trx, id);
    if (!(TRANSITIONS.approve.from as readonly WithdrawalStatus[]).includes(w.status)) throw invalidState(w.status, 'approve');
    if (w.risk_action === 'review' && note === null) {
      throw AppError.legacy(400, 'MISSING_FIELDS', `This withdrawal is held for review (${w.risk_flags.join(', ')}); approving it needs a note`, {
        risk: { action: w.risk_action, flags: w.risk_flags },
      });
    }
    const now = clock.now();
    const approved = await transition(trx, w, 'approve', {
      approved_by: staff.actorId,
      approved_at: now,
      processed_by: staff.actorId,
      processed_at: now,
      admin_note: note ?? w.admin_note,
      updated_at: now,
    });
    await enqueue(trx, 'payouts.send', { withdrawal_id: approved.id });
    await recordStaffAction(trx, { actorId: staff.actorId, action: 'withdrawal.approve', targetType: 'withdrawal', targetId: id, note, details: { risk_action: w.risk_action }, ip: staff.ip });
    return approved;
  });
}

interface PaidBy {
  /** The staff member, or null for the payout worker. */
  actorId: string | null;
  reference: string | null;
  note: string | null;
}

/**
 * -> paid, and the payout posting: payouts in flight -amount, payouts sent +net, platform
 * fees +fee. The one path for staff (markPaid: approved, or processing whose claim ran
 * out) and the payout worker holding the claim (payoutSent: processing).
 */
async function settlePaid(trx: Db, w: WithdrawalRow, by: PaidBy): Promise<WithdrawalRow> {
  const now = clock.now();
  const changes: Partial<WithdrawalRow> = {
    paid_at: now,
    processed_by: by.actorId,
    processed_at: now,
    payout_reference: by.reference ?? w.payout_reference,
    payout_lease_until: null,
    admin_note: by.note ?? w.admin_note,
    updated_at: now,
  };
  const paid =
    by.actorId === null
      ? await transition(trx, w, 'payoutSent', changes)
      : await transition(trx, w, 'markPaid', changes, {
          // One statement decides staff against the worker: approved (not yet claimed), or a
          // claim that ran out (no worker is sending it). A live claim answers 409.
          where: (q) => void q.where((c) => void c.where('status', 'approved').orWhere('payout_lease_until', '<=', now)),
          refused: (found) => (found.status === 'processing' ? sending(found) : null),
        });
  const lines: PostingLine[] = [
    { account: { system: 'payoutsInFlight' }, amount: -paid.amount },
    { account: { system: 'payoutsSent' }, amount: paid.net_amount },
  ];
  if (paid.fee_amount > 0) lines.push({ account: { system: 'platformFees' }, amount: paid.fee_amount });
  await post(trx, { kind: 'withdrawal_payout', refType: 'withdrawal', refId: paid.id, postingKey: `withdrawal-paid:${paid.id}`, lines });
  await notify(trx, paid.user_id, 'withdrawal_paid', { withdrawal_id: paid.id });
  return paid;
}

/**
 * Staff: the payout was made (by hand, or confirmed with the provider). Not while the
 * payout worker is sending it (processing with a live claim: 409 INVALID_STATE); staff
 * and the worker race on one compare-and-set, so exactly one of them pays and posts.
 */
export async function markPaid(
  trxOrDb: Db | undefined,
  staff: StaffActor,
  id: string,
  input: { note?: string | null; reference?: string | null } = {},
): Promise<WithdrawalRow> {
  const note = noteOf(input.note);
  const reference = noteOf(input.reference);
  return inTransaction(trxOrDb, async (trx) => {
    const w = await load(trx, id);
    if (w.status === 'processing' && w.payout_lease_until !== null && w.payout_lease_until > clock.now()) throw sending(w);
    const paid = await settlePaid(trx, w, { actorId: staff.actorId, reference, note });
    await recordStaffAction(trx, { actorId: staff.actorId, action: 'withdrawal.mark_paid', targetType: 'withdrawal', targetId: id, note, details: reference ? { reference } : {}, ip: staff.ip });
    return paid;
  });
}

/**
 * Staff: pending | approved -> rejected with a note (required: 400 MISSING_FIELDS). The
 * amount goes back to the balance and a used voucher is restored. Once the payout worker
 * has claimed it (processing) or it is paid, it cannot be rejected.
 */
export async function reject(trxOrDb: Db | undefined, staff: StaffActor, id: string, input: { note?: string | null } = {}): Promise<WithdrawalRow> {
  const note = noteOf(input.note);
  if (note === null) throw AppError.legacy(400, 'MISSING_FIELDS', 'note is required: tell the user why the withdrawal was rejected');
  return inTransaction(trxOrDb, async (trx) => {
    const w = await load(trx, id);
    const now = clock.now();
    const rejected = await transition(trx, w, 'reject', { rejected_at: now, processed_by: staff.actorId, processed_at: now, admin_note: note, updated_at: now });
    await post(trx, {
      kind: 'withdrawal_refund',
      refType: 'withdrawal',
      refId: rejected.id,
      postingKey: `withdrawal-refund:${rejected.id}`,
      lines: [
        { account: { system: 'payoutsInFlight' }, amount: -rejected.amount },
        { account: { userId: rejected.user_id }, amount: rejected.amount },
      ],
    });
    if (rejected.voucher_redemption_id) await repo.restoreVoucher(trx, rejected.voucher_redemption_id, rejected.id);
    await notify(trx, rejected.user_id, 'withdrawal_rejected', { withdrawal_id: rejected.id });
    await recordStaffAction(trx, { actorId: staff.actorId, action: 'withdrawal.reject', targetType: 'withdrawal', targetId: id, note, ip: staff.ip });
    return rejected;
  });
}

// ---- The payout worker ----------------------------------------------------------------------

export type PayoutRun =
  | { outcome: 'paid'; withdrawal_id: string; reference: string }
  | { outcome: 'failed'; withdrawal_id: string; reason: string }
  | { outcome: 'skipped'; withdrawal_id: string; status: WithdrawalStatus | 'missing' }
  | { outcome: 'manual'; withdrawal_id: string };

/** Another run holds the claim: the job is retried later (a thrown, retryable error). */
export class PayoutBusyError extends Error {
  constructor(id: string) {
    super(`withdrawal ${id} is being paid out by another run; retry later`);
    this.name = 'PayoutBusyError';
  }
}

/**
 * The payout job (queue payouts, job payouts.send). Safe to run twice:
 *  1. claim: approved -> processing with a lease (a compare-and-set, committed before any
 *     money moves, so staff can no longer reject it or mark it paid; if staff marked it paid
 *     first, the claim finds paid and the run does nothing); a processing withdrawal whose lease
 *     ran out (a crashed run) is claimed again; anything else is left alone;
 *  2. the adapter sends the net amount with the stable reference `wd_<id>` (a provider
 *     pays a reference once);
 *  3. success: settlePaid (processing -> paid; already paid: nothing to do). Staff cannot
 *     mark it paid while the claim holds, so the worker and staff never both pay it.
 *     Refused for good: back to approved with the reason. A thrown error ends the lease at
 *     once and propagates, so the job's retry claims it again.
 */
export async function runPayout(withdrawalId: string, adapter: PayoutAdapter = payoutAdapter(), leaseMs: number = PAYOUT_LEASE_MS): Promise<PayoutRun> {
  const id = withdrawalId;
  if (!isUuid(id)) return { outcome: 'skipped', withdrawal_id: id, status: 'missing' };
  if (!adapter.automatic) return { outcome: 'manual', withdrawal_id: id };
  type Claim = { kind: 'claimed'; w: WithdrawalRow } | { kind: 'busy' } | { kind: 'skip'; status: WithdrawalStatus | 'missing' };
  const claimed = await db.transaction(async (trx): Promise<Claim> => {
    const w = await repo.findForUpdate(trx, id);
    if (!w) return { kind: 'skip', status: 'missing' };
    const now = clock.now();
    const lease = { payout_lease_until: new Date(now.getTime() + leaseMs), payout_attempts: w.payout_attempts + 1, updated_at: now };
    if (w.status === 'approved') {
      const moved = await repo.move(trx, id, TRANSITIONS.claimPayout.from, { ...lease, status: TRANSITIONS.claimPayout.to });
      return moved ? { kind: 'claimed', w: moved } : { kind: 'skip', status: w.status };
    }
    if (w.status === 'processing') {
      if (w.payout_lease_until && w.payout_lease_until > now) return { kind: 'busy' };
      const moved = await repo.move(trx, id, ['processing'], lease, (q) => void q.where('payout_lease_until', '<=', now));
      return moved ? { kind: 'claimed', w: moved } : { kind: 'busy' };
    }
    return { kind: 'skip', status: w.status };
  });
  if (claimed.kind === 'busy') throw new PayoutBusyError(id);
  if (claimed.kind === 'skip') return { outcome: 'skipped', withdrawal_id: id, status: claimed.status };
  const w = claimed.w;
  // While the provider call runs, the claim is renewed (this run's claim only: the attempt
  // number it took), so a live run is never taken over and a dead one's claim ends soon.
  const renewal = setInterval(() => {
    repo
      .move(db, id, ['processing'], { payout_lease_until: new Date(clock.nowMs() + leaseMs) }, (q) => void q.where('payout_attempts', w.payout_attempts))
      .catch((err: unknown) => logger.warn({ withdrawal_id: id, err }, 'payout claim renewal failed; it runs out unless renewed'));
  }, Math.max(100, Math.floor(leaseMs / 3)));
  let result;
  try {
    result = await adapter.send({
      reference: `wd_${w.id}`,
      withdrawalId: w.id,
      amount: w.net_amount,
      currency: 'IDR',
      method: w.method,
      destination: w.destination_details,
    });
  } catch (err) {
    // Transient: end the lease now so the retry may claim it again at once.
    await repo.move(db, id, ['processing'], { payout_lease_until: clock.now(), payout_error: String(err instanceof Error ? err.message : err).slice(0, 1000), updated_at: clock.now() });
    throw err;
  } finally {
    clearInterval(renewal);
  }
  if (result.outcome === 'failed') {
    const reason = result.reason.slice(0, 1000);
    const back = await db.transaction(async (trx) => {
      const now = clock.now();
      return repo.move(trx, id, TRANSITIONS.payoutFailed.from, { status: TRANSITIONS.payoutFailed.to, payout_lease_until: null, payout_error: reason, updated_at: now });
    });
    if (!back) {
      const now = await repo.findById(db, id);
      return { outcome: 'skipped', withdrawal_id: id, status: now?.status ?? 'missing' };
    }
    logger.warn({ withdrawal_id: id, adapter: adapter.name, reason }, 'payout refused by the provider; the withdrawal is back to approved');
    return { outcome: 'failed', withdrawal_id: id, reason };
  }
  const reference = result.providerReference;
  return db.transaction(async (trx) => {
    const current = await repo.findForUpdate(trx, id);
    if (!current || !(TRANSITIONS.payoutSent.from as readonly WithdrawalStatus[]).includes(current.status)) {
      // Another run that took over an expired claim paid it first (the same reference, so
      // the provider paid once): the posting was made once, by that run.
      return { outcome: 'skipped', withdrawal_id: id, status: current?.status ?? 'missing' } as const;
    }
    await settlePaid(trx, current, { actorId: null, reference, note: null });
    return { outcome: 'paid', withdrawal_id: id, reference } as const;
  });
}

/**
 * The stuck-payout sweeper (job payouts.sweep-stuck, every PAYOUT_SWEEP_MS): a withdrawal
 * left `processing` with a claim that ran out has no run sending it (its worker died, and
 * its job may be gone or have spent its attempts). It is queued again with a jobId of its
 * id and claim number, so sweeps before that job runs add nothing, and a new claim that
 * also dies is queued afresh. Safe: the job claims it with a compare-and-set, and the
 * adapter is called with the same reference `wd_<id>`, which a provider pays once. Nothing
 * is held open while queueing (ARCHITECTURE rule 7).
 */
export async function sweepStuckPayouts(limit = 200): Promise<{ requeued: number }> {
  const stuck = await repo.stuckProcessing(db, clock.now(), limit);
  const queue = getQueue('payouts');
  for (const w of stuck) {
    await queue.add('payouts.send', { withdrawal_id: w.id }, { jobId: `payout-resend-${w.id}-${w.payout_attempts}` });
  }
  if (stuck.length > 0) logger.warn({ withdrawal_ids: stuck.map((w) => w.id) }, 'stuck payouts re-queued (processing, claim ran out)');
  return { requeued: stuck.length };
}
