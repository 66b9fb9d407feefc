/**
 * Payout instructions (enterprise spec 1, 4.6, 8; D7, D9, D10): a counterparty's bank
 * destination that released money is paid to, once staff verified it.
 *
 * - The account number is sealed at rest (`encryptSecret`) with its last four digits beside
 *   it for answers (`account_number_masked`); it is never returned, logged or put in an event.
 * - A new instruction is `pending_verification`. Staff reveal it in full (`revealInstruction`,
 *   written to the staff audit) and verify the `destination_version` they were shown:
 *   verification signs the destination (signature.ts v2: the instruction, its workspace and
 *   counterparty, label, bank name, holder, number, and live or sandbox) and marks it
 *   `verified`; a version that moved on is refused (409 CONCURRENT_MODIFICATION), nothing signed.
 * - Any edit (D7 as written: the label included) bumps `destination_version` and sends a
 *   verified instruction back to `pending_verification` with its signature cleared. Sending
 *   a field with the value it already has changes nothing.
 * - A workspace going live sends every instruction back to `pending_verification` and bumps
 *   its version (`unverifyForLive`): a sandbox verification never pays live money.
 * - `checkDestination` is the gate money passes: it re-signs the row's current fields for
 *   the kind of money about to move (live or sandbox) and compares, so a change that bypassed
 *   the API (a direct database edit, a sandbox signature copied onto a live row) stops the payout.
 * - While a disbursement to an instruction is queued or processing, PATCH and DELETE are
 *   refused (409 INVALID_STATE): the money's destination cannot move under it.
 * - Review R4: `pending_since` is when it last became pending (the staff queue's age); staff
 *   may decline a pending instruction with a reason (`declineInstruction`: `declined`, never
 *   signed, so never payable; an edit sends it back to pending); a workspace holds at most
 *   PENDING_INSTRUCTIONS_PER_WORKSPACE not verified (409 TOO_MANY_PENDING_INSTRUCTIONS).
 *
 * Lock order (every write): the workspace row (`lockWorkspace`), then the instruction row
 * FOR UPDATE; a release takes the workspace row first too and then reads its instructions
 * FOR SHARE (`instructionsForRelease`), so an edit and a release of one workspace run one
 * after the other and each sees what the other committed. Every write appends its event to
 * the workspace feed in its own transaction (payout_instruction.created, .updated,
 * .deleted; .verified by staff with the operator label and no actor); livemode is false on
 * a sandbox workspace.
 */
import { clock } from '../clock.js';
import { decryptSecret, encryptSecret } from '../crypto.js';
import { db, inTransaction, type Db, type ReadAhead } from '../db.js';
import type { StaffActor } from '../actors.js';
import { isUuid } from '../ids.js';
import { actorUnderLock, byOf, type WorkspaceActor } from '../enterprise/access.js';
import { counterpartyById } from '../enterprise/counterparties-repo.js';
import { appendEvent, operatorLabel } from '../enterprise/events.js';
import { lockWorkspace, type WorkspaceRow } from '../enterprise/repo.js';
import { recordStaffAction } from '../staff/audit.js';
import { instructionErrors } from './instruction-errors.js';
import type { InstructionInput, InstructionPatch, InstructionQuery } from './instruction-schemas.js';
import { maskAccountNumber } from './instruction-serialize.js';
import * as repo from './instructions-repo.js';
import type { InstructionChanges, InstructionForStaff, InstructionWithNames, PayoutInstructionRow } from './instructions-repo.js';
import { signDestination, signatureMatches, type Destination } from './signature.js';

export type { InstructionForStaff, InstructionWithNames, PayoutInstructionRow } from './instructions-repo.js';
export type { InstructionInput, InstructionPatch, InstructionQuery } from './instruction-schemas.js';

const last4 = (accountNumber: string): string => accountNumber.slice(-4);

