/** Spec shapes (consumer spec section 2): Withdrawal, Withdrawal configuration, Balance. */
import type { WithdrawFeeRule, WithdrawLimits } from './fees.js';
import type { RedemptionView, WithdrawalRow } from './repo.js';
import { DESTINATION_FIELDS } from './states.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** JSON text of the destination in the method's field order (jsonb does not keep key order). */
function destinationText(w: WithdrawalRow): string {
  const ordered: Record<string, string> = {};
  for (const field of DESTINATION_FIELDS[w.method]) if (w.destination_details[field] !== undefined) ordered[field] = w.destination_details[field];
  return JSON.stringify(ordered);
}

/** The Withdrawal resource; amounts as strings, `destination_details` as JSON text. */
export function serializeWithdrawal(w: WithdrawalRow) {
  return {
    id: w.id,
    user_id: w.user_id,
    amount: String(w.amount),
    fee_amount: String(w.fee_amount),
    net_amount: String(w.net_amount),
    method: w.method,
    destination_details: destinationText(w),
    status: w.status,
    admin_note: w.admin_note,
    processed_by: w.processed_by,
    processed_at: iso(w.processed_at),
    created_at: w.created_at.toISOString(),
    updated_at: w.updated_at.toISOString(),
    risk: { action: w.risk_action, flags: w.risk_flags },
    // Beyond section 2 (additive): how the fee was reached, and the moves.
    destination_ack: w.destination_ack,
    fee_breakdown: {
      base: String(w.fee_base),
      loyalty_discount: String(w.loyalty_discount),
      voucher_discount: String(w.voucher_discount),
      voucher_redemption_id: w.voucher_redemption_id,
    },
    approved_at: iso(w.approved_at),
    paid_at: iso(w.paid_at),
    rejected_at: iso(w.rejected_at),
    payout_reference: w.payout_reference,
  };
}

/** Staff see who asked and why a payout failed. */
export function serializeStaffWithdrawal(w: WithdrawalRow, user?: { username: string; email: string; full_name: string }) {
  return {
    ...serializeWithdrawal(w),
    approved_by: w.approved_by,
    payout_attempts: w.payout_attempts,
    payout_error: w.payout_error,
    user: user ? { id: w.user_id, username: user.username, email: user.email, full_name: user.full_name } : null,
  };
}

export function serializeVoucher(r: RedemptionView) {
  return {
    redemption_id: r.redemption_id,
    voucher_id: r.id,
    code: r.code,
    percent_off: r.percent_off,
    amount_off: r.amount_off,
    max_discount_amount: r.max_discount_amount,
    expires_at: iso(r.expires_at),
  };
}

/** The Withdrawal configuration resource, with the caller's unused vouchers. */
export function serializeConfig(limits: WithdrawLimits, fee: WithdrawFeeRule, vouchers: RedemptionView[], loyal: boolean) {
  return {
    withdraw_min_idr: limits.minIdr,
    withdraw_max_idr: limits.maxIdr,
    withdraw_step_idr: limits.stepIdr,
    withdraw_fee_type: fee.type,
    withdraw_fee_value: fee.value,
    withdraw_fee_min_idr: fee.minIdr,
    withdraw_fee_max_idr: fee.maxIdr,
    withdraw_fee_loyalty_discount_percent: fee.loyaltyDiscountPercent,
    withdraw_fee_vouchers: vouchers.map(serializeVoucher),
    // Beyond section 2 (additive): whether the caller gets the loyalty discount.
    withdraw_fee_loyalty_eligible: loyal,
  };
}
