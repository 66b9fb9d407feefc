/** Spec shapes of the enterprise workspace resources (enterprise spec section 2). */
import type { EventRow } from './events.js';
import type { KeyListRow } from './keys.js';
import type { CounterpartyRow, KybApplicationRow, MemberRow, MemberWithUser, NotificationRow, WorkspaceRow } from './repo.js';

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
    user: { id: m.user_id, email: m.email, full_name: m.full_name },
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
    status: k.member_status === 'active' ? 'active' : 'inactive',
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
