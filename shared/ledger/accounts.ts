import { clock } from '../clock.js';
import type { Db } from '../db.js';

export type AccountKind = 'user' | 'escrow' | 'platform_fee' | 'gateway_clearing' | 'payout_in_flight' | 'system';

/** System accounts every installation has (created by the seed and on demand). */
export const SYSTEM_ACCOUNTS = {
  platformFees: { code: 'platform:fees', kind: 'platform_fee', allowNegative: false },
  // Money that gateways owe us (or we owe them): negative while a payment is in flight.
  gatewayClearing: { code: 'gateway:clearing', kind: 'gateway_clearing', allowNegative: true },
  payoutsInFlight: { code: 'payouts:in_flight', kind: 'payout_in_flight', allowNegative: false },
  // Payment surcharges the buyer pays on top of the escrow amount (payments).
  gatewayFees: { code: 'platform:gateway_fees', kind: 'platform_fee', allowNegative: false },
  // Money that left the platform to a user's bank, e-wallet or crypto address (withdrawals paid out).
  payoutsSent: { code: 'payouts:sent', kind: 'system', allowNegative: false },
  // Money paid for payment-service orders, held until the order is delivered or refunded (issue 11).
  ordersHeld: { code: 'orders:held', kind: 'system', allowNegative: false },
  // What a delivered payment-service order earns the platform (item price and service fee).
  ordersRevenue: { code: 'platform:orders_revenue', kind: 'platform_fee', allowNegative: false },
  // Money that came in (gateway clearing) and staff returned to the payer outside the service:
  // an amount mismatch or a late manual transfer (decision 0009; migration 20261202000200).
  returnedOutside: { code: 'payments:returned_outside', kind: 'system', allowNegative: false },
  // Enterprise money that arrived from workspaces (bank transfers the operator confirmed):
  // negative by what the platform holds for live milestones (issue 26).
  enterpriseFunding: { code: 'enterprise:funding_received', kind: 'gateway_clearing', allowNegative: true },
  // Buyer fees paid in with live milestone funding, held beside the milestone until release.
  enterpriseFeesHeld: { code: 'enterprise:buyer_fees_held', kind: 'system', allowNegative: false },
  // Enterprise payouts released to counterparties' verified instructions and not settled yet (issue 27).
  enterprisePayoutsInFlight: { code: 'enterprise:payouts_in_flight', kind: 'payout_in_flight', allowNegative: false },
  // Enterprise payouts the payout provider (or staff by hand) settled: money that left the platform.
  enterprisePayoutsSent: { code: 'enterprise:payouts_sent', kind: 'system', allowNegative: false },
  // Platform fees earned on released enterprise milestones (buyer and seller shares).
  enterpriseFees: { code: 'platform:enterprise_fees', kind: 'platform_fee', allowNegative: false },
  // Milestone money a staff ruling returned to the workspace (sent back by bank transfer).
  enterpriseRefunds: { code: 'enterprise:refunds_sent', kind: 'system', allowNegative: false },
  // Counterpart for corrections and opening balances made by staff.
  adjustments: { code: 'system:adjustments', kind: 'system', allowNegative: true },
} as const satisfies Record<string, { code: string; kind: AccountKind; allowNegative: boolean }>;

export type SystemAccount = keyof typeof SYSTEM_ACCOUNTS;

/**
 * The system accounts of the enterprise half, one per currency (decision 0023): a deal may
 * be in any currency, and its money moves only between accounts of that currency. The IDR
 * account keeps the code above; another currency's is `<code>:<CUR>`. Every other account
 * (the consumer half's, users', escrows') is IDR.
 */
export const CURRENCY_ACCOUNTS = [
  'enterpriseFunding',
  'enterpriseFeesHeld',
  'enterprisePayoutsInFlight',
  'enterprisePayoutsSent',
  'enterpriseFees',
  'enterpriseRefunds',
] as const satisfies readonly SystemAccount[];
export type CurrencyAccount = (typeof CURRENCY_ACCOUNTS)[number];
type IdrAccount = Exclude<SystemAccount, CurrencyAccount>;

