/**
 * Staff review of KYB applications and counterparty verification (decisions D9, D10):
 * request changes with per-field notes (the reviewed version becomes changes_requested
 * and a new draft version carries the notes), approve with a risk tier (a workspace goes
 * live in the same transaction, live.ts), reject with a reason. Each move is a
 * compare-and-set from `submitted`, is recorded in the staff audit and in the workspace's
 * event feed with the operator label (no staff name reaches a workspace), and e-mails the
 * people who hear the outcome: the workspace's members who opted in to e-mail, or the
 * user who holds a counterparty's application (who filled it through its link).
 */
import { NO_SEARCH, type QueueCursor, type QueuePage, type StaffSearch } from '../staff/queue.js';
import type { Knex } from 'knex';
import { clock } from '../clock.js';
import { inTransaction, type Db } from '../db.js';
import type { StaffActor } from '../actors.js';
import { isUuid } from '../ids.js';
import { recordStaffAction } from '../staff/audit.js';
import { counterpartyById, updateCounterparty, type CounterpartyRow } from '../enterprise/counterparties-repo.js';
import { appendEvent, operatorLabel } from '../enterprise/events.js';
import { mailOptedInMembers, mailUser } from '../enterprise/mail.js';
import { lockWorkspace, workspaceById } from '../enterprise/repo.js';
import { enterpriseErrors } from '../enterprise/errors.js';
import { kybErrors } from './errors.js';
import { releaseTermsReview } from '../deals/lifecycle.js';
import { goLive } from './live.js';
import * as repo from './repo.js';
import type { ChangeRequest, DocumentRow, KybApplicationRow, QueueRow } from './repo.js';
import { nextVersion, subjectName, syncSubjectStatus, transition, type KybSubject } from './subject.js';
import { APPLICATION_TRANSITIONS, type RiskTier } from './states.js';
import { outcomeMail } from './mail.js';
import { signLink } from '../uploads/links.js';
import { DOCUMENT_LINK_SECONDS } from './service.js';

export type { RiskTier } from './states.js';

export interface Reviewed {
  application: KybApplicationRow;
  documents: DocumentRow[];
  subject: KybSubject;
  /** The new draft a change request opens. */
  nextVersion: KybApplicationRow | null;
}

/** The application to review, locked, with its subject (workspace locked too: approval changes it). */
async function underReview(trx: Knex.Transaction, applicationId: string): Promise<{ app: KybApplicationRow; subject: KybSubject }> {
  if (!isUuid(applicationId)) throw kybErrors.applicationNotFound();
  const found = await repo.applicationById(trx, applicationId);
  if (!found) throw kybErrors.applicationNotFound();
  await repo.lockSubject(trx, { workspaceId: found.workspace_id, counterpartyId: found.counterparty_id });
  const app = (await repo.applicationById(trx, applicationId, true))!;
  const workspace = await lockWorkspace(trx, app.workspace_id);
  if (!workspace) throw kybErrors.applicationNotFound();
  const counterparty = app.counterparty_id ? await counterpartyById(trx, app.counterparty_id, true) : undefined;
  return { app, subject: { type: counterparty ? 'counterparty' : 'account', workspace, counterparty: counterparty ?? null, invitedBy: null } };
}

/** The staff audit row, the feed event (with the operator label, read once per move by the caller) and the outcome e-mail. */
async function record(trx: Knex.Transaction, staff: StaffActor, label: string, action: string, r: { app: KybApplicationRow; subject: KybSubject }, summary: string, details: Record<string, unknown>) {
  await recordStaffAction(trx, { actorId: staff.actorId, action, targetType: 'kyb_application', targetId: r.app.id, note: staff.note ?? null, details, ip: staff.ip });
  await appendEvent(trx, r.subject.workspace.id, {
    event: action,
    entityType: r.subject.counterparty ? 'counterparty' : 'kyb_application',
    entityId: r.subject.counterparty?.id ?? r.app.id,
    actorLabel: label,
    summary,
  });
  const mail = outcomeMail(action, r.subject, r.app);
  if (r.subject.counterparty) {
    // The reviewed version's holder: the one person who filled it through its link.
    if (r.app.holder_id) await mailUser(trx, r.app.holder_id, mail);
  } else {
    await mailOptedInMembers(trx, r.subject.workspace.id, mail);
  }
}