/**
 * Review R4: at most this many instructions of one workspace not verified (pending_verification
 * or declined, not deleted). Creating one more, or editing a verified one back to pending when
 * the workspace is at the cap, answers 409 TOO_MANY_PENDING_INSTRUCTIONS; deleting one frees a
 * slot. Counted under the workspace lock, so two creates cannot both take the last slot.
 */
export const PENDING_INSTRUCTIONS_PER_WORKSPACE = 20;

async function assertPendingSlot(trx: Db, workspaceId: string): Promise<void> {
  if ((await repo.unverifiedCount(trx, workspaceId)) >= PENDING_INSTRUCTIONS_PER_WORKSPACE) throw instructionErrors.tooManyPending(PENDING_INSTRUCTIONS_PER_WORKSPACE);
}

/** The decrypted account number, or null when the sealed value cannot be opened (tampered or sealed under another key). */
function openNumber(row: Pick<PayoutInstructionRow, 'account_number_sealed'>): string | null {
  try {
    return decryptSecret(row.account_number_sealed);
  } catch {
    return null;
  }
}

/** The decrypted account number for staff (reveal, verify): a number that cannot be opened is a fault, never shown or signed. */
function sealedNumberOf(row: Pick<PayoutInstructionRow, 'id' | 'account_number_sealed'>): string {
  const accountNumber = openNumber(row);
  if (accountNumber === null) throw new Error(`payout instruction ${row.id}: the sealed account number cannot be opened`);
  return accountNumber;
}

/** The destination a signature covers, from a row, its decrypted account number and the kind of money (live or sandbox). */
function destinationOf(row: PayoutInstructionRow, accountNumber: string, livemode: boolean): Destination {
  return {
    instructionId: row.id,
    workspaceId: row.workspace_id,
    counterpartyId: row.counterparty_id,
    label: row.label,
    livemode,
    bankName: row.bank_name,
    accountHolder: row.account_holder,
    accountNumber,
  };
}

/** The workspace row, locked (the first lock of every instruction write), and the caller's authority read again under it (issue 42). */
async function lockedWorkspace(trx: Db, actor: WorkspaceActor): Promise<WorkspaceRow> {
  const workspace = await lockWorkspace(trx, actor.workspaceId);
  if (!workspace) throw instructionErrors.notFound();
  await actorUnderLock(trx, actor, 'finance');
  return workspace;
}

/** The instruction of the actor's workspace for a PATCH or DELETE: locked after the workspace; refused while money is on its way to it. */
async function lockForChange(trx: Db, actor: WorkspaceActor, id: string): Promise<{ workspace: WorkspaceRow; row: PayoutInstructionRow }> {
  if (!isUuid(id)) throw instructionErrors.notFound();
  const workspace = await lockedWorkspace(trx, actor);
  const row = await repo.lockInstruction(trx, actor.workspaceId, id);
  if (!row) throw instructionErrors.notFound();
  if (await repo.hasOpenDisbursement(trx, row.id)) throw instructionErrors.payoutInFlight();
  return { workspace, row };
}

async function withNames(trx: Db, row: PayoutInstructionRow): Promise<InstructionWithNames> {
  return (await repo.instructionWithNames(trx, row.workspace_id, row.id))!;
}

/** How an event names an instruction: its label, bank and masked number (never the number). */
const named = (row: Pick<PayoutInstructionRow, 'label' | 'bank_name' | 'account_number_last4'>): string =>
  `${row.label} (${row.bank_name} ${maskAccountNumber(row.account_number_last4)})`;

// ---- Reads --------------------------------------------------------------------------------

export async function listInstructions(actor: WorkspaceActor, q: InstructionQuery): Promise<{ rows: InstructionWithNames[]; total: number }> {
  return repo.listInstructions(db, actor.workspaceId, { counterpartyId: q.counterparty_id, status: q.status, page: q.page, limit: q.limit });
}