/** The currency every consumer-half account is kept in, and the enterprise default. */
export const HOME_CURRENCY = 'IDR';

/**
 * Where a posting line goes: a user's balance, an escrow's held money, an enterprise
 * milestone's held money (in its deal's currency), an IDR system account, or an enterprise
 * system account in a currency.
 */
export type AccountRef =
  | { userId: string }
  | { escrowId: string }
  | { milestoneId: string; currency: string }
  | { system: IdrAccount }
  | { system: CurrencyAccount; currency: string };

export interface AccountSpec {
  code: string;
  kind: AccountKind;
  userId: string | null;
  allowNegative: boolean;
  currency: string;
}

function assertCurrency(currency: string): string {
  if (!/^[A-Z]{3}$/.test(currency)) throw new RangeError(`ledger currency must be three capital letters, not ${JSON.stringify(currency)}`);
  return currency;
}

/** The code of an enterprise system account in a currency (`enterprise:payouts_sent`, `enterprise:payouts_sent:USD`). */
export function currencyAccountCode(account: CurrencyAccount, currency: string): string {
  const base = SYSTEM_ACCOUNTS[account].code;
  return assertCurrency(currency) === HOME_CURRENCY ? base : `${base}:${currency}`;
}

export function accountSpec(ref: AccountRef): AccountSpec {
  if ('userId' in ref) return { code: `user:${ref.userId}`, kind: 'user', userId: ref.userId, allowNegative: false, currency: HOME_CURRENCY };
  if ('escrowId' in ref) return { code: `escrow:${ref.escrowId}`, kind: 'escrow', userId: null, allowNegative: false, currency: HOME_CURRENCY };
  if ('milestoneId' in ref) {
    return { code: `milestone:${ref.milestoneId}`, kind: 'escrow', userId: null, allowNegative: false, currency: assertCurrency(ref.currency) };
  }
  const s = SYSTEM_ACCOUNTS[ref.system];
  if ('currency' in ref) {
    return { code: currencyAccountCode(ref.system, ref.currency), kind: s.kind, userId: null, allowNegative: s.allowNegative, currency: ref.currency };
  }
  return { code: s.code, kind: s.kind, userId: null, allowNegative: s.allowNegative, currency: HOME_CURRENCY };
}

/**
 * Returns the accounts' ids keyed by code, creating missing escrow and system accounts.
 * User accounts are never created here: the database opens one when the users row is
 * inserted (trigger users_open_ledger_account). Creating one here would take a key-share
 * lock on the users row, which waits behind any transaction holding that row: a deadlock
 * path for a posting. A user spec without an account is simply absent from the map.
 */
export async function ensureAccounts(trx: Db, specs: AccountSpec[]): Promise<Map<string, number>> {
  const unique = [...new Map(specs.map((s) => [s.code, s])).values()];
  // In code order, so two transactions creating the same accounts never wait in a circle.
  const creatable = unique.filter((s) => s.kind !== 'user').sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  if (creatable.length > 0) {
    await trx('ledger_accounts')
      .insert(
        creatable.map((s) => ({
          code: s.code,
          kind: s.kind,
          user_id: s.userId,
          allow_negative: s.allowNegative,
          currency: s.currency,
          created_at: clock.now(),
        })),
      )
      .onConflict('code')
      .ignore();
  }
  const rows = (await trx('ledger_accounts')
    .select('id', 'code')
    .whereIn(
      'code',
      unique.map((s) => s.code),
    )) as { id: number; code: string }[];
  return new Map(rows.map((r) => [r.code, r.id]));
}

export async function balanceOf(trx: Db, ref: AccountRef): Promise<number> {
  const row = (await trx('ledger_accounts').select('balance').where({ code: accountSpec(ref).code }).first()) as
    | { balance: number }
    | undefined;
  return row?.balance ?? 0;
}