const decided = (staff: StaffActor) => ({ decided_at: clock.now(), decided_by: staff.actorId });

export async function requestChanges(trx: Db | undefined, staff: StaffActor, applicationId: string, changeRequests: ChangeRequest[]): Promise<Reviewed> {
  return inTransaction(trx, async (t) => {
    const found = await underReview(t, applicationId);
    const moved = await transition(t, found.subject, found.app, 'request_changes', { ...decided(staff), change_requests: changeRequests });
    const next = await nextVersion(t, moved.app, changeRequests);
    const subject = await syncSubjectStatus(t, moved.subject, next);
    await record(t, staff, await operatorLabel(t), 'kyb.changes_requested', { app: moved.app, subject }, `Changes requested on KYB application v${moved.app.version} of ${subjectName(subject)}`, {
      fields: changeRequests.map((c) => c.field),
    });
    return { application: moved.app, documents: await repo.documentsOf(t, moved.app.id), subject, nextVersion: next };
  });
}

export async function approve(trx: Db | undefined, staff: StaffActor, applicationId: string, riskTier: RiskTier): Promise<Reviewed> {
  return inTransaction(trx, async (t) => {
    const found = await underReview(t, applicationId);
    const moved = await transition(t, found.subject, found.app, 'approve', { ...decided(staff), risk_tier_assigned: riskTier });
    // The decision first in the feed, then what follows from it (the switch to live, deals released from terms review).
    const label = await operatorLabel(t);
    await record(t, staff, label, 'kyb.approved', moved, `KYB application v${moved.app.version} of ${subjectName(moved.subject)} approved (risk tier ${riskTier})`, { risk_tier: riskTier });
    let subject = moved.subject;
    if (subject.counterparty) await releaseTermsReview(t, subject.counterparty.id, label);
    else {
      await goLive(t, subject.workspace, { riskTier, legalName: moved.app.legal_name, operatorLabel: label });
      subject = { ...subject, workspace: { ...subject.workspace, is_sandbox: false, kyb_status: 'verified', risk_tier: riskTier, legal_name: moved.app.legal_name ?? subject.workspace.legal_name } };
    }
    return { application: moved.app, documents: await repo.documentsOf(t, moved.app.id), subject, nextVersion: null };
  });
}

export async function reject(trx: Db | undefined, staff: StaffActor, applicationId: string, reason: string): Promise<Reviewed> {
  return inTransaction(trx, async (t) => {
    const found = await underReview(t, applicationId);
    const moved = await transition(t, found.subject, found.app, 'reject', { ...decided(staff), decision_reason: reason });
    await record(t, staff, await operatorLabel(t), 'kyb.rejected', moved, `KYB application v${moved.app.version} of ${subjectName(moved.subject)} rejected`, {});
    return { application: moved.app, documents: await repo.documentsOf(t, moved.app.id), subject: moved.subject, nextVersion: null };
  });
}

/**
 * POST /v1/admin/enterprise/counterparties/:id/verify (D10): the operator verifies a
 * counterparty (checked outside the service, or from its submitted application, which is
 * then approved with the standard risk tier) and revokes its links. 409 INVALID_STATE when already verified.
 */
