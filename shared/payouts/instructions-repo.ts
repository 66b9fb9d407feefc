/** SQL of payout instructions (enterprise spec 4.6; D7, D10; table payout_instructions). */
import { db, readAheadOf, takeReadAhead, type Db, type ReadAhead } from '../db.js';
import type { InstructionStatus } from './instruction-schemas.js';

export interface PayoutInstructionRow {
  id: string;
  workspace_id: string;
  counterparty_id: string;
  label: string;
  bank_name: string;
  account_holder: string;
  /** AES-256-GCM (shared/crypto.ts `encryptSecret`); never leaves the service. */
  account_number_sealed: string;
  account_number_last4: string;
  status: InstructionStatus;
  verified_at: Date | null;
  verified_by: string | null;
  verification_signature: string | null;
  /** Bumped on every edit (the label included) and when the workspace goes live: staff verification names the one it was shown. */
  destination_version: number;
  /** When it last became pending_verification (create, an edit, the workspace going live): the staff queue's age (review R4). */
  pending_since: Date;
  /** Staff declined it (status `declined`, review R4): when, who, and why (the workspace sees the reason). */
  declined_at: Date | null;
  declined_by: string | null;
  decline_reason: string | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

/** An instruction with the names its answer shows (counterparty and creator). */
export interface InstructionWithNames extends PayoutInstructionRow {
  counterparty_name: string;
  creator_name: string;
}

const withNames = (trx: Db) =>
  trx('payout_instructions as p')
    .join('counterparties as c', 'c.id', 'p.counterparty_id')
    .join('users as u', 'u.id', 'p.created_by')
    .select('p.*', 'c.name as counterparty_name', 'u.full_name as creator_name');

export interface ListFilter {
  counterpartyId?: string;
  status?: InstructionStatus;
  page: number;
  limit: number;
}

/** One page of the workspace's live (not deleted) instructions, newest first, with the total. */
export async function listInstructions(trx: Db, workspaceId: string, f: ListFilter): Promise<{ rows: InstructionWithNames[]; total: number }> {
  const filter: Record<string, string> = { 'p.workspace_id': workspaceId };
  if (f.counterpartyId !== undefined) filter['p.counterparty_id'] = f.counterpartyId;
  if (f.status !== undefined) filter['p.status'] = f.status;
  const [countRow] = await trx('payout_instructions as p').where(filter).whereNull('p.deleted_at').count<{ count: string }[]>('* as count');
  const rows = (await withNames(trx)
    .where(filter)
    .whereNull('p.deleted_at')
    .orderBy([{ column: 'p.created_at', order: 'desc' }, { column: 'p.id', order: 'desc' }])
    .limit(f.limit)
    .offset((f.page - 1) * f.limit)) as InstructionWithNames[];
  return { rows, total: Number(countRow?.count ?? 0) };
}

/** A live instruction of the workspace with its names; undefined when none (another workspace's, or deleted). */
export async function instructionWithNames(trx: Db, workspaceId: string, id: string): Promise<InstructionWithNames | undefined> {
  return (await withNames(trx).where({ 'p.id': id, 'p.workspace_id': workspaceId }).whereNull('p.deleted_at').first()) as InstructionWithNames | undefined;
}

/** A live instruction of the workspace, locked FOR UPDATE (take the workspace row first). */
export async function lockInstruction(trx: Db, workspaceId: string, id: string): Promise<PayoutInstructionRow | undefined> {
  return (await trx('payout_instructions').where({ id, workspace_id: workspaceId }).whereNull('deleted_at').forUpdate().first()) as PayoutInstructionRow | undefined;
}

/** One instruction by id in any workspace, deleted ones included (staff, the payout checks); locked FOR UPDATE when `lock`. */
export async function instructionById(trx: Db, id: string, lock = false): Promise<PayoutInstructionRow | undefined> {
  const q = trx('payout_instructions').where({ id }).first();
  if (lock) q.forUpdate();
  return (await q) as PayoutInstructionRow | undefined;
}

/** Live instructions of the workspace among `ids`, locked FOR SHARE, in id order (taken from `instructionsForShareReadAhead` when a keyed release sent it). */
export async function instructionsForShare(trx: Db, workspaceId: string, ids: string[]): Promise<PayoutInstructionRow[]> {
  if (ids.length === 0) return [];
  return takeReadAhead<PayoutInstructionRow>(trx, forShareKey(workspaceId, ids)) ?? ((await forShareQuery(trx, workspaceId, ids)) as PayoutInstructionRow[]);
}

/** `instructionsForShare` ahead of time, for a keyed release (shared/payouts/release.ts); none for no ids. */
export function instructionsForShareReadAhead(workspaceId: string, ids: string[]): ReadAhead[] {
  return ids.length === 0 ? [] : [readAheadOf(forShareKey(workspaceId, ids), forShareQuery(db, workspaceId, ids))];
}

const forShareKey = (workspaceId: string, ids: string[]) => `instructions-for-share:${workspaceId}:${ids.join(',')}`;
const forShareQuery = (trx: Db, workspaceId: string, ids: string[]) =>
  trx('payout_instructions').where({ workspace_id: workspaceId }).whereIn('id', ids).whereNull('deleted_at').orderBy('id').forShare();

export type NewInstruction = Omit<
  PayoutInstructionRow,
  'id' | 'status' | 'verified_at' | 'verified_by' | 'verification_signature' | 'destination_version' | 'deleted_at' | 'declined_at' | 'declined_by' | 'decline_reason'
>;

export async function insertInstruction(trx: Db, input: NewInstruction): Promise<PayoutInstructionRow> {
  const [row] = (await trx('payout_instructions').insert({ ...input, status: 'pending_verification' }).returning('*')) as PayoutInstructionRow[];
  return row!;
}

export type InstructionChanges = Partial<
  Pick<
    PayoutInstructionRow,
    | 'label'
    | 'bank_name'
    | 'account_holder'
    | 'account_number_sealed'
    | 'account_number_last4'
    | 'status'
    | 'verified_at'
    | 'verified_by'
    | 'verification_signature'
    | 'deleted_at'
    | 'pending_since'
    | 'declined_at'
    | 'declined_by'
    | 'decline_reason'
  >
> & { updated_at: Date };

/** Changes an instruction (the caller holds its lock); `bumpVersion` for an edit of what it shows (decision 0019, issue 42). */
export async function updateInstruction(trx: Db, id: string, changes: InstructionChanges, bumpVersion = false): Promise<PayoutInstructionRow> {
  const set = bumpVersion ? { ...changes, destination_version: trx.raw('destination_version + 1') } : changes;
  const [row] = (await trx('payout_instructions').where({ id }).update(set).returning('*')) as PayoutInstructionRow[];
  return row!;
}

/**
 * Compare-and-set pending_verification -> verified of the version staff were shown;
 * undefined when the row was not pending, is deleted, or is at another version.
 */
export async function markVerified(
  trx: Db,
  id: string,
  destinationVersion: number,
  v: { verification_signature: string; verified_at: Date; verified_by: string },
): Promise<PayoutInstructionRow | undefined> {
  const [row] = (await trx('payout_instructions')
    .where({ id, status: 'pending_verification', destination_version: destinationVersion })
    .whereNull('deleted_at')
    .update({ ...v, status: 'verified', updated_at: v.verified_at })
    .returning('*')) as PayoutInstructionRow[];
  return row;
}

/**
 * Compare-and-set pending_verification -> declined of the version staff were shown (review
 * R4); undefined when the row was not pending, is deleted, or is at another version.
 */
export async function markDeclined(
  trx: Db,
  id: string,
  destinationVersion: number,
  d: { declined_at: Date; declined_by: string; decline_reason: string },
): Promise<PayoutInstructionRow | undefined> {
  const [row] = (await trx('payout_instructions')
    .where({ id, status: 'pending_verification', destination_version: destinationVersion })
    .whereNull('deleted_at')
    .update({ ...d, status: 'declined', updated_at: d.declined_at })
    .returning('*')) as PayoutInstructionRow[];
  return row;
}

/** The workspace's instructions not verified (pending_verification or declined, not deleted): what the per-workspace cap counts (review R4). */
export async function unverifiedCount(trx: Db, workspaceId: string): Promise<number> {
  const [row] = await trx('payout_instructions')
    .where({ workspace_id: workspaceId })
    .whereIn('status', ['pending_verification', 'declined'])
    .whereNull('deleted_at')
    .count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}

/**
 * A workspace going live (shared/kyb/live.ts): every verified instruction back to
 * pending_verification with its signature cleared (pending again from `now`), and every
 * live instruction's version bumped (a verify or decline prepared while it was a sandbox is
 * refused). A declined one stays declined (staff refused that destination; going live does
 * not undo it). Answers the rows that were verified.
 */
export async function unverifyAllOfWorkspace(trx: Db, workspaceId: string, now: Date): Promise<PayoutInstructionRow[]> {
  const before = (await trx('payout_instructions')
    .where({ workspace_id: workspaceId, status: 'verified' })
    .whereNull('deleted_at')
    .orderBy('id')
    .forUpdate()
    .select('*')) as PayoutInstructionRow[];
  await trx('payout_instructions')
    .where({ workspace_id: workspaceId, status: 'verified' })
    .whereNull('deleted_at')
    .update({
      status: 'pending_verification',
      verification_signature: null,
      verified_at: null,
      verified_by: null,
      pending_since: now,
      destination_version: trx.raw('destination_version + 1'),
      updated_at: now,
    });
  await trx('payout_instructions')
    .where({ workspace_id: workspaceId })
    .whereIn('status', ['pending_verification', 'declined'])
    .whereNull('deleted_at')
    .whereNotIn(
      'id',
      before.map((r) => r.id),
    )
    .update({ destination_version: trx.raw('destination_version + 1'), updated_at: now });
  return before;
}

/** An instruction with its names and its workspace's, for staff (any workspace; deleted ones included). */
export interface InstructionForStaff extends InstructionWithNames {
  workspace_name: string;
  workspace_is_sandbox: boolean;
}

export async function instructionForStaff(trx: Db, id: string): Promise<InstructionForStaff | undefined> {
  return withNames(trx)
    .join('workspaces as w', 'w.id', 'p.workspace_id')
    .where('p.id', id)
    .first<InstructionForStaff | undefined>('w.display_name as workspace_name', 'w.is_sandbox as workspace_is_sandbox');
}

/** True while a disbursement to the instruction is queued or processing (money on its way there). */
export async function hasOpenDisbursement(trx: Db, instructionId: string): Promise<boolean> {
  const row = await trx('disbursements').where({ payout_instruction_id: instructionId }).whereIn('status', ['queued', 'processing']).first<{ id: string } | undefined>('id');
  return row !== undefined;
}
