/**
 * E-mail about deal money to the workspace's members (enterprise spec 2 Membership
 * `notify` { email, approvals, money }): each goes to active members who opted in to e-mail
 * and to the topic, through the outbox in the change's own transaction
 * (shared/enterprise/mail.ts), so it is sent only if the change commits.
 *  - evidence submitted: finance and above who may decide (approvals), not the submitter;
 *  - a milestone released: every member (money), not the one who released it;
 *  - a payout failed: finance and above (money): its money is back on the milestone to release again.
 * A payout is named by the destination it was released to (kept on the payout, issue 42).
 */
import type { Db, ReadAhead } from '../db.js';
import { mailOptedInMembers, mailOptedInMembersReadAhead, type MemberFilter } from '../enterprise/mail.js';
import type { DealRow, MilestoneRow } from './repo.js';

type DealRef = Pick<DealRow, 'workspace_id' | 'reference' | 'title' | 'currency' | 'is_test'>;

const rupiah = (amount: number, currency: string) => `${currency} ${amount.toLocaleString('id-ID')}`;
const sandbox = (d: DealRef) => (d.is_test ? ' [sandbox]' : '');

export async function mailApprovalNeeded(trx: Db, deal: DealRef, m: Pick<MilestoneRow, 'sequence_no' | 'title' | 'amount' | 'approvals_required'>, submitterId: string): Promise<void> {
  await mailOptedInMembers(
    trx,
    deal.workspace_id,
    {
      template: 'enterprise.approval-needed',
      subject: `Approval needed${sandbox(deal)}: ${deal.reference} milestone ${m.sequence_no}`,
      text: [
        `Evidence was submitted for milestone ${m.sequence_no} "${m.title}" (${rupiah(m.amount, deal.currency)}) of deal ${deal.reference} "${deal.title}".`,
        m.approvals_required > 1 ? 'It needs two different approvers.' : 'It needs one approval.',
        'Review it in the approvals queue of your workspace.',
      ].join('\n'),
    },
    { minRole: 'finance', topic: 'approvals', exceptUserId: submitterId },
  );
}

/** A payout's destination as it was released (issue 42: kept on the payout): label, bank, holder and the masked number, never the number. */
export interface PayoutDestination {
  amount: number;
  instruction_label: string;
  destination_bank_name: string;
  destination_account_holder: string;
  destination_account_last4: string;
}

const destinationLine = (p: PayoutDestination) => `"${p.instruction_label}" (${p.destination_bank_name} …${p.destination_account_last4}, ${p.destination_account_holder})`;

export async function mailReleased(trx: Db, deal: DealRef, m: Pick<MilestoneRow, 'sequence_no' | 'title'>, amount: number, payouts: readonly PayoutDestination[], releaserId: string): Promise<void> {
  const n = payouts.length;
  await mailOptedInMembers(
    trx,
    deal.workspace_id,
    {
      template: 'enterprise.milestone-released',
      subject: `Milestone released${sandbox(deal)}: ${deal.reference} milestone ${m.sequence_no}`,
      text: [
        `Milestone ${m.sequence_no} "${m.title}" of deal ${deal.reference} "${deal.title}" was released: ${rupiah(amount, deal.currency)} in ${n} payout${n > 1 ? 's' : ''}:`,
        ...payouts.map((p) => `- ${rupiah(p.amount, deal.currency)} to ${destinationLine(p)}`),
      ].join('\n'),
    },
    releasedFilter(releaserId),
  );
}

/** Who `mailReleased` mails, read ahead of time (a keyed release: shared/payouts/release.ts). */
export function mailReleasedReadAhead(workspaceId: string, releaserId: string): ReadAhead {
  return mailOptedInMembersReadAhead(workspaceId, releasedFilter(releaserId));
}

const releasedFilter = (releaserId: string): MemberFilter => ({ topic: 'money', exceptUserId: releaserId });

export async function mailPayoutFailed(trx: Db, deal: DealRef, p: PayoutDestination, reason: string): Promise<void> {
  await mailOptedInMembers(
    trx,
    deal.workspace_id,
    {
      template: 'enterprise.payout-failed',
      subject: `Payout failed${sandbox(deal)}: ${deal.reference}`,
      text: [
        `A payout of ${rupiah(p.amount, deal.currency)} to ${destinationLine(p)} for deal ${deal.reference} "${deal.title}" failed: ${reason.slice(0, 300)}.`,
        'The money is back on the milestone; release it again to a verified payout instruction.',
      ].join('\n'),
    },
    { minRole: 'finance', topic: 'money' },
  );
}
