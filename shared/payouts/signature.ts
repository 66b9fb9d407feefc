/**
 * The staff signature over a payout destination (enterprise spec 1: "Money only leaves
 * escrow to a payout instruction the operator has verified and signed"; D7).
 *
 * Staff verification stores `signDestination` of the instruction's decrypted destination;
 * before money moves, `checkDestination` (instructions.ts) signs the row's CURRENT fields
 * again, for the kind of money about to move (live or sandbox), and compares. Any change of
 * a signed field after verification (through the API, which also sends the instruction back
 * to pending_verification, or straight in the database) makes the two differ.
 *
 * Version 2 (issue 42): the label and `livemode` are signed too. D7 as written: the label is
 * part of what staff verified (any edit sends it back); and a signature made while the
 * workspace was a sandbox never pays live money (a live payout checks against
 * `livemode: true`). A version 1 signature (no livemode, no label) matches nothing any more;
 * migration 20261209020300 sent every instruction it verified back to pending_verification.
 *
 * HMAC-SHA256 under a key derived from the service's encryption key (so the database
 * alone cannot forge a signature), over a canonical JSON of the fields (fixed key order,
 * a version tag), stored as `v2.` and the MAC in base64url. Compared in constant time.
 */
import { createHmac } from 'node:crypto';
import { config } from '../config.js';
import { safeEqual } from '../crypto.js';

/** What a verification vouches for: where the money goes, for whom, from which workspace, under which name, for which kind of money. */
export interface Destination {
  instructionId: string;
  workspaceId: string;
  counterpartyId: string;
  label: string;
  bankName: string;
  accountHolder: string;
  /** Digits only, as stored (spaces and dashes removed). */
  accountNumber: string;
  /** True for live money: the workspace was live when staff verified it / the payout is not a sandbox one. */
  livemode: boolean;
}

const PURPOSE = 'payout-instruction-signature/v1';
/** The stored form's prefix: a signature without it (version 1) is never accepted. */
export const DESTINATION_SIGNATURE_PREFIX = 'v2.';

/** HMAC(encryptionKey, purpose): a key used for nothing else. */
const signingKey = (): Buffer => createHmac('sha256', config.encryptionKey).update(PURPOSE).digest();

/** The signed text: every field under its own name, keys in a fixed (sorted) order, the version first. */
export function canonicalDestination(d: Destination): string {
  return JSON.stringify({
    v: 2,
    account_holder: d.accountHolder,
    account_number: d.accountNumber,
    bank_name: d.bankName,
    counterparty_id: d.counterpartyId.toLowerCase(),
    instruction_id: d.instructionId.toLowerCase(),
    label: d.label,
    livemode: d.livemode,
    workspace_id: d.workspaceId.toLowerCase(),
  });
}

export function signDestination(d: Destination): string {
  return DESTINATION_SIGNATURE_PREFIX + createHmac('sha256', signingKey()).update(canonicalDestination(d)).digest('base64url');
}

/** True only when `signature` is the version 2 signature of exactly this destination, for this kind of money (constant-time compare). */
export function signatureMatches(d: Destination, signature: string | null | undefined): boolean {
  if (typeof signature !== 'string' || !signature.startsWith(DESTINATION_SIGNATURE_PREFIX)) return false;
  return safeEqual(signDestination(d), signature);
}

/**
 * What a release vouches for, per payout: this amount, from this milestone of this
 * workspace, to this instruction of this counterparty. Signed when the release writes the
 * disbursement; the payout worker and staff settling check it, so a payout row edited
 * afterwards (another instruction, another amount, a live payout marked sandbox) is never paid.
 */
export interface PayoutTerms {
  disbursementId: string;
  workspaceId: string;
  dealId: string;
  milestoneId: string;
  instructionId: string;
  counterpartyId: string;
  amount: number;
  currency: string;
  isTest: boolean;
}

const PAYOUT_PURPOSE = 'disbursement-signature/v1';
const payoutKey = (): Buffer => createHmac('sha256', config.encryptionKey).update(PAYOUT_PURPOSE).digest();

export function canonicalPayout(p: PayoutTerms): string {
  return JSON.stringify({
    v: 1,
    amount: p.amount,
    counterparty_id: p.counterpartyId.toLowerCase(),
    currency: p.currency.toUpperCase(),
    deal_id: p.dealId.toLowerCase(),
    disbursement_id: p.disbursementId.toLowerCase(),
    instruction_id: p.instructionId.toLowerCase(),
    is_test: p.isTest,
    milestone_id: p.milestoneId.toLowerCase(),
    workspace_id: p.workspaceId.toLowerCase(),
  });
}

export function signPayout(p: PayoutTerms): string {
  return createHmac('sha256', payoutKey()).update(canonicalPayout(p)).digest('base64url');
}

export function payoutSignatureMatches(p: PayoutTerms, signature: string | null | undefined): boolean {
  if (typeof signature !== 'string' || signature === '') return false;
  return safeEqual(signPayout(p), signature);
}
