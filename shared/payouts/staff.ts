/**
 * Staff settle or fail a payout by hand (D10 `disbursements/:id/settle|fail`; decision
 * 0019): with no provider configured, staff pay by bank transfer and settle it; a payout
 * the bank bounced is failed with a reason (its money returns to the milestone for a
 * re-release). Refused while a worker holds the claim (it may be sending it right now);
 * a processing payout whose claim ran out (a dead run) may be settled, never failed.
 */
import { NO_SEARCH, type QueueCursor, type StaffSearch } from '../staff/queue.js';
import { clock } from '../clock.js';
import { inTransaction, type Db } from '../db.js';
import type { StaffActor } from '../actors.js';
import { isUuid } from '../ids.js';
import { operatorLabel } from '../enterprise/events.js';
import { lockWorkspace } from '../enterprise/repo.js';
import { recordStaffAction } from '../staff/audit.js';
import { payoutErrors } from './errors.js';
import { payoutGate } from './gate.js';
import { failIn, settleIn } from './outcomes.js';
import * as repo from './repo.js';
import type { DisbursementRow, PayoutListRow } from './repo.js';

async function byStaff(
  trx: Db | undefined,
  staff: StaffActor,
  id: string,
  action: 'disbursement.settled' | 'disbursement.failed',
  apply: (t: Db, d: DisbursementRow, o: { actorLabel: string; narrow: Parameters<typeof repo.move>[4] }) => Promise<DisbursementRow | undefined>,
  details: Record<string, unknown> = {},
): Promise<PayoutListRow> {
  return inTransaction(trx, async (t) => {
    const seen = isUuid(id) ? await repo.byId(t, id) : undefined;
    if (!seen) throw payoutErrors.payoutNotFound();
    await lockWorkspace(t, seen.workspace_id);
    const d = (await repo.byId(t, id, true))!;
    if (d.status === 'settled' || d.status === 'failed') throw payoutErrors.notOpen();
    const now = clock.now();
    if (d.status === 'processing' && d.lease_until !== null && d.lease_until > now) throw payoutErrors.workerSending();
    // The same condition in the compare-and-set: queued, or a claim that ran out.
    const narrow = (q: Parameters<NonNullable<Parameters<typeof repo.move>[4]>>[0]) =>
      void q.where((w) => void w.where('status', 'queued').orWhereNull('lease_until').orWhere('lease_until', '<=', now));
    const moved = await apply(t, d, { actorLabel: await operatorLabel(t), narrow });
    if (!moved) throw payoutErrors.workerSending();
    await recordStaffAction(t, { actorId: staff.actorId, action, targetType: 'disbursement', targetId: d.id, note: staff.note ?? null, details, ip: staff.ip });
    return (await repo.listedById(t, d.id))!;
  });
}

/**
 * POST /v1/admin/enterprise/disbursements/:id/settle: the money left (paid by hand). Only a
 * payout that passes the gate (gate.ts): one whose row or destination changed since it was
 * signed is refused (409 INVALID_STATE) and must be failed instead.
 */
export async function settleByStaff(trx: Db | undefined, staff: StaffActor, id: string): Promise<PayoutListRow> {
  return byStaff(trx, staff, id, 'disbursement.settled', async (t, d, o) => {
    const gate = await payoutGate(t, d);
    if (!gate.ok) throw payoutErrors.destinationRefused(gate.reason);
    return settleIn(t, d, 'settle', null, o);
  });
}

/**
 * POST /v1/admin/enterprise/disbursements/:id/fail { reason }: the money returns to the
 * milestone. Only a payout never sent to a provider (attempts 0): one that was may have been
 * paid, and failing it would free its money for a second release (409 INVALID_STATE; the
 * provider's answer, through the worker's retry with the same reference, decides it).
 */
export async function failByStaff(trx: Db | undefined, staff: StaffActor, id: string, reason: string): Promise<PayoutListRow> {
  return byStaff(
    trx,
    staff,
    id,
    'disbursement.failed',
    async (t, d, o) => {
      if (d.attempts > 0) throw payoutErrors.sentToProvider();
      return failIn(t, d, 'fail', reason, o);
    },
    { reason },
  );
}

export { OPEN_PAYOUT_STATUSES, type OpenPayoutStatus } from './repo.js';

/** The console's list: open payouts, live ones first, oldest first, one keyset page (review R4). */
export async function openPayouts(trx: Db, page: QueueCursor = {}, by: StaffSearch = NO_SEARCH, statuses: readonly repo.OpenPayoutStatus[] = repo.OPEN_PAYOUT_STATUSES) {
  return repo.openForStaff(trx, page, by, statuses);
}
