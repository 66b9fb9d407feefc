/**
 * Payout instructions for tests (enterprise spec 4.6; D7, D10): made through the service
 * as the workspace's owner would make them, and verified through the staff service, so
 * a verified instruction carries a real signature.
 */
import { db } from '../../shared/db.js';
import type { WorkspaceActor } from '../../shared/enterprise/access.js';
import type { MemberRow, WorkspaceRow } from '../../shared/enterprise/repo.js';
import { createInstruction as create, verifyInstruction, type InstructionWithNames } from '../../shared/payouts/instructions.js';
import { createUser } from './users.js';

export interface InstructionOptions {
  verified?: boolean;
  label?: string;
  bankName?: string;
  accountHolder?: string;
  /** Digits only (default a fresh 10-digit number). */
  accountNumber?: string;
  /** Who creates it (default the workspace's owner). */
  actor?: WorkspaceActor;
  /** The staff member who verifies it (default a new admin). */
  staffId?: string;
}

export interface MadeInstruction extends InstructionWithNames {
  /** The account number in clear (the tests' own knowledge; the service never answers it). */
  accountNumber: string;
}

let seq = 0;

/** The workspace's owner as the services take their caller. */
export async function ownerActor(workspaceId: string): Promise<WorkspaceActor> {
  const m = await db('workspace_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where({ 'm.workspace_id': workspaceId, 'm.role': 'owner', 'm.status': 'active' })
    .orderBy('m.created_at')
    .first<(MemberRow & { full_name: string }) | undefined>('m.*', 'u.full_name');
  if (!m) throw new Error(`workspace ${workspaceId} has no active owner`);
  return { workspaceId, memberId: m.id, userId: m.user_id, userName: m.full_name, role: m.role };
}

let staff: string | null = null;

/** A platform admin for verifications (one per test: the database is emptied between tests). */
async function staffId(): Promise<string> {
  if (staff && (await db('users').where({ id: staff }).first('id'))) return staff;
  staff = (await createUser({ role: 'admin', fullName: 'Staff Payouts' })).user.id;
  return staff;
}

/** A payout instruction of `workspace` for `counterpartyId`: pending_verification, or verified by staff with `verified`. */
export async function createInstruction(workspace: Pick<WorkspaceRow, 'id'>, counterpartyId: string, options: InstructionOptions = {}): Promise<MadeInstruction> {
  seq += 1;
  const accountNumber = options.accountNumber ?? String(1_000_000_000 + seq * 7919);
  const actor = options.actor ?? (await ownerActor(workspace.id));
  let row = await create(undefined, actor, {
    label: options.label ?? `Rekening ${seq}`,
    counterparty_id: counterpartyId,
    bank_name: options.bankName ?? 'BCA',
    account_holder: options.accountHolder ?? 'PT Pemasok Jaya',
    account_number: accountNumber,
  });
  if (options.verified) row = await verifyInstruction(undefined, { actorId: options.staffId ?? (await staffId()), ip: '127.0.0.1', note: 'checked' }, row.id, row.destination_version);
  return { ...row, accountNumber };
}
