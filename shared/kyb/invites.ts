/**
 * Counterparty verification links (enterprise spec 4.2; decision 0017 and its issue 42
 * addendum). An admin makes a link for one counterparty: a signed token
 * `<invite id>.<HMAC>` (the HMAC key is derived from ENCRYPTION_KEY, so a forged or altered
 * token fails before any lookup) whose row decides the rest: a newer link revokes the
 * older ones, a link expires after INVITE_TTL_DAYS, and the first signed-in user to open it
 * claims it and becomes the holder of the counterparty's application, the only one who
 * reads or writes it through a link (subject.ts assertHolder). A re-issued link is bound to
 * that holder at creation; `fresh_start` instead gives the next claimant an application
 * with nothing of the holder's in it. The claimant runs the application through the same
 * service as a workspace's own (service.ts); it opens as version 1 with the first link.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { db, inTransaction, type Db } from '../db.js';
import { errors } from '../errors.js';
import { isUuid } from '../ids.js';
import { queueMail } from '../mail/service.js';
import type { WorkspaceActor } from '../enterprise/access.js';
import { counterpartyById } from '../enterprise/counterparties-repo.js';
import { enterpriseErrors } from '../enterprise/errors.js';
import { appendEvent } from '../enterprise/events.js';
import { lockWorkspace, workspaceById, type WorkspaceRow } from '../enterprise/repo.js';
import type { CounterpartyRow } from '../enterprise/counterparties-repo.js';
import { kybErrors } from './errors.js';
import { inviteMail } from './mail.js';
import * as repo from './repo.js';
import type { InviteRow, KybApplicationRow } from './repo.js';
import { syncSubjectStatus, type KybSubject } from './subject.js';

export const INVITE_TTL_DAYS = 7;
/**
 * Links a workspace may make in any 24 hours (issue 42): each may e-mail an address the
 * workspace typed, so the cap bounds what one workspace can send. Counted from the links'
 * own rows (durable, shared by every API copy), under the workspace's lock.
 */
export const INVITES_PER_WORKSPACE_PER_DAY = 20;
const DAY_MS = 86_400_000;
/** Where the dashboard opens a link (the API route is /v1/kyb/invite/:token). */
export const INVITE_PATH = '/kyb/invite/';

const secret = (): Buffer => createHmac('sha256', config.encryptionKey).update('kyb-invites').digest();
const mac = (id: string): Buffer => createHmac('sha256', secret()).update(`kyb-invite.${id}`).digest();

export const tokenOf = (inviteId: string): string => `${inviteId}.${mac(inviteId).toString('base64url')}`;

/** The invite id a well-formed, authentic token names; undefined for anything else. */
function inviteIdOf(token: string): string | undefined {
  const m = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m || !isUuid(m[1]!)) return undefined;
  // Compared as text, not as decoded bytes: the last character's two low bits are padding
  // that base64url decoding drops, so a byte comparison would take four spellings of one MAC.
  const given = Buffer.from(m[2]!, 'latin1');
  const expected = Buffer.from(mac(m[1]!).toString('base64url'), 'latin1');
  return given.length === expected.length && timingSafeEqual(given, expected) ? m[1] : undefined;
}

export interface MadeInvite {
  invite: InviteRow;
  token: string;
  url: string;
}

export interface InviteOptions {
  /**
   * Give the next claimant a fresh application instead of binding the link to the
   * application's holder: nothing of what the holder entered (people and their numbers,
   * bank, documents, company details) is carried, and none of it is readable through any link.
   */
  freshStart?: boolean;
}

/** 429 RATE_LIMITED with Retry-After once the workspace made INVITES_PER_WORKSPACE_PER_DAY links in the last 24 hours. */
async function assertUnderDailyCap(trx: Db, workspaceId: string, now: Date): Promise<void> {
  const nth = await repo.nthNewestInviteSince(trx, workspaceId, new Date(now.getTime() - DAY_MS), INVITES_PER_WORKSPACE_PER_DAY);
  if (!nth) return;
  // A place frees when the limit-th newest link (the oldest that keeps the count at the limit) is a day old.
  const freesAt = nth.getTime() + DAY_MS;
  throw errors.rateLimited(Math.max(1, Math.ceil((freesAt - now.getTime()) / 1000)), 'RATE_LIMITED', {
    en: `A workspace can send at most ${INVITES_PER_WORKSPACE_PER_DAY} verification links a day; try again later`,
    id: `Satu workspace paling banyak mengirim ${INVITES_PER_WORKSPACE_PER_DAY} tautan verifikasi sehari; coba lagi nanti`,
  });
}

/**
 * A fresh start of the counterparty's application: a draft is cleared in place (its
 * documents go, their files are purged once no version holds them); a decided version
 * stays as staff decided it and version n+1 opens empty. Nobody holds the result until
 * the new link is claimed. Refused while staff review a submission (409 APPLICATION_LOCKED).
 */
async function freshStart(trx: Db, workspace: WorkspaceRow, cp: CounterpartyRow, app: KybApplicationRow, now: Date): Promise<KybApplicationRow> {
  const start = { legal_name: cp.name, country_code: cp.country_code };
  if (app.status === 'submitted') throw kybErrors.underReview();
  if (app.status === 'draft') {
    for (const doc of await repo.documentsOf(trx, app.id)) {
      const uploadId = await repo.deleteDocument(trx, app.id, doc.id);
      if (uploadId) await repo.releaseUploadIfUnused(trx, uploadId);
    }
    const cleared = await repo.clearDraft(trx, app.id, start, now);
    if (!cleared) throw kybErrors.changed();
    return cleared;
  }
  const next = await repo.insertApplication(trx, { workspace_id: app.workspace_id, counterparty_id: cp.id, version: app.version + 1, ...start }, now);
  await syncSubjectStatus(trx, { type: 'counterparty', workspace, counterparty: cp, invitedBy: null }, next);
  return next;
}