/** An instruction of the actor's workspace; 404 NOT_FOUND for another workspace's or a deleted one. */
export async function getInstruction(actor: WorkspaceActor, id: string): Promise<InstructionWithNames> {
  const row = isUuid(id) ? await repo.instructionWithNames(db, actor.workspaceId, id) : undefined;
  if (!row) throw instructionErrors.notFound();
  return row;
}

// ---- Writes (finance) ---------------------------------------------------------------------

/** POST /payout-instructions (D7): a destination for a counterparty of the workspace, pending_verification. */
export async function createInstruction(trx: Db | undefined, actor: WorkspaceActor, input: InstructionInput): Promise<InstructionWithNames> {
  return inTransaction(trx, async (t) => {
    const workspace = await lockedWorkspace(t, actor);
    const cp = isUuid(input.counterparty_id) ? await counterpartyById(t, input.counterparty_id) : undefined;
    if (!cp || cp.workspace_id !== workspace.id) throw instructionErrors.counterpartyNotFound();
    await assertPendingSlot(t, workspace.id);
    const now = clock.now();
    const row = await repo.insertInstruction(t, {
      workspace_id: workspace.id,
      counterparty_id: cp.id,
      label: input.label,
      bank_name: input.bank_name,
      account_holder: input.account_holder,
      account_number_sealed: encryptSecret(input.account_number),
      account_number_last4: last4(input.account_number),
      created_by: actor.userId,
      pending_since: now,
      created_at: now,
      updated_at: now,
    });
    await appendEvent(t, workspace.id, {
      event: 'payout_instruction.created',
      entityType: 'payout_instruction',
      entityId: row.id,
      actor: byOf(actor),
      summary: `Payout instruction ${named(row)} added for ${cp.name}; waiting for verification`,
    });
    return withNames(t, row);
  });
}

/**
 * PATCH /payout-instructions/:id: any subset of label, bank_name, account_number,
 * account_holder. Any change (D7 as written: the label too, issue 42) bumps
 * `destination_version` and sends a verified instruction back to pending_verification (the
 * signature cleared). A body that changes nothing writes nothing.
 */
export async function updateInstruction(trx: Db | undefined, actor: WorkspaceActor, id: string, input: InstructionPatch): Promise<InstructionWithNames> {
  return inTransaction(trx, async (t) => {
    const { workspace, row } = await lockForChange(t, actor, id);
    const changes: InstructionChanges = { updated_at: clock.now() };
    const changed: string[] = [];
    if (input.label !== undefined && input.label !== row.label) {
      changes.label = input.label;
      changed.push('label');
    }
    if (input.bank_name !== undefined && input.bank_name !== row.bank_name) {
      changes.bank_name = input.bank_name;
      changed.push('bank_name');
    }
    if (input.account_holder !== undefined && input.account_holder !== row.account_holder) {
      changes.account_holder = input.account_holder;
      changed.push('account_holder');
    }
    // A number that cannot be opened any more is replaced (it is a change whatever was sent).
    if (input.account_number !== undefined && input.account_number !== openNumber(row)) {
      changes.account_number_sealed = encryptSecret(input.account_number);
      changes.account_number_last4 = last4(input.account_number);
      changed.push('account_number');
    }
    if (changed.length === 0) return withNames(t, row);
    const unverified = row.status === 'verified';
    // A verified one leaving the verified set takes a pending slot (a declined one already holds one).
    if (unverified) await assertPendingSlot(t, workspace.id);
    changes.status = 'pending_verification';
    changes.verification_signature = null;
    changes.verified_at = null;
    changes.verified_by = null;
    changes.declined_at = null;
    changes.declined_by = null;
    changes.decline_reason = null;
    // The new destination waits from now (review R4: the staff queue's age).
    changes.pending_since = changes.updated_at;
    const updated = await repo.updateInstruction(t, row.id, changes, true);
    await appendEvent(t, workspace.id, {
      event: 'payout_instruction.updated',
      entityType: 'payout_instruction',
      entityId: updated.id,
      actor: byOf(actor),
      summary: `Payout instruction ${named(updated)} changed: ${changed.sort().join(', ')}${unverified || row.status === 'declined' ? '; waiting for verification again' : ''}`,
    });
    return withNames(t, updated);
  });
}

