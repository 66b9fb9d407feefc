/** Spec shapes of payouts (enterprise spec 4.6: "Payout list ... not shown"; decision 0019). */
import { maskAccountNumber } from './instruction-serialize.js';
import type { PayoutListRow } from './repo.js';

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/**
 * A payout (list item, and the staff answer): never the full account number. Its
 * destination (label, bank, holder, masked number) is where it was released to, kept on the
 * payout (issue 42), not the instruction's current one.
 */
export function serializePayout(p: PayoutListRow) {
  return {
    id: p.id,
    deal_id: p.deal_id,
    deal_reference: p.deal_reference,
    milestone_id: p.milestone_id,
    milestone_title: p.milestone_title,
    payout_instruction_id: p.payout_instruction_id,
    instruction_label: p.instruction_label,
    counterparty_name: p.counterparty_name,
    bank_name: p.destination_bank_name,
    account_holder: p.destination_account_holder,
    account_number_masked: maskAccountNumber(p.destination_account_last4),
    amount: p.amount,
    currency: p.currency,
    status: p.status,
    failure_reason: p.failure_reason,
    settled_at: iso(p.settled_at),
    failed_at: iso(p.failed_at),
    created_at: iso(p.created_at),
    is_test: p.is_test,
  };
}