/**
 * POST /v1/enterprise/counterparties/:id/kyb-invite: a new link (older ones revoked),
 * bound to the application's holder when someone holds it, or for a fresh start
 * (`options.freshStart`) open to the next claimant; e-mailed to the counterparty when it
 * has an address. At most INVITES_PER_WORKSPACE_PER_DAY a day per workspace.
 */
export async function createInvite(trx: Db | undefined, actor: WorkspaceActor, counterpartyId: string, options: InviteOptions = {}): Promise<MadeInvite> {
  return inTransaction(trx, async (t) => {
    const found = isUuid(counterpartyId) ? await counterpartyById(t, counterpartyId) : undefined;
    if (!found || found.workspace_id !== actor.workspaceId) throw enterpriseErrors.counterpartyNotFound();
    const now = clock.now();
    const key = { workspaceId: actor.workspaceId, counterpartyId: found.id };
    // The subject's lock serialises links, claims, edits and review of one counterparty (two first links: one version 1).
    await repo.lockSubject(t, key);
    let app = await repo.currentApplication(t, key, true);
    // The workspace's lock also serialises its links for the daily count.
    const workspace = await lockWorkspace(t, actor.workspaceId);
    if (!workspace) throw enterpriseErrors.noWorkspace();
    const cp = (await counterpartyById(t, found.id, true))!;
    if (cp.kyb_status === 'verified') throw kybErrors.counterpartyVerified();
    await assertUnderDailyCap(t, actor.workspaceId, now);
    if (!app) {
      app = await repo.insertApplication(t, { workspace_id: actor.workspaceId, counterparty_id: cp.id, version: 1, legal_name: cp.name, country_code: cp.country_code }, now);
    } else if (options.freshStart) {
      app = await freshStart(t, workspace, cp, app, now);
    }
    await repo.revokeInvites(t, cp.id, now);
    const invite = await repo.insertInvite(
      t,
      { workspace_id: actor.workspaceId, counterparty_id: cp.id, created_by: actor.userId, expires_at: new Date(now.getTime() + INVITE_TTL_DAYS * DAY_MS) },
      app.holder_id,
      now,
    );
    const token = tokenOf(invite.id);
    const url = `${config.publicBaseUrl}${INVITE_PATH}${token}`;
    await appendEvent(t, actor.workspaceId, {
      event: 'counterparty.kyb_invited',
      entityType: 'counterparty',
      entityId: cp.id,
      actor: { id: actor.userId, name: actor.userName },
      summary: `Verification link sent for counterparty ${cp.name}${options.freshStart ? ' (fresh application)' : ''}`,
    });
    if (cp.email) {
      const mail = inviteMail(workspace.display_name, url, INVITE_TTL_DAYS);
      await queueMail(t, { to: cp.email, template: mail.template, subject: mail.subject, text: mail.text });
    }
    return { invite, token, url };
  });
}

/**
 * The counterparty behind a link, for its user: 404 INVITE_INVALID (malformed, forged,
 * unknown or revoked), 410 INVITE_EXPIRED, 403 INVITE_CLAIMED (another user opened it
 * first, or the link is bound to the application's holder and this is someone else). The
 * first user to open a live, unbound link claims it and becomes the holder of the
 * application (a compare-and-set: of two users racing, one wins and the other is refused).
 */
export async function openInvite(token: string, user: { userId: string }): Promise<KybSubject> {
  const id = inviteIdOf(token);
  const invite = id ? await repo.inviteById(db, id) : undefined;
  if (!invite || invite.revoked_at) throw kybErrors.inviteInvalid();
  if (invite.expires_at.getTime() <= clock.nowMs()) throw kybErrors.inviteExpired();
  if (invite.claimed_by === null) await claim(invite, user.userId);
  else if (invite.claimed_by !== user.userId) throw kybErrors.inviteClaimed();
  const [workspace, counterparty] = await Promise.all([workspaceById(db, invite.workspace_id), counterpartyById(db, invite.counterparty_id)]);
  if (!workspace || !counterparty) throw kybErrors.inviteInvalid();
  return { type: 'counterparty', workspace, counterparty, invitedBy: { id: invite.created_by, name: invite.inviter_name } };
}

/**
 * The first claim of an unbound link, under the subject's lock (as links and fresh starts
 * take it): the link becomes the user's and so does the application nobody holds yet.
 * An application someone else holds is never handed over by a claim (403 INVITE_CLAIMED,
 * the claim undone).
 */
async function claim(invite: InviteRow, userId: string): Promise<void> {
  await inTransaction(undefined, async (t) => {
    const key = { workspaceId: invite.workspace_id, counterpartyId: invite.counterparty_id };
    await repo.lockSubject(t, key);
    if (!(await repo.claimInvite(t, invite.id, userId, clock.now()))) {
      const again = await repo.inviteById(t, invite.id);
      if (!again || again.revoked_at) throw kybErrors.inviteInvalid();
      if (again.claimed_by !== userId) throw kybErrors.inviteClaimed();
      return;
    }
    const app = await repo.currentApplication(t, key, true);
    if (!app || app.holder_id === userId) return;
    if (app.holder_id !== null || !(await repo.setHolder(t, app.id, userId))) throw kybErrors.inviteClaimed();
  });
}
