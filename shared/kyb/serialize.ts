/**
 * Spec shapes of KYB (enterprise spec 2 "KYB application" and its GET wrapper, 4.2).
 * Sealed numbers never leave: people and bank show `*_last4` and `has_*` only.
 */
import type { CounterpartyRow } from '../enterprise/counterparties-repo.js';
import { serializeCounterparty } from '../enterprise/serialize.js';
import type { Reviewed } from './review.js';
import type { DocumentRow, InviteRow, KybApplicationRow, QueueRow, StoredPerson } from './repo.js';
import type { KybView } from './service.js';
import { progressOf, REVIEW_DAYS, reviewDueBy, slotsOf } from './slots.js';
import { subjectName, type KybSubject } from './subject.js';

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

function serializePerson(p: StoredPerson) {
  return {
    id: p.id,
    full_name: p.full_name,
    position: p.position,
    roles: p.roles,
    id_type: p.id_type,
    id_number_last4: p.id_number_last4,
    has_id_number: p.id_number_sealed !== null,
    nationality: p.nationality,
    ownership_pct: p.ownership_pct,
  };
}

export function serializeDocument(d: DocumentRow) {
  return {
    id: d.id,
    doc_type: d.doc_type,
    person_id: d.person_id,
    slot_key: d.person_id ? `${d.doc_type}:${d.person_id}` : d.doc_type,
    mime: d.mime,
    size_bytes: d.size,
    sha256: d.sha256,
    created_at: iso(d.created_at),
  };
}

export function serializeApplication(a: KybApplicationRow, documents: DocumentRow[]) {
  return {
    id: a.id,
    version: a.version,
    status: a.status,
    entity_type: a.entity_type,
    legal_name: a.legal_name,
    country_code: a.country_code,
    nib: a.nib,
    npwp: a.npwp,
    address: a.address,
    industry: a.industry,
    monthly_volume: a.monthly_volume,
    website: a.website,
    bank: {
      bank_name: a.bank_name,
      bank_account_holder: a.bank_account_holder,
      account_number_last4: a.bank_account_last4,
      has_account_number: a.bank_account_number_sealed !== null,
    },
    people: a.people.map(serializePerson),
    documents: documents.map(serializeDocument),
    change_requests: a.change_requests,
    submitted_at: iso(a.submitted_at),
    decided_at: iso(a.decided_at),
    decision_reason: a.decision_reason,
    risk_tier_assigned: a.risk_tier_assigned,
    updated_at: iso(a.updated_at),
  };
}

const kybStatusOf = (s: KybSubject) => (s.counterparty ? s.counterparty.kyb_status : s.workspace.kyb_status);

function serializeSubject(s: KybSubject) {
  const w = s.workspace;
  return {
    type: s.type,
    id: s.counterparty?.id ?? w.id,
    name: subjectName(s),
    kyb_status: kybStatusOf(s),
    is_sandbox: s.counterparty ? null : w.is_sandbox,
    account_manager: w.account_manager_name || w.account_manager_email ? { name: w.account_manager_name, email: w.account_manager_email } : null,
    invited_by: s.invitedBy,
  };
}

/** GET /v1/enterprise/kyb and /v1/kyb/invite/:token, and every edit's answer: the full view or the status view (4.2). */
export function serializeView(v: KybView) {
  const a = v.application;
  if (!v.full) {
    return {
      view: 'status' as const,
      subject: { kyb_status: kybStatusOf(v.subject) },
      application: { status: a.status, version: a.version, submitted_at: iso(a.submitted_at), decided_at: iso(a.decided_at) },
    };
  }
  return {
    view: 'full' as const,
    subject: serializeSubject(v.subject),
    application: serializeApplication(a, v.documents),
    progress: progressOf(a, v.documents),
    slots: slotsOf(a),
    history: v.history.map((h) => ({ version: h.version, status: h.status, submitted_at: iso(h.submitted_at), decided_at: iso(h.decided_at), decision_reason: h.decision_reason })),
    review: { min_days: REVIEW_DAYS.min, max_days: REVIEW_DAYS.max, due_by: a.status === 'submitted' && a.submitted_at ? iso(reviewDueBy(a.submitted_at)) : null },
    can_edit: v.canEdit,
  };
}

/** POST .../kyb/uploads (4.2): 201 with the upload's id, real type, size and hash. */
export function serializeKybUpload(u: { id: string; mime: string; size: number; sha256: string }) {
  return { upload_id: u.id, mime: u.mime, size_bytes: u.size, sha256: u.sha256 };
}

export function serializeInvite(made: { invite: InviteRow; token: string; url: string }) {
  return {
    id: made.invite.id,
    counterparty_id: made.invite.counterparty_id,
    token: made.token,
    url: made.url,
    expires_at: iso(made.invite.expires_at),
    created_at: iso(made.invite.created_at),
  };
}

/** Staff review answers (D10: the moved resource): the reviewed version, its subject, and the draft a change request opened. */
export function serializeReviewed(r: Reviewed) {
  return {
    application: serializeApplication(r.application, r.documents),
    subject: { type: r.subject.type, id: r.subject.counterparty?.id ?? r.subject.workspace.id, name: subjectName(r.subject), kyb_status: kybStatusOf(r.subject), is_sandbox: r.subject.workspace.is_sandbox },
    next_version: r.nextVersion ? { id: r.nextVersion.id, version: r.nextVersion.version, status: r.nextVersion.status } : null,
  };
}

export function serializeVerifiedCounterparty(c: CounterpartyRow) {
  return { counterparty: serializeCounterparty(c) };
}

/** One row of the console's KYB queue. */
export function serializeQueueItem(q: QueueRow) {
  return {
    id: q.id,
    version: q.version,
    subject_type: q.counterparty_id ? 'counterparty' : 'account',
    name: q.counterparty_name ?? q.workspace_name,
    workspace_name: q.workspace_name,
    legal_name: q.legal_name,
    entity_type: q.entity_type,
    submitted_at: iso(q.submitted_at),
    due_by: q.submitted_at ? iso(reviewDueBy(new Date(q.submitted_at))) : null,
  };
}
