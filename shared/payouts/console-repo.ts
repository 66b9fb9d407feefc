/**
 * SQL of the operator console's payout reads (issue 27): payout instructions waiting for
 * staff verification, and the overview counts of those and of open payouts (the rows of
 * `openForStaff` in ./repo.ts). The moves themselves are instructions.ts
 * `verifyInstruction` and staff.ts `settleByStaff` / `failByStaff`.
 */
import type { Db } from '../db.js';
import { NO_SEARCH, queuePage, type QueueCursor, type QueuePage, type StaffSearch } from '../staff/queue.js';
import { forDeal, type PayoutListRow } from './repo.js';

/** A payout instruction awaiting verification as the staff queue lists it: never the account number, only its last four digits. */
export interface PendingInstruction {
  id: string;
  workspace_id: string;
  workspace_name: string;
  workspace_is_sandbox: boolean;
  counterparty_id: string;
  counterparty_name: string;
  label: string;
  bank_name: string;
  account_holder: string;
  account_number_last4: string;
  destination_version: number;
  /** When it became pending (review R4): the queue's age. */
  pending_since: Date;
  created_at: Date;
}

/**
 * One page of the instructions of any workspace awaiting verification (not deleted): live
 * workspaces first, then sandbox ones, each oldest pending first, paged by the shared staff
 * queue cursor (shared/staff/queue.ts; review R4).
 */
/** The instruction queue's search (issue 46): the instruction's, workspace's or counterparty's id exactly, or part of the workspace's or counterparty's name, the label, the account holder or the bank. */
const SEARCHED = { ids: ['p.id', 'p.workspace_id', 'p.counterparty_id'], text: ['w.display_name', 'c.name', 'p.label', 'p.account_holder', 'p.bank_name'] } as const;

export async function pendingForStaff(trx: Db, page: QueueCursor, by: StaffSearch = NO_SEARCH): Promise<QueuePage<PendingInstruction>> {
  const q = trx('payout_instructions as p')
    .join('workspaces as w', 'w.id', 'p.workspace_id')
    .join('counterparties as c', 'c.id', 'p.counterparty_id')
    .where('p.status', 'pending_verification')
    .whereNull('p.deleted_at')
    .select(
      'p.id',
      'p.workspace_id',
      'w.display_name as workspace_name',
      'w.is_sandbox as workspace_is_sandbox',
      'p.counterparty_id',
      'c.name as counterparty_name',
      'p.label',
      'p.bank_name',
      'p.account_holder',
      'p.account_number_last4',
      'p.destination_version',
      'p.pending_since',
      'p.created_at',
    );
  return queuePage<PendingInstruction>(q, { sandbox: 'w.is_sandbox', since: 'p.pending_since', id: 'p.id' }, page, { by, columns: SEARCHED });
}

/** How many instructions await verification (the same rows as pendingForStaff). */
export async function pendingCount(trx: Db): Promise<number> {
  const [row] = await trx('payout_instructions').where({ status: 'pending_verification' }).whereNull('deleted_at').count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}

/** How many payouts are queued or processing (the same rows as repo.openForStaff). */
export async function openCount(trx: Db): Promise<number> {
  const [row] = await trx('disbursements').whereIn('status', ['queued', 'processing']).count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}

/** A deal's payouts for its console page, each with the destination it was released to (issue 42). */
export async function payoutsOfDeal(trx: Db, dealId: string): Promise<PayoutListRow[]> {
  return forDeal(trx, dealId);
}
