/**
 * The gate every payout passes before money moves (decision 0019), for the payout worker
 * (automatic or manual adapter) and for staff settling by hand:
 *  1. the payout row still matches what its release signed (amount, milestone, workspace,
 *     instruction, counterparty, sandbox or live): a row edited afterwards is refused;
 *  2. the instruction is verified and still matches its verification signature for the
 *     payout's kind of money (checkDestination: an instruction edited, deleted or altered in
 *     the database is refused; a sandbox verification never pays a live payout);
 *  3. the instruction is of the payout's workspace and of the counterparty the release signed for;
 *  4. the instruction is still the destination the payout records (label, bank, holder, last
 *     four digits kept at release, issue 42): the money goes where the record says, or not at all.
 * The answer carries the destination, decrypted, for the provider call.
 */
import type { Db } from '../db.js';
import { checkDestination } from './instructions.js';
import type { DisbursementRow } from './repo.js';
import { payoutSignatureMatches } from './signature.js';

export type Gate = { ok: true; destination: { bank_name: string; account_holder: string; account_number: string } } | { ok: false; reason: string };

export async function payoutGate(trx: Db, d: DisbursementRow): Promise<Gate> {
  const check = await checkDestination(trx, d.payout_instruction_id, !d.is_test);
  if (!check.ok) return { ok: false, reason: check.reason };
  const terms = {
    disbursementId: d.id,
    workspaceId: d.workspace_id,
    dealId: d.deal_id,
    milestoneId: d.milestone_id,
    instructionId: d.payout_instruction_id,
    counterpartyId: check.row.counterparty_id,
    amount: d.amount,
    currency: d.currency,
    isTest: d.is_test,
  };
  if (!payoutSignatureMatches(terms, d.signature)) return { ok: false, reason: 'payout_signature_mismatch' };
  if (check.row.workspace_id !== d.workspace_id) return { ok: false, reason: 'instruction_of_another_workspace' };
  const r = check.row;
  if (r.label !== d.instruction_label || r.bank_name !== d.destination_bank_name || r.account_holder !== d.destination_account_holder || r.account_number_last4 !== d.destination_account_last4) {
    return { ok: false, reason: 'destination_not_as_recorded' };
  }
  return { ok: true, destination: check.destination };
}
