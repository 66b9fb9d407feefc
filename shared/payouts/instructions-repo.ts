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

export type NewInstruction = Omit<PayoutInstructionRow, 'id' | 'status' | 'verified_at' | 'verified_by' | 'verification_signature' | 'deleted_at'>;

export async function insertInstruction(trx: Db, input: NewInstruction): Promise<PayoutInstructionRow> {
  const [row] = (await trx('payout_instructions').insert({ ...input, status: 'pending_verification' }).returning('*')) as PayoutInstructionRow[];
  return row!;
}

export type InstructionChanges = Partial<
  Pick<
    PayoutInstructionRow,
    'label' | 'bank_name' | 'account_holder' | 'account_number_sealed' | 'account_number_last4' | 'status' | 'verified_at' | 'verified_by' | 'verification_signature' | 'deleted_at'
  >
> & { updated_at: Date };

/** Changes an instruction (the caller holds its lock). */
export async function updateInstruction(trx: Db, id: string, changes: InstructionChanges): Promise<PayoutInstructionRow> {
  const [row] = (await trx('payout_instructions').where({ id }).update(changes).returning('*')) as PayoutInstructionRow[];
  return row!;
}

/** Compare-and-set pending_verification -> verified; undefined when the row was not pending (or is deleted). */
export async function markVerified(
  trx: Db,
  id: string,
  v: { verification_signature: string; verified_at: Date; verified_by: string },
): Promise<PayoutInstructionRow | undefined> {
  const [row] = (await trx('payout_instructions')
    .where({ id, status: 'pending_verification' })
    .whereNull('deleted_at')
    .update({ ...v, status: 'verified', updated_at: v.verified_at })
    .returning('*')) as PayoutInstructionRow[];
  return row;
}

/** True while a disbursement to the instruction is queued or processing (money on its way there). */
export async function hasOpenDisbursement(trx: Db, instructionId: string): Promise<boolean> {
  const row = await trx('disbursements').where({ payout_instruction_id: instructionId }).whereIn('status', ['queued', 'processing']).first<{ id: string } | undefined>('id');
  return row !== undefined;
}
