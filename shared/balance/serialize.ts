/** The Balance resource (consumer spec 2 "Balance", 4.4). */
import { serializeWithdrawal } from '../withdrawals/serialize.js';
import type { WithdrawalRow } from '../withdrawals/repo.js';
import type { LineRow } from './repo.js';

/** Journal entry kinds as the user sees them; any other kind is shown as it is named. */
const TYPES: Record<string, string> = {
  escrow_release: 'release_to_seller',
  escrow_refund: 'refund',
  withdrawal: 'withdrawal',
  withdrawal_refund: 'withdrawal_refund',
};

export interface BalanceView {
  balance: number;
  lines: LineRow[];
  escrowById: Map<string, { amount: number; fee_amount: number | null }>;
  withdrawalStatus: Map<string, string>;
  withdrawals: WithdrawalRow[];
  totals: { credit: number; debit: number } | undefined;
  pendingCount: number;
}

function serializeLine(l: LineRow, v: BalanceView) {
  const escrow = l.ref_type === 'escrow' && l.ref_id ? v.escrowById.get(l.ref_id) : undefined;
  const isRelease = l.kind === 'escrow_release' && escrow !== undefined;
  return {
    id: String(l.id),
    type: TYPES[l.kind] ?? l.kind,
    // Signed: credits positive, debits negative (direction says the same in words).
    amount: String(l.amount),
    direction: l.amount > 0 ? 'credit' : 'debit',
    currency: 'IDR',
    // A withdrawal's debit shows the withdrawal's own status; every other posted line is final.
    status: l.kind === 'withdrawal' && l.ref_id ? (v.withdrawalStatus.get(l.ref_id) ?? 'completed') : 'completed',
    created_at: l.created_at.toISOString(),
    escrow_id: l.ref_type === 'escrow' ? l.ref_id : null,
    withdrawal_id: l.ref_type === 'withdrawal' ? l.ref_id : null,
    escrow_amount: isRelease ? String(escrow.amount) : null,
    platform_fee: isRelease ? String(escrow.fee_amount ?? 0) : null,
  };
}

export function serializeBalance(v: BalanceView) {
  return {
    balance: v.balance,
    recent_transactions: v.lines.map((l) => serializeLine(l, v)),
    recent_withdrawals: v.withdrawals.map(serializeWithdrawal),
    stats_30d: {
      credit: Number(v.totals?.credit ?? 0),
      debit: Number(v.totals?.debit ?? 0),
      pending_count: v.pendingCount,
    },
  };
}
