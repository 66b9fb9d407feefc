/**
 * Answer shapes of the payout instruction routes (enterprise spec 1, 4.6; D7). The account
 * number never leaves the service: answers show `account_number_masked` only (spec 1:
 * "Bank account numbers are never returned in full").
 */
import type { PendingInstruction } from './console-repo.js';
import type { InstructionForStaff, InstructionWithNames } from './instructions-repo.js';

const iso = (d: Date | string): string => new Date(d).toISOString();

/**
 * A bank account number as answers show it: an ellipsis and its last four digits
 * (`…7890`), the service's masking style (API key previews, `maskKey` in
 * shared/auth/api-keys.ts, end in `…` and the last four characters).
 */
export function maskAccountNumber(last4: string): string {
  return `…${last4}`;
}

export function serializeInstruction(p: InstructionWithNames) {
  return {
    id: p.id,
    label: p.label,
    counterparty: { id: p.counterparty_id, name: p.counterparty_name },
    bank_name: p.bank_name,
    account_holder: p.account_holder,
    account_number_masked: maskAccountNumber(p.account_number_last4),
    status: p.status,
    destination_version: p.destination_version,
    verified_at: p.verified_at ? iso(p.verified_at) : null,
    pending_since: p.status === 'pending_verification' ? iso(p.pending_since) : null,
    declined_at: p.declined_at ? iso(p.declined_at) : null,
    decline_reason: p.decline_reason,
    created_by: { id: p.created_by, name: p.creator_name },
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}

/**
 * The staff reveal (issue 42): the instruction with its FULL account number, its workspace
 * (live or sandbox: what a verification will sign for) and the `destination_version` a
 * verify must name. Answered only to staff, never stored (no idempotency replay), never cached.
 */
export function serializeRevealed(p: InstructionForStaff, accountNumber: string) {
  return {
    ...serializeInstruction(p),
    account_number: accountNumber,
    workspace: { id: p.workspace_id, display_name: p.workspace_name, is_sandbox: p.workspace_is_sandbox },
    livemode: !p.workspace_is_sandbox,
  };
}

/** An item of the staff queue of instructions awaiting verification (review R4): masked number, its workspace, the version a verify or decline names. */
export function serializeQueued(p: PendingInstruction) {
  return {
    id: p.id,
    workspace: { id: p.workspace_id, display_name: p.workspace_name, is_sandbox: p.workspace_is_sandbox },
    counterparty: { id: p.counterparty_id, name: p.counterparty_name },
    label: p.label,
    bank_name: p.bank_name,
    account_holder: p.account_holder,
    account_number_masked: maskAccountNumber(p.account_number_last4),
    destination_version: p.destination_version,
    pending_since: iso(p.pending_since),
    created_at: iso(p.created_at),
  };
}
