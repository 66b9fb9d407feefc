/**
 * Whose application a KYB request works on, and the moves that change it as a whole: the
 * subject's own kyb_status following its application (section 3's table), the new version
 * a change request or a restart after rejection opens, and the compare-and-set status move.
 */
import { clock } from '../clock.js';
import type { Db } from '../db.js';
import type { CounterpartyRow } from '../enterprise/counterparties-repo.js';
import { updateCounterparty } from '../enterprise/counterparties-repo.js';
import { lockWorkspace, updateWorkspace, type WorkspaceRow } from '../enterprise/repo.js';
import { kybErrors } from './errors.js';
import * as repo from './repo.js';
import type { ChangeRequest, KybApplicationRow, SubjectKey } from './repo.js';
import { APPLICATION_TRANSITIONS, subjectStatus, type ApplicationTransitionName, type SubjectType } from './states.js';

export interface KybSubject {
  type: SubjectType;
  workspace: WorkspaceRow;
  counterparty: CounterpartyRow | null;
  /** Who sent the counterparty's verification link (null for a workspace). */
  invitedBy: { id: string; name: string } | null;
}

export const keyOf = (s: KybSubject): SubjectKey => ({ workspaceId: s.workspace.id, counterpartyId: s.counterparty?.id ?? null });

export const subjectName = (s: KybSubject): string => (s.counterparty ? s.counterparty.name : s.workspace.display_name);

/** The subject's kyb_status as its application stands now; written to the workspace or counterparty row. */
export async function syncSubjectStatus(trx: Db, s: KybSubject, app: KybApplicationRow): Promise<KybSubject> {
  const now = clock.now();
  if (s.counterparty) {
    const status = subjectStatus('counterparty', app.status, app.version > 1);
    if (status === s.counterparty.kyb_status) return s;
    // Lock order: the workspace row before the counterparty's (as review, verification and counterparty edits).
    await lockWorkspace(trx, s.workspace.id);
    const updated = await updateCounterparty(trx, s.workspace.id, s.counterparty.id, { kyb_status: status, updated_at: now });
    return { ...s, counterparty: updated ?? s.counterparty };
  }
  const status = subjectStatus('account', app.status, app.version > 1);
  if (status === s.workspace.kyb_status) return s;
  await updateWorkspace(trx, s.workspace.id, { kyb_status: status, updated_at: now });
  return { ...s, workspace: { ...s.workspace, kyb_status: status } };
}

/**
 * Through a link, a counterparty's application is its holder's alone (issue 42): whoever
 * else asks is refused before anything of it is read or written. 403 INVITE_CLAIMED when
 * another user holds it; 404 INVITE_INVALID when nobody does (a fresh start cleared it
 * after the caller's link was checked: that link was revoked with it). A workspace's own
 * application has no holder: its routes decide who reads it (role and credential).
 */
export function assertHolder(s: KybSubject, app: KybApplicationRow, userId: string): void {
  if (s.counterparty === null || app.holder_id === userId) return;
  throw app.holder_id === null ? kybErrors.inviteInvalid() : kybErrors.inviteClaimed();
}

/**
 * The subject's current version, under the subject's lock (every edit and move takes it
 * first, so they run one at a time), for `userId` (its holder, for a counterparty).
 */
export async function lockCurrent(trx: Db, s: KybSubject, userId: string): Promise<KybApplicationRow> {
  await repo.lockSubject(trx, keyOf(s));
  const app = await repo.currentApplication(trx, keyOf(s), true);
  if (!app) throw kybErrors.applicationNotFound();
  assertHolder(s, app, userId);
  return app;
}

/** Opens the next version as a draft: the previous one's fields, documents and holder, with the reviewer's notes. */
export async function nextVersion(trx: Db, prev: KybApplicationRow, changeRequests: ChangeRequest[]): Promise<KybApplicationRow> {
  const carried: repo.DraftPatch = {};
  for (const k of repo.CARRIED) (carried as Record<string, unknown>)[k] = prev[k];
  const next = await repo.insertApplication(
    trx,
    { ...carried, workspace_id: prev.workspace_id, counterparty_id: prev.counterparty_id, version: prev.version + 1, change_requests: changeRequests, holder_id: prev.holder_id },
    clock.now(),
  );
  await repo.copyDocuments(trx, prev.id, next.id);
  return next;
}

/**
 * The version an edit writes to: the draft itself, or a new draft when the last decision
 * was a rejection ("saving again starts a new version"); 409 APPLICATION_LOCKED while
 * submitted or once approved.
 */
export async function editableVersion(trx: Db, s: KybSubject, userId: string): Promise<{ app: KybApplicationRow; subject: KybSubject }> {
  const current = await lockCurrent(trx, s, userId);
  if (current.status === 'draft') return { app: current, subject: s };
  if (current.status !== 'rejected') throw kybErrors.locked();
  const app = await nextVersion(trx, current, []);
  return { app, subject: await syncSubjectStatus(trx, s, app) };
}

/** Compare-and-set status move of states.ts; the subject's status follows. */
export async function transition(
  trx: Db,
  s: KybSubject,
  app: KybApplicationRow,
  name: ApplicationTransitionName,
  changes: Parameters<typeof repo.moveApplication>[3],
): Promise<{ app: KybApplicationRow; subject: KybSubject }> {
  const moved = await repo.moveApplication(trx, app.id, APPLICATION_TRANSITIONS[name], changes, clock.now());
  if (!moved) throw name === 'submit' ? kybErrors.locked() : kybErrors.notSubmitted();
  return { app: moved, subject: await syncSubjectStatus(trx, s, moved) };
}
