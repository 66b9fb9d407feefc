/**
 * Counterparty verification links (enterprise spec 4.2; decision 0017). An admin makes a
 * link for one counterparty: a signed token `<invite id>.<HMAC>` (the HMAC key is derived
 * from ENCRYPTION_KEY, so a forged or altered token fails before any lookup) whose row
 * decides the rest: a newer link revokes the older ones, a link expires after
 * INVITE_TTL_DAYS, and the first signed-in user to open it claims it. The claimant then
 * runs the counterparty's application through the same service as a workspace's own
 * (service.ts); the counterparty's application opens as version 1 with the first link.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { db, inTransaction, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { queueMail } from '../mail/service.js';
import type { WorkspaceActor } from '../enterprise/access.js';
import { counterpartyById } from '../enterprise/counterparties-repo.js';
import { enterpriseErrors } from '../enterprise/errors.js';
import { appendEvent } from '../enterprise/events.js';
import { lockWorkspace, workspaceById } from '../enterprise/repo.js';
import { kybErrors } from './errors.js';
import * as repo from './repo.js';
import type { InviteRow } from './repo.js';
import type { KybSubject } from './subject.js';

export const INVITE_TTL_DAYS = 7;
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

/** POST /v1/enterprise/counterparties/:id/kyb-invite: a new link (older ones revoked); e-mailed to the counterparty when it has an address. */
export async function createInvite(trx: Db | undefined, actor: WorkspaceActor, counterpartyId: string): Promise<MadeInvite> {
  return inTransaction(trx, async (t) => {
    const found = isUuid(counterpartyId) ? await counterpartyById(t, counterpartyId) : undefined;
    if (!found || found.workspace_id !== actor.workspaceId) throw enterpriseErrors.counterpartyNotFound();
    const now = clock.now();
    const key = { workspaceId: actor.workspaceId, counterpartyId: found.id };
    // The subject's lock serialises links, edits and review of one counterparty (two first links: one version 1).
    await repo.lockSubject(t, key);
    const app = await repo.currentApplication(t, key, true);
    await lockWorkspace(t, actor.workspaceId);
    const cp = (await counterpartyById(t, found.id, true))!;
    if (cp.kyb_status === 'verified') throw kybErrors.counterpartyVerified();
    if (!app) {
      await repo.insertApplication(t, { workspace_id: actor.workspaceId, counterparty_id: cp.id, version: 1, legal_name: cp.name, country_code: cp.country_code }, now);
    }
    await repo.revokeInvites(t, cp.id, now);
    const invite = await repo.insertInvite(
      t,
      { workspace_id: actor.workspaceId, counterparty_id: cp.id, created_by: actor.userId, expires_at: new Date(now.getTime() + INVITE_TTL_DAYS * 86_400_000) },
      now,
    );
    const token = tokenOf(invite.id);
    const url = `${config.publicBaseUrl}${INVITE_PATH}${token}`;
    await appendEvent(t, actor.workspaceId, {
      event: 'counterparty.kyb_invited',
      entityType: 'counterparty',
      entityId: cp.id,
      actor: { id: actor.userId, name: actor.userName },
      summary: `Verification link sent for counterparty ${cp.name}`,
    });
    if (cp.email) {
      const ws = await workspaceById(t, actor.workspaceId);
      const by = ws?.display_name ?? 'A workspace';
      await queueMail(t, {
        to: cp.email,
        template: 'kyb-invite',
        subject: `Verifikasi bisnis untuk ${by} / Business verification for ${by}`,
        text: [
          `${by} meminta ${cp.name} menyelesaikan verifikasi bisnis (KYB). Buka tautan ini (berlaku ${INVITE_TTL_DAYS} hari): ${url}`,
          '',
          `${by} asks ${cp.name} to complete business verification (KYB). Open this link (valid for ${INVITE_TTL_DAYS} days): ${url}`,
        ].join('\n'),
      });
    }
    return { invite, token, url };
  });
}

/**
 * The counterparty behind a link, for its user: 404 INVITE_INVALID (malformed, forged,
 * unknown or revoked), 410 INVITE_EXPIRED, 403 INVITE_CLAIMED (another user opened it
 * first). The first user to open a live link claims it (a compare-and-set: of two users
 * racing, one wins and the other is refused).
 */
export async function openInvite(token: string, user: { userId: string }): Promise<KybSubject> {
  const id = inviteIdOf(token);
  const invite = id ? await repo.inviteById(db, id) : undefined;
  if (!invite || invite.revoked_at) throw kybErrors.inviteInvalid();
  if (invite.expires_at.getTime() <= clock.nowMs()) throw kybErrors.inviteExpired();
  if (invite.claimed_by === null && !(await repo.claimInvite(db, invite.id, user.userId, clock.now()))) {
    const again = await repo.inviteById(db, invite.id);
    if (!again || again.revoked_at) throw kybErrors.inviteInvalid();
    if (again.claimed_by !== user.userId) throw kybErrors.inviteClaimed();
  } else if (invite.claimed_by !== null && invite.claimed_by !== user.userId) {
    throw kybErrors.inviteClaimed();
  }
  const [workspace, counterparty] = await Promise.all([workspaceById(db, invite.workspace_id), counterpartyById(db, invite.counterparty_id)]);
  if (!workspace || !counterparty) throw kybErrors.inviteInvalid();
  return { type: 'counterparty', workspace, counterparty, invitedBy: { id: invite.created_by, name: invite.inviter_name } };
}