/** DELETE /payout-instructions/:id: a soft delete (deleted_at); past disbursements keep pointing at the row. */
export async function deleteInstruction(trx: Db | undefined, actor: WorkspaceActor, id: string): Promise<{ id: string; deleted: true }> {
  return inTransaction(trx, async (t) => {
    const { workspace, row } = await lockForChange(t, actor, id);
    const now = clock.now();
    await repo.updateInstruction(t, row.id, { deleted_at: now, updated_at: now });
    await appendEvent(t, workspace.id, {
      event: 'payout_instruction.deleted',
      entityType: 'payout_instruction',
      entityId: row.id,
      actor: byOf(actor),
      summary: `Payout instruction ${named(row)} deleted`,
    });
    return { id: row.id, deleted: true };
  });
}

// ---- Staff (D9, D10) ----------------------------------------------------------------------

/** What staff are shown when they reveal an instruction: everything, the full account number included, and the version a verify must name. */
export interface RevealedInstruction {
  instruction: InstructionForStaff;
  accountNumber: string;
}

/**
 * POST /v1/admin/enterprise/payout-instructions/:id/reveal (and the console's reveal): the
 * instruction with its FULL account number, for staff checking it with the bank or paying
 * by hand. Every reveal is written to the staff audit (who, when, from where, which
 * version) in the same transaction as the read: no reveal without its audit row. Deleted
 * or unknown instructions are 404 NOT_FOUND.
 */
export async function revealInstruction(trx: Db | undefined, staff: StaffActor, id: string): Promise<RevealedInstruction> {
  return inTransaction(trx, async (t) => {
    const row = isUuid(id) ? await repo.instructionForStaff(t, id) : undefined;
    if (!row || row.deleted_at !== null) throw instructionErrors.notFoundAnywhere();
    const accountNumber = sealedNumberOf(row);
    await recordStaffAction(t, {
      actorId: staff.actorId,
      action: 'payout_instruction.revealed',
      targetType: 'payout_instruction',
      targetId: row.id,
      note: staff.note ?? null,
      details: { destination_version: row.destination_version, workspace_id: row.workspace_id, status: row.status },
      ip: staff.ip,
    });
    return { instruction: row, accountNumber };
  });
}

/**
 * A staff decision's instruction (verify, decline): the workspace row locked, then the
 * instruction; 404 NOT_FOUND for an unknown or deleted one, 409 CONCURRENT_MODIFICATION when
 * its destination moved on from the version staff were shown.
 */
async function lockedForDecision(t: Db, id: string, destinationVersion: number) {
  const found = isUuid(id) ? await repo.instructionById(t, id) : undefined;
  if (!found || found.deleted_at !== null) throw instructionErrors.notFoundAnywhere();
  const workspace = await lockWorkspace(t, found.workspace_id);
  const row = await repo.instructionById(t, id, true);
  if (!workspace || !row || row.deleted_at !== null) throw instructionErrors.notFoundAnywhere();
  if (row.destination_version !== destinationVersion) throw instructionErrors.versionMoved();
  return { workspace, row };
}

/**
 * POST /v1/admin/enterprise/payout-instructions/:id/verify { destination_version }: staff
 * checked the destination they were shown (`revealInstruction`) outside the service and
 * vouch for it. The version must be the row's current one, read under its lock after the
 * workspace row's: one that moved on (an edit, the workspace going live) is 409
 * CONCURRENT_MODIFICATION and nothing is signed. pending_verification -> verified with the
 * signature of the row's current destination for the workspace's current kind of money
 * (live or sandbox); 409 INVALID_STATE when already verified; 404 NOT_FOUND for an unknown
 * or deleted instruction. Recorded in the staff audit and in the workspace feed
 * (payout_instruction.verified, the operator label, no actor).
 */
