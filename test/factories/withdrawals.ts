/**
 * Withdrawal factories: real services, real database. Money arrives through the ledger
 * (`fundUser` posts an opening balance from the adjustments account), withdrawals are made
 * and moved with the same service calls the routes use, so the ledger holds at every step.
 */
import { randomUUID } from 'node:crypto';
import { clock } from '../../shared/clock.js';
import { db } from '../../shared/db.js';
import { balanceOf } from '../../shared/ledger/index.js';
import type { UserRow } from '../../shared/users/repo.js';
import * as withdrawals from '../../shared/withdrawals/service.js';
import type { WithdrawalRow } from '../../shared/withdrawals/repo.js';
import type { WithdrawalMethod, WithdrawalStatus } from '../../shared/withdrawals/states.js';
import { fundUser } from '../helpers/platform-factories.js';
import { createUser, type UserOptions } from './users.js';

export const DESTINATIONS: Record<WithdrawalMethod, Record<string, string>> = {
  bank_transfer: { bank_name: 'BCA', account_number: '1234567890', account_holder: 'Budi Santoso' },
  dana: { phone: '081234567890' },
  gopay: { phone: '+6281298765432' },
  crypto: { network: 'TRC20', wallet_address: 'TXyz1234567890abcdefghijklmnopqr' },
};

let destinationSeq = 0;

/** A bank destination no other row uses (so the shared-destination check stays quiet). */
export function freshBank(): Record<string, string> {
  destinationSeq += 1;
  return { bank_name: 'BCA', account_number: `9${String(destinationSeq).padStart(9, '0')}${randomUUID().replace(/[^0-9]/g, '').slice(0, 6)}`, account_holder: 'Siti Aminah' };
}

/** A user (e-mail verified unless told otherwise) with `balance` on their ledger account. */
export async function fundedUser(balance: number, options: UserOptions = {}): Promise<UserRow> {
  const { user } = await createUser(options);
  if (balance > 0) await fundUser(user.id, balance);
  return (await db('users').where({ id: user.id }).first()) as UserRow;
}

export async function staffUser(): Promise<UserRow> {
  return (await createUser({ role: 'admin' })).user;
}

export interface FeeSettings {
  type?: unknown;
  value?: unknown;
  min_idr?: unknown;
  max_idr?: unknown;
  loyalty_discount_percent?: unknown;
}

/** Writes the `withdraw_fee` and/or `withdraw_limits` settings (the table is empty in tests). */
export async function setWithdrawSettings(settings: { fee?: unknown; limits?: unknown }): Promise<void> {
  const now = clock.now();
  for (const [key, value] of [
    ['withdraw_fee', settings.fee],
    ['withdraw_limits', settings.limits],
  ] as const) {
    if (value === undefined) continue;
    await db('settings').insert({ key, value: JSON.stringify(value), updated_at: now }).onConflict('key').merge();
  }
}

export interface VoucherSpec {
  code?: string;
  percent_off?: number | null;
  amount_off?: number | null;
  max_discount_amount?: number | null;
  expires_at?: Date | null;
}

/** Creates a one-time voucher and grants it to the user; returns the redemption and voucher ids. */
export async function grantVoucher(userId: string, spec: VoucherSpec = {}): Promise<{ redemptionId: string; voucherId: string; code: string }> {
  const now = clock.now();
  const code = spec.code ?? `WD${randomUUID().slice(0, 8).toUpperCase()}`;
  const [voucher] = await db('withdrawal_fee_vouchers')
    .insert({
      code,
      percent_off: spec.percent_off === undefined && spec.amount_off === undefined ? 100 : (spec.percent_off ?? null),
      amount_off: spec.amount_off ?? null,
      max_discount_amount: spec.max_discount_amount ?? null,
      expires_at: spec.expires_at ?? null,
      created_at: now,
    })
    .returning<{ id: string }[]>('id');
  const [redemption] = await db('withdrawal_fee_voucher_redemptions')
    .insert({ voucher_id: voucher!.id, user_id: userId, created_at: now })
    .returning<{ id: string }[]>('id');
  return { redemptionId: redemption!.id, voucherId: voucher!.id, code };
}

export interface WithdrawalOptions {
  user?: UserRow;
  amount?: number;
  method?: WithdrawalMethod;
  destination?: Record<string, string>;
  /** Walk to this status (default pending). `paid` goes through approve and staff mark-paid. */
  status?: WithdrawalStatus;
  staff?: UserRow;
}

/** A withdrawal made and moved through the services (the user is funded with exactly the amount if not given). */
export async function createWithdrawal(options: WithdrawalOptions = {}): Promise<{ withdrawal: WithdrawalRow; user: UserRow }> {
  const amount = options.amount ?? 100_000;
  const user = options.user ?? (await fundedUser(amount));
  let w = await withdrawals.requestWithdrawal(undefined, user.id, {
    amount,
    method: options.method ?? 'bank_transfer',
    destination_details: options.destination ?? (options.method && options.method !== 'bank_transfer' ? DESTINATIONS[options.method] : freshBank()),
  });
  const status = options.status ?? 'pending';
  if (status === 'pending') return { withdrawal: w, user };
  const staff = options.staff ?? (await staffUser());
  const actor = { actorId: staff.id };
  if (status === 'rejected') return { withdrawal: await withdrawals.reject(undefined, actor, w.id, { note: 'factory' }), user };
  w = await withdrawals.approve(undefined, actor, w.id, { note: 'factory' });
  if (status === 'approved') return { withdrawal: w, user };
  if (status === 'processing') {
    const [moved] = (await db('withdrawals')
      .where({ id: w.id, status: 'approved' })
      .update({ status: 'processing', payout_lease_until: new Date(clock.nowMs() + withdrawals.PAYOUT_LEASE_MS), payout_attempts: 1 })
      .returning('*')) as WithdrawalRow[];
    return { withdrawal: moved!, user };
  }
  return { withdrawal: await withdrawals.markPaid(undefined, actor, w.id, { reference: 'factory' }), user };
}

/** The system accounts a withdrawal touches, for before/after comparisons. */
export async function systemBooks(): Promise<{ inFlight: number; sent: number; fees: number }> {
  return {
    inFlight: await balanceOf(db, { system: 'payoutsInFlight' }),
    sent: await balanceOf(db, { system: 'payoutsSent' }),
    fees: await balanceOf(db, { system: 'platformFees' }),
  };
}

export async function userBalance(userId: string): Promise<number> {
  return ((await db('users').select('balance').where({ id: userId }).first()) as { balance: number }).balance;
}
