/**
 * Enterprise workspaces (enterprise spec 4.1, decision D7): registration, the caller's
 * workspaces and invites, and settings, here; members (members.ts), notifications
 * (notifications.ts), counterparties (counterparties.ts), workspace keys (keys.ts), the
 * event feed (events.ts) and the audit export (exports.ts) beside it, re-exported so the
 * routes import the feature from one place. Every change appends its event in the same
 * transaction (events.ts); all SQL is in the repos; nothing here knows about HTTP.
 */
import { clock } from '../clock.js';
import { db, inTransaction, type Db } from '../db.js';
import { turnstileEnabled, verifyTurnstile } from '../auth/turnstile.js';
import { byOf, type Access, type SignedIn, type WorkspaceActor } from './access.js';
import { enterpriseErrors } from './errors.js';
import { appendEvent } from './events.js';
import * as repo from './repo.js';
import type { KybApplicationRow, MemberRow, WorkspaceRow } from './repo.js';
import { inviteCutoff } from './members.js';
import type { EntityType } from './states.js';

export type { Access, SignedIn, WorkspaceActor } from './access.js';
export { listCounterparties, createCounterparty, updateCounterparty, type CounterpartyInput, type CounterpartyPatch } from './counterparties.js';
export { readFeed, type FeedQuery } from './events.js';
export { auditExport, type ExportRow } from './exports.js';
export { createKey, KEYS_PER_WORKSPACE, listKeys, revokeKey } from './keys.js';
export { acceptInvite, changeRole, inviteMember, listMembers, removeMember, updatePreferences, type Preferences } from './members.js';
export { listNotifications, markNotificationsRead } from './notifications.js';

const MAX_OWNED_DEFAULT = 3;

/** Owned workspaces per account: the operator setting `enterprise_max_owned_workspaces` (default 3). */
export async function maxOwnedWorkspaces(trx: Db): Promise<number> {
  const v = await repo.setting(trx, 'enterprise_max_owned_workspaces');
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : MAX_OWNED_DEFAULT;
}

export interface RegisterInput {
  legal_name: string;
  display_name: string;
  entity_type: EntityType;
  nib: string;
  country_code: string;
  /** The bot-check token, required when the check is on. */
  turnstile_token?: string;
}

export interface Registration {
  workspace: WorkspaceRow;
  membership: MemberRow;
  application: KybApplicationRow;
}

/**
 * The bot check (Turnstile, as consumer sign-in): when it is on, a missing token is 400
 * INVALID_BODY (field turnstile_token) and a refused one 403 TURNSTILE_FAILED. It runs
 * before the transaction opens (an outside call, ARCHITECTURE rule 7).
 */
async function checkBot(token: string | undefined, ip: string): Promise<void> {
  if (!turnstileEnabled()) return;
  if (!token) throw enterpriseErrors.turnstileRequired();
  if (!(await verifyTurnstile(token, ip))) throw enterpriseErrors.turnstileFailed();
}

/**
 * Opens a sandbox workspace (kyb not_started), the owner membership and a draft KYB
 * application (version 1, holding legal name, entity type and NIB) in one transaction.
 * A transaction-level advisory lock per user makes a second sign-up of the same user
 * that starts while this one runs answer 409 TRY_AGAIN (and keeps the owned-workspace
 * count exact).
 */
export async function register(user: SignedIn, input: RegisterInput, meta: { ip: string }): Promise<Registration> {
  await checkBot(input.turnstile_token, meta.ip);
  return db.transaction(async (trx) => {
    if (!(await repo.tryRegistrationLock(trx, user.userId))) throw enterpriseErrors.registrationRunning();
    const max = await maxOwnedWorkspaces(trx);
    if ((await repo.countOwnedWorkspaces(trx, user.userId)) >= max) throw enterpriseErrors.workspaceLimit(max);
    const now = clock.now();
    const { legal_name, display_name, entity_type, country_code, nib } = input;
    const workspace = await repo.insertWorkspace(trx, { display_name, legal_name, country_code, entity_type, created_by: user.userId }, now);
    const membership = await repo.insertMember(trx, { workspace_id: workspace.id, user_id: user.userId, role: 'owner', status: 'active', joined_at: now }, now);
    const application = await repo.insertKybDraft(trx, workspace.id, { entity_type, legal_name, country_code, nib }, now);
    await appendEvent(trx, workspace.id, {
      event: 'workspace.created',
      entityType: 'account',
      entityId: workspace.id,
      actor: byOf(user),
      summary: `Workspace ${display_name} opened in the sandbox`,
    });
    const fresh = (await repo.workspaceById(trx, workspace.id))!;
    return { workspace: fresh, membership, application };
  });
}

/** GET /me: the selected workspace (or, without one, the first joined, or null), every active membership and pending invites. */
export async function me(access: Access) {
  const memberships = await repo.activeMemberships(db, access.userId);
  let current = access.workspace && access.member ? { workspace: access.workspace, member: access.member } : null;
  if (!current && memberships[0]) {
    const first = memberships[0];
    current = { workspace: (await repo.workspaceById(db, first.workspace_id))!, member: first };
  }
  const invites = await repo.pendingInvites(db, access.userId, inviteCutoff());
  return { current, memberships, invites };
}

export interface SettingsInput {
  four_eyes_threshold?: number;
  dispute_sla_hours?: number;
  watchlist?: string[];
}

export async function updateSettings(trx: Db | undefined, actor: WorkspaceActor, input: SettingsInput): Promise<WorkspaceRow> {
  return inTransaction(trx, async (t) => {
    await repo.lockWorkspace(t, actor.workspaceId);
    const patch: Record<string, unknown> = { updated_at: clock.now() };
    if (input.four_eyes_threshold !== undefined) patch.four_eyes_threshold = input.four_eyes_threshold;
    if (input.dispute_sla_hours !== undefined) patch.dispute_sla_hours = input.dispute_sla_hours;
    if (input.watchlist !== undefined) patch.watchlist = JSON.stringify(input.watchlist);
    await repo.updateWorkspace(t, actor.workspaceId, patch);
    await appendEvent(t, actor.workspaceId, {
      event: 'settings.updated',
      entityType: 'account',
      entityId: actor.workspaceId,
      actor: byOf(actor),
      summary: `Settings changed: ${Object.keys(input).sort().join(', ')}`,
    });
    return (await repo.workspaceById(t, actor.workspaceId))!;
  });
}