export async function verifyInstruction(trx: Db | undefined, staff: StaffActor, id: string, destinationVersion: number): Promise<InstructionWithNames> {
  return inTransaction(trx, async (t) => {
    const { workspace, row } = await lockedForDecision(t, id, destinationVersion);
    if (row.status === 'verified') throw instructionErrors.alreadyVerified();
    if (row.status !== 'pending_verification') throw instructionErrors.notPending();
    const accountNumber = sealedNumberOf(row);
    const now = clock.now();
    const signature = signDestination(destinationOf(row, accountNumber, !workspace.is_sandbox));
    const verified = await repo.markVerified(t, row.id, destinationVersion, { verification_signature: signature, verified_at: now, verified_by: staff.actorId });
    if (!verified) throw instructionErrors.alreadyVerified();
    await recordStaffAction(t, {
      actorId: staff.actorId,
      action: 'payout_instruction.verified',
      targetType: 'payout_instruction',
      targetId: row.id,
      note: staff.note ?? null,
      details: { destination_version: destinationVersion, livemode: !workspace.is_sandbox },
      ip: staff.ip,
    });
    await appendEvent(t, workspace.id, {
      event: 'payout_instruction.verified',
      entityType: 'payout_instruction',
      entityId: row.id,
      actorLabel: await operatorLabel(t),
      summary: `Payout instruction ${named(verified)} verified`,
    });
    return withNames(t, verified);
  });
}

/**
 * POST /v1/admin/enterprise/payout-instructions/:id/decline { destination_version, reason }
 * (review R4) and the console's decline: staff refuse the destination they were shown, with
 * a reason the workspace sees. Built as verify is: the workspace row locked, then the
 * instruction; the version must be the row's current one (409 CONCURRENT_MODIFICATION);
 * pending_verification -> declined by compare-and-set (409 INVALID_STATE otherwise); 404
 * NOT_FOUND for an unknown or deleted one. Nothing is signed: a declined instruction is
 * never payable (the gate refuses anything not verified). Recorded in the staff audit and
 * in the workspace feed as payout_instruction.updated (an existing event name; the spec
 * names no decline event) with the operator label and no actor.
 */
export async function declineInstruction(trx: Db | undefined, staff: StaffActor, id: string, destinationVersion: number, reason: string): Promise<InstructionWithNames> {
  return inTransaction(trx, async (t) => {
    const { workspace, row } = await lockedForDecision(t, id, destinationVersion);
    if (row.status !== 'pending_verification') throw instructionErrors.notPending();
    const now = clock.now();
    const declined = await repo.markDeclined(t, row.id, destinationVersion, { declined_at: now, declined_by: staff.actorId, decline_reason: reason });
    if (!declined) throw instructionErrors.notPending();
    await recordStaffAction(t, {
      actorId: staff.actorId,
      action: 'payout_instruction.declined',
      targetType: 'payout_instruction',
      targetId: row.id,
      note: staff.note ?? null,
      details: { destination_version: destinationVersion, workspace_id: row.workspace_id, reason },
      ip: staff.ip,
    });
    await appendEvent(t, workspace.id, {
      event: 'payout_instruction.updated',
      entityType: 'payout_instruction',
      entityId: row.id,
      actorLabel: await operatorLabel(t),
      summary: `Payout instruction ${named(declined)} declined: ${reason}`,
    });
    return withNames(t, declined);
  });
}

/**
 * The workspace goes live (shared/kyb/live.ts, in the KYB approval's transaction, the
 * workspace row already updated and so locked): every instruction goes back to
 * pending_verification and its version is bumped, so staff verify again for live money and a
 * verify prepared while it was a sandbox is refused. One payout_instruction.updated event
 * per instruction that was verified.
 */
