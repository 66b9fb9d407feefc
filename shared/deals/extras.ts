/**
 * What a milestone answer shows beside its own row (enterprise spec 2 Milestone): the
 * approval slots of its current round, its documents, its payouts. One query per kind for
 * all milestones of a deal (never one per milestone).
 */
import { readTogether, shaped, type Db, type NativeStatement } from '../db.js';

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

export interface ApprovalSlotRow {
  id: string;
  milestone_id: string;
  round: number;
  slot: number;
  status: 'pending' | 'approved';
  approver_id: string | null;
  approver_name: string | null;
  note: string | null;
  decided_at: Date | null;
}

export interface DocumentRow {
  id: string;
  workspace_id: string;
  deal_id: string | null;
  deal_reference: string | null;
  milestone_id: string | null;
  milestone_title: string | null;
  document_type: string;
  title: string;
  file_url: string;
  upload_id: string | null;
  checksum_sha256: string | null;
  visibility: 'account' | 'counterparty';
  uploaded_by: string;
  uploaded_by_name: string;
  created_at: Date;
}

export interface DisbursementBrief {
  id: string;
  milestone_id: string;
  amount: number;
  status: string;
  instruction_label: string;
  settled_at: Date | null;
}

export interface MilestoneExtras {
  approvals: Map<string, ApprovalSlotRow[]>;
  documents: Map<string, DocumentRow[]>;
  disbursements: Map<string, DisbursementBrief[]>;
}

export const NO_EXTRAS: MilestoneExtras = { approvals: new Map(), documents: new Map(), disbursements: new Map() };

function byMilestone<T extends { milestone_id: string | null }>(rows: T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) if (r.milestone_id) out.set(r.milestone_id, [...(out.get(r.milestone_id) ?? []), r]);
  return out;
}

/** The document records with their names (deal reference, milestone title, uploader), for lists and milestone answers. */
export const documentsWithNames = (trx: Db) =>
  trx('deal_documents as doc')
    .leftJoin('deals as d', 'd.id', 'doc.deal_id')
    .leftJoin('deal_milestones as m', 'm.id', 'doc.milestone_id')
    .join('users as u', 'u.id', 'doc.uploaded_by')
    .select('doc.*', 'd.reference as deal_reference', 'm.title as milestone_title', 'u.full_name as uploaded_by_name');

/** The evidence ids a milestone names (a row written as `{}` by older code names none). */
const namedIn = (m: { evidence_document_ids?: unknown }): string[] =>
  Array.isArray(m.evidence_document_ids) ? m.evidence_document_ids.filter((v): v is string => typeof v === 'string') : [];

/** A milestone's documents: those attached to it and those named in its evidence, newest first. */
function documentsOf(docs: DocumentRow[], milestones: readonly { id: string; evidence_document_ids?: unknown }[]): Map<string, DocumentRow[]> {
  const out = new Map<string, DocumentRow[]>();
  for (const m of milestones) {
    const named = new Set(namedIn(m));
    const mine = docs.filter((d) => d.milestone_id === m.id || named.has(d.id));
    if (mine.length > 0) out.set(m.id, mine);
  }
  return out;
}

type ExtrasMilestone = { id: string; approval_round: number; evidence_document_ids?: unknown };

/** The approval slots of the milestones (ids as one array value), by milestone, round, slot. */
const slotsRead = shaped((k, ids: string[]) =>
  k('milestone_approvals as a')
    .leftJoin('users as u', 'u.id', 'a.approver_id')
    .whereRaw('a.milestone_id = ANY(?::uuid[])', [ids])
    .orderBy([{ column: 'a.milestone_id' }, { column: 'a.round' }, { column: 'a.slot' }])
    .select('a.id', 'a.milestone_id', 'a.round', 'a.slot', 'a.status', 'a.approver_id', 'u.full_name as approver_name', 'a.note', 'a.decided_at'),
);

/** The documents attached to the milestones or named in their evidence, newest first. */
const documentsRead = shaped((k, ids: string[], named: string[]) =>
  documentsWithNames(k)
    .whereRaw('(doc.milestone_id = ANY(?::uuid[]) OR doc.id = ANY(?::uuid[]))', [ids, named])
    .orderBy([{ column: 'doc.created_at', order: 'desc' }, { column: 'doc.id', order: 'desc' }]),
);

/** The payouts of the milestones, by release and split. */
const payoutsRead = shaped((k, ids: string[]) =>
  k('disbursements')
    .whereRaw('milestone_id = ANY(?::uuid[])', [ids])
    .orderBy([{ column: 'release_no' }, { column: 'split_no' }])
    .select('id', 'milestone_id', 'amount', 'status', 'instruction_label', 'settled_at'),
);

/**
 * The three reads behind `milestoneExtras` (approval slots, documents, payouts of all the
 * milestones), for `readTogether`: one text each whatever the number of milestones (ids as
 * one array value), built once (`shaped`) and prepared once per connection.
 */
export function extrasReads(milestones: readonly ExtrasMilestone[]): NativeStatement[] {
  if (milestones.length === 0) return [];
  const ids = milestones.map((m) => m.id);
  return [slotsRead(ids), documentsRead(ids, milestones.flatMap(namedIn)), payoutsRead(ids)];
}

/** `milestoneExtras` from the rows of `extrasReads`, in its order (none read for no milestones). */
export function extrasOf(milestones: readonly ExtrasMilestone[], [slots, docs, payouts]: readonly unknown[][]): MilestoneExtras {
  if (milestones.length === 0) return NO_EXTRAS;
  const rounds = new Map(milestones.map((m) => [m.id, m.approval_round]));
  return {
    approvals: byMilestone((slots as ApprovalSlotRow[]).filter((s) => s.round === rounds.get(s.milestone_id))),
    documents: documentsOf(docs as DocumentRow[], milestones),
    disbursements: byMilestone((payouts as DisbursementBrief[]).map((p) => ({ ...p, amount: Number(p.amount) }))),
  };
}

/** Approval slots of each milestone's current round, its documents (attached, or named as its evidence) and its payouts: one round trip in a folded transaction (`readTogether`). */
export async function milestoneExtras(trx: Db, milestones: readonly ExtrasMilestone[]): Promise<MilestoneExtras> {
  return extrasOf(milestones, await readTogether(trx, extrasReads(milestones)));
}

/** Milestone `approvals` item: { id, approver { id, name } or null, status, note, decided_at }. */
export function serializeApprovalSlot(s: ApprovalSlotRow) {
  return {
    id: s.id,
    approver: s.approver_id ? { id: s.approver_id, name: s.approver_name } : null,
    status: s.status,
    note: s.note,
    decided_at: iso(s.decided_at),
  };
}

/** Document record (spec 2): `uploaded_by` { id, name } in lists; creation answers it as an id (4.7). */
export function serializeDocument(d: DocumentRow) {
  return {
    id: d.id,
    deal_id: d.deal_id,
    deal_reference: d.deal_reference,
    milestone_id: d.milestone_id,
    milestone_title: d.milestone_title,
    document_type: d.document_type,
    title: d.title,
    file_url: d.file_url,
    checksum_sha256: d.checksum_sha256,
    visibility: d.visibility,
    uploaded_by: { id: d.uploaded_by, name: d.uploaded_by_name },
    created_at: iso(d.created_at),
  };
}

/** Milestone `disbursements` item: { id, amount, status, instruction_label, settled_at }. */
export function serializeDisbursementBrief(p: DisbursementBrief) {
  return { id: p.id, amount: p.amount, status: p.status, instruction_label: p.instruction_label, settled_at: iso(p.settled_at) };
}
