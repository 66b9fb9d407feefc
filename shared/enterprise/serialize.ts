/** Spec shapes of the enterprise workspace resources (enterprise spec section 2) and of the answers built from them. */
import type { CounterpartyRow } from './counterparties-repo.js';
import type { EventRow } from './events-repo.js';
import type { FeedPage } from './events.js';
import { dateString, type ExportRow } from './exports-repo.js';
import { isActiveKey, type KeyListRow } from './keys-repo.js';
import type { NotificationRow } from './notifications-repo.js';
import type { InviteWithNames, KybApplicationRow, MemberRow, MemberWithUser, MembershipWithName, WorkspaceRow } from './repo.js';

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

export function serializeSettings(w: WorkspaceRow) {
  return {
    four_eyes_threshold: Number(w.four_eyes_threshold),
    dispute_sla_hours: w.dispute_sla_hours,
    watchlist: w.watchlist,
    account_manager:
      w.account_manager_name || w.account_manager_email ? { name: w.account_manager_name, email: w.account_manager_email } : null,
  };
}

export function serializeAccount(w: WorkspaceRow) {
  return {
    id: w.id,
    display_name: w.display_name,
    legal_name: w.legal_name,
    country_code: w.country_code,
    kyb_status: w.kyb_status,
    risk_tier: w.risk_tier,
    is_sandbox: w.is_sandbox,
    settings: serializeSettings(w),
  };
}

export function serializeMembership(m: MemberRow) {
  return {
    id: m.id,
    role: m.role,
    joined_at: iso(m.joined_at),
    notify: { email: m.notify_email, approvals: m.notify_approvals, money: m.notify_money, reminders: m.notify_reminders },
  };
}

export function serializeMember(m: MemberWithUser) {
  return {
    id: m.id,
    // No account's name before it accepts (review R1): an invite shows only the address the admin typed.
    user: { id: m.user_id, email: m.email, full_name: m.status === 'invited' ? null : m.full_name },
    role: m.role,
    status: m.status,
    joined_at: iso(m.joined_at),
    created_at: iso(m.created_at),
  };
}

export function serializeKybDraft(a: KybApplicationRow) {
  return {
    id: a.id,
    version: a.version,
    status: a.status,
    entity_type: a.entity_type,
    legal_name: a.legal_name,
    country_code: a.country_code,
    nib: a.nib,
  };
}

export function serializeCounterparty(c: CounterpartyRow) {
  return {
    id: c.id,
    name: c.name,
    country_code: c.country_code,
    relationship: c.relationship,
    email: c.email,
    kyb_status: c.kyb_status,
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
  };
}

export function serializeNotification(n: NotificationRow) {
  return { id: n.id, type: n.type, title: n.title, body: n.body, is_read: n.is_read, read_at: iso(n.read_at), created_at: iso(n.created_at) };
}

export function serializeKey(k: KeyListRow) {
  return {
    id: k.id,
    label: k.label,
    scopes: k.scopes,
    key_preview: k.key_preview,
    created_by: { id: k.creator_id, name: k.creator_name },
    last_used_at: iso(k.last_used_at),
    created_at: iso(k.created_at),
    status: isActiveKey(k) ? 'active' : 'inactive',
  };
}

export function serializeEvent(e: EventRow) {
  return {
    seq: Number(e.seq),
    id: e.id,
    event: e.event,
    entity_type: e.entity_type,
    entity_id: e.entity_id,
    deal_id: e.deal_id,
    deal_reference: e.deal_reference,
    actor: e.actor_id ? { id: e.actor_id, name: e.actor_name } : null,
    actor_label: e.actor_label,
    amount: e.amount === null ? null : Number(e.amount),
    summary: e.summary,
    created_at: iso(e.created_at),
    livemode: e.livemode,
  };
}

/** POST /register (4.1): the new workspace, the owner membership and the draft KYB application. */
export function serializeRegistration(made: { workspace: WorkspaceRow; membership: MemberRow; application: KybApplicationRow }) {
  return {
    account: serializeAccount(made.workspace),
    membership: serializeMembership(made.membership),
    kyb_application: serializeKybDraft(made.application),
  };
}

/** GET /me (4.1). */
export function serializeMe(me: {
  current: { workspace: WorkspaceRow; member: MemberRow } | null;
  memberships: MembershipWithName[];
  invites: InviteWithNames[];
}) {
  return {
    account: me.current ? serializeAccount(me.current.workspace) : null,
    membership: me.current ? serializeMembership(me.current.member) : null,
    memberships: me.memberships.map((m) => ({ account_id: m.workspace_id, display_name: m.display_name, role: m.role })),
    invites: me.invites.map((i) => ({ member_id: i.id, display_name: i.display_name, role: i.role, invited_by_name: i.invited_by_name })),
  };
}

/** POST /invites/:memberId/accept (decision 0011). */
export function serializeAcceptedInvite(m: MemberRow) {
  return { member_id: m.id, account_id: m.workspace_id, role: m.role };
}

/** GET /api-keys: the active keys, the limit, and how many inactive keys also hold a slot (decision 0011, issue 42). */
export function serializeKeyList(list: { rows: KeyListRow[]; inactive: number }, limit: number) {
  return { items: list.rows.map(serializeKey), limit, inactive_count: list.inactive };
}

/** The answer of GET /events beside `success` (decision 0011): `data`, `next_after`, and `next_before` for order=desc. */
export function serializeFeed(page: FeedPage) {
  return {
    data: page.items.map(serializeEvent),
    next_after: page.next_after,
    ...(page.next_before !== undefined ? { next_before: page.next_before } : {}),
  };
}

/** A 202 of the audit export while it is being built (decision 0011). */
export function serializeExportPending(row: ExportRow) {
  return { export_id: row.id, status: row.status, from: dateString(row.range_from), to: dateString(row.range_to) };
}