export async function unverifyForLive(trx: Db, workspaceId: string, operatorLabelText: string): Promise<number> {
  const was = await repo.unverifyAllOfWorkspace(trx, workspaceId, clock.now());
  for (const row of was) {
    await appendEvent(trx, workspaceId, {
      event: 'payout_instruction.updated',
      entityType: 'payout_instruction',
      entityId: row.id,
      actorLabel: operatorLabelText,
      summary: `Payout instruction ${named(row)} waiting for verification again: the workspace is live`,
    });
  }
  return was.length;
}

// ---- The gate money passes (release, payout worker) ---------------------------------------

/** Why a destination may not be paid. */
export type DestinationRefusal = 'not_found' | 'deleted' | 'not_verified' | 'sealed_unreadable' | 'signature_mismatch' | 'last4_mismatch';

export type DestinationCheck =
  | { ok: true; row: PayoutInstructionRow; destination: { bank_name: string; account_holder: string; account_number: string } }
  | { ok: false; reason: DestinationRefusal };

/**
 * Re-reads the instruction (any workspace; no lock of its own: the caller holds the locks
 * its move needs) and answers ok only when it exists, is not deleted, is verified, and its
 * stored signature is the version 2 signature of its CURRENT workspace, counterparty, label,
 * bank name, holder and (decrypted) number for `livemode` (true for live money, false for a
 * sandbox payout). A change of any of them after verification that did not go through the
 * API (which would have cleared the verification), a version 1 signature, or a sandbox
 * signature checked for live money answers `signature_mismatch`; a last-four that no longer
 * matches the number (what approvers were shown) answers `last4_mismatch`. The destination
 * is returned decrypted, for the payout.
 */
export async function checkDestination(trx: Db, instructionId: string, livemode: boolean): Promise<DestinationCheck> {
  const row = isUuid(instructionId) ? await repo.instructionById(trx, instructionId) : undefined;
  if (!row) return { ok: false, reason: 'not_found' };
  return checkDestinationRow(row, livemode);
}

/**
 * `checkDestination` on a row the caller read in its transaction with a lock that keeps it
 * as read (the release's rows read FOR SHARE): the same checks, no second read.
 */
export function checkDestinationRow(row: PayoutInstructionRow, livemode: boolean): DestinationCheck {
  if (row.deleted_at !== null) return { ok: false, reason: 'deleted' };
  if (row.status !== 'verified' || !row.verification_signature) return { ok: false, reason: 'not_verified' };
  const accountNumber = openNumber(row);
  if (accountNumber === null) return { ok: false, reason: 'sealed_unreadable' };
  if (!signatureMatches(destinationOf(row, accountNumber, livemode), row.verification_signature)) return { ok: false, reason: 'signature_mismatch' };
  if (last4(accountNumber) !== row.account_number_last4) return { ok: false, reason: 'last4_mismatch' };
  return { ok: true, row, destination: { bank_name: row.bank_name, account_holder: row.account_holder, account_number: accountNumber } };
}

/**
 * The workspace's live (not deleted) instructions among `ids`, locked FOR SHARE in id order
 * (a release holds them so no edit or delete commits under it; take the workspace row
 * first). Ids that name no live instruction of the workspace are simply absent: the
 * caller compares. Whether each may be paid is `checkDestination`'s answer.
 */
export async function instructionsForRelease(trx: Db, workspaceId: string, ids: string[]): Promise<PayoutInstructionRow[]> {
  return repo.instructionsForShare(trx, workspaceId, wantedIds(ids));
}

/** What `instructionsForRelease` reads, ahead of time (a keyed release sends it after the deal's lock). */
export function instructionsForReleaseReadAhead(workspaceId: string, ids: string[]): ReadAhead[] {
  return repo.instructionsForShareReadAhead(workspaceId, wantedIds(ids));
}

const wantedIds = (ids: string[]) => [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
