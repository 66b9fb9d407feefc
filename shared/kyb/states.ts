/**
 * KYB application statuses and their one table of moves (enterprise spec section 3;
 * decisions D9, D10). A move not in this table does not exist; each is a compare-and-set
 * on the version's status (`transition` in transition.ts, ARCHITECTURE rule 3).
 *
 *   draft --submit (an admin of the workspace, or the invite's user)--> submitted
 *   submitted --request_changes (staff)--> changes_requested   (and a new draft version carrying the notes)
 *   submitted --approve (staff, with a risk tier)--> approved   (a workspace goes live)
 *   submitted --reject (staff, with a reason)--> rejected       (saving again starts a new draft version)
 *
 * The subject's own status follows the application's, as the table of section 3 says
 * (`subjectStatus`).
 */
import type { KybStatus } from '../enterprise/states.js';

export const APPLICATION_STATUSES = ['draft', 'submitted', 'changes_requested', 'approved', 'rejected'] as const;
export type ApplicationStatus = (typeof APPLICATION_STATUSES)[number];

export interface ApplicationTransition {
  from: readonly ApplicationStatus[];
  to: ApplicationStatus;
}

export const APPLICATION_TRANSITIONS = {
  submit: { from: ['draft'], to: 'submitted' },
  request_changes: { from: ['submitted'], to: 'changes_requested' },
  approve: { from: ['submitted'], to: 'approved' },
  reject: { from: ['submitted'], to: 'rejected' },
} as const satisfies Record<string, ApplicationTransition>;

export type ApplicationTransitionName = keyof typeof APPLICATION_TRANSITIONS;

/** Statuses whose version may still be edited: a draft, or a rejection (saving starts a new version). */
export const EDITABLE: readonly ApplicationStatus[] = ['draft', 'rejected'];

export type SubjectType = 'account' | 'counterparty';
export type CounterpartyKybStatus = 'not_started' | 'pending' | 'verified' | 'rejected';

/**
 * The subject's kyb_status for its current application (section 3's table). A draft that
 * was never reviewed is `not_started`; a draft after a change request or a rejection is
 * `draft` for a workspace and `pending` for a counterparty (whose statuses have no draft).
 */
export function subjectStatus(type: 'account', status: ApplicationStatus, reviewedBefore: boolean): KybStatus;
export function subjectStatus(type: 'counterparty', status: ApplicationStatus, reviewedBefore: boolean): CounterpartyKybStatus;
export function subjectStatus(type: SubjectType, status: ApplicationStatus, reviewedBefore: boolean): KybStatus | CounterpartyKybStatus;
export function subjectStatus(type: SubjectType, status: ApplicationStatus, reviewedBefore: boolean): KybStatus | CounterpartyKybStatus {
  switch (status) {
    case 'draft':
      if (!reviewedBefore) return 'not_started';
      return type === 'account' ? 'draft' : 'pending';
    case 'submitted':
      return 'pending';
    case 'changes_requested':
      return type === 'account' ? 'draft' : 'pending';
    case 'approved':
      return 'verified';
    case 'rejected':
      return 'rejected';
  }
}

export const RISK_TIERS = ['low', 'standard', 'elevated', 'high'] as const;
export type RiskTier = (typeof RISK_TIERS)[number];