export async function verifyCounterparty(trx: Db | undefined, staff: StaffActor, counterpartyId: string): Promise<CounterpartyRow> {
  return inTransaction(trx, async (t) => {
    if (!isUuid(counterpartyId)) throw enterpriseErrors.counterpartyNotFound();
    const found = await counterpartyById(t, counterpartyId);
    if (!found) throw enterpriseErrors.counterpartyNotFound();
    // Lock order as the review's: the subject first, then the counterparty.
    await repo.lockSubject(t, { workspaceId: found.workspace_id, counterpartyId: found.id });
    const app = await repo.currentApplication(t, { workspaceId: found.workspace_id, counterpartyId: found.id }, true);
    await lockWorkspace(t, found.workspace_id);
    const cp = (await counterpartyById(t, counterpartyId, true))!;
    if (cp.kyb_status === 'verified') throw kybErrors.counterpartyVerified();
    if (app?.status === 'submitted') await repo.moveApplication(t, app.id, APPLICATION_TRANSITIONS.approve, { ...decided(staff), risk_tier_assigned: 'standard' }, clock.now());
    const updated = (await updateCounterparty(t, cp.workspace_id, cp.id, { kyb_status: 'verified', updated_at: clock.now() }))!;
    // Verification is final: its links stop working, so no later submission can lower the status again.
    await repo.revokeInvites(t, cp.id, clock.now());
    const label = await operatorLabel(t);
    await releaseTermsReview(t, cp.id, label);
    await recordStaffAction(t, { actorId: staff.actorId, action: 'counterparty.verified', targetType: 'counterparty', targetId: cp.id, note: staff.note ?? null, ip: staff.ip });
    await appendEvent(t, cp.workspace_id, {
      event: 'counterparty.verified',
      entityType: 'counterparty',
      entityId: cp.id,
      actorLabel: label,
      summary: `Counterparty ${cp.name} verified`,
    });
    return updated;
  });
}

/** The console's KYB queue: submitted applications, oldest submission first. */
export async function reviewQueue(trx: Db, page: QueueCursor = {}, by: StaffSearch = NO_SEARCH): Promise<QueuePage<QueueRow>> {
  return repo.reviewQueue(trx, page, by);
}

/** How many applications wait for review (the console's overview). */
export async function queueCount(trx: Db): Promise<number> {
  return repo.countSubmitted(trx);
}

/** A document as staff open it: the upload behind it and a link signed for the reading staff member. */
export interface StaffDocument extends DocumentRow {
  url: string;
  expires_at: Date;
}

/** The console's application page. */
export interface StaffApplication {
  application: KybApplicationRow;
  subject: KybSubject;
  documents: StaffDocument[];
  /** Every version of the subject, newest first (this one among them). */
  history: KybApplicationRow[];
}

/**
 * One application (any version, by id) for the operator console: its subject, its
 * documents each with a link signed for the staff member alone for 5 minutes (the file
 * route serves it to that user only), and every version of the subject. Identity and
 * account numbers stay sealed (the page shows their last four digits). 404 NOT_FOUND for
 * an unknown id.
 */
export async function applicationForStaff(trx: Db, applicationId: string, staffUserId: string): Promise<StaffApplication> {
  if (!isUuid(applicationId)) throw kybErrors.applicationNotFound();
  const application = await repo.applicationById(trx, applicationId);
  if (!application) throw kybErrors.applicationNotFound();
  const workspace = await workspaceById(trx, application.workspace_id);
  if (!workspace) throw kybErrors.applicationNotFound();
  const counterparty = application.counterparty_id ? ((await counterpartyById(trx, application.counterparty_id)) ?? null) : null;
  if (application.counterparty_id && !counterparty) throw kybErrors.applicationNotFound();
  const subject: KybSubject = { type: counterparty ? 'counterparty' : 'account', workspace, counterparty, invitedBy: null };
  // As signLink counts: whole seconds.
  const expiresAt = new Date((Math.floor(clock.nowMs() / 1000) + DOCUMENT_LINK_SECONDS) * 1000);
  const documents = (await repo.documentsOf(trx, application.id)).map((d) => ({ ...d, url: signLink(d.stored_name, staffUserId, DOCUMENT_LINK_SECONDS), expires_at: expiresAt }));
  const history = await repo.versions(trx, { workspaceId: application.workspace_id, counterpartyId: application.counterparty_id });
  return { application, subject, documents, history };
}
