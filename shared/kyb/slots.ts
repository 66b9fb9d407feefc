/**
 * What a complete application holds (enterprise spec 2 "KYB application": `progress`,
 * `slots`; decision 0017): the documents each entity type must bring, one identity
 * document per person (ktp for an Indonesian NIK, passport otherwise), and the four steps
 * (company, people, bank, documents) with what each needs. Pure functions of the row and
 * its documents; the service and the serializer both read them.
 */
import type { EntityType } from '../enterprise/states.js';
import type { DocumentRow, KybApplicationRow, StoredPerson } from './repo.js';

export const DOC_TYPES = ['akta_pendirian', 'sk_kemenkumham', 'akta_perubahan', 'bank_proof', 'ktp', 'passport'] as const;
export type DocType = (typeof DOC_TYPES)[number];
export const PERSON_DOC_TYPES: readonly DocType[] = ['ktp', 'passport'];

export const PERSON_ROLES = ['director', 'commissioner', 'signer', 'beneficial_owner', 'shareholder'] as const;
export const ID_TYPES = ['nik', 'passport'] as const;
export const MONTHLY_VOLUMES = ['under_100m', '100m_to_1b', '1b_to_10b', 'over_10b'] as const;

/** Most documents one version holds; most people one application lists. */
export const MAX_DOCUMENTS = 30;
export const MAX_PEOPLE = 10;

export interface Slot {
  key: string;
  type: DocType;
  label: string;
  hint: string;
  required: boolean;
  person_id: string | null;
}

const COMPANY_DOCS: Record<DocType, { label: string; hint: string }> = {
  akta_pendirian: { label: 'Deed of establishment (Akta Pendirian)', hint: 'The notarial deed that founded the company; for a foreign entity, its certificate of incorporation' },
  sk_kemenkumham: { label: 'Ministry of Law approval (SK Kemenkumham)', hint: 'The decree that ratified the deed of establishment' },
  akta_perubahan: { label: 'Deed of amendment (Akta Perubahan)', hint: 'The latest deed that changed the articles, directors or shareholders, if any' },
  bank_proof: { label: 'Proof of bank account', hint: 'A bank statement or letter showing the account holder and number, at most 3 months old' },
  ktp: { label: 'KTP', hint: 'Indonesian identity card, both sides legible' },
  passport: { label: 'Passport', hint: 'The photo page of a valid passport' },
};

/** The company documents each entity type must bring (required) or may bring. */
const BY_ENTITY: Record<EntityType, { required: DocType[]; optional: DocType[] }> = {
  pt: { required: ['akta_pendirian', 'sk_kemenkumham', 'bank_proof'], optional: ['akta_perubahan'] },
  pt_perorangan: { required: ['akta_pendirian', 'sk_kemenkumham', 'bank_proof'], optional: ['akta_perubahan'] },
  koperasi: { required: ['akta_pendirian', 'sk_kemenkumham', 'bank_proof'], optional: ['akta_perubahan'] },
  cv: { required: ['akta_pendirian', 'bank_proof'], optional: ['sk_kemenkumham', 'akta_perubahan'] },
  firma: { required: ['akta_pendirian', 'bank_proof'], optional: ['sk_kemenkumham', 'akta_perubahan'] },
  ud: { required: ['bank_proof'], optional: ['akta_pendirian'] },
  foreign: { required: ['akta_pendirian', 'bank_proof'], optional: ['akta_perubahan'] },
};

/** A person's identity document: ktp for a NIK, passport otherwise. */
export const personDocType = (p: Pick<StoredPerson, 'id_type'>): DocType => (p.id_type === 'nik' ? 'ktp' : 'passport');

export function slotsOf(app: Pick<KybApplicationRow, 'entity_type' | 'people'>): Slot[] {
  const rules = BY_ENTITY[app.entity_type ?? 'pt'];
  const company = (type: DocType, required: boolean): Slot => ({ key: type, type, ...COMPANY_DOCS[type], required, person_id: null });
  const people = app.people.map((p): Slot => {
    const type = personDocType(p);
    return { key: `${type}:${p.id}`, type, label: `${COMPANY_DOCS[type].label}: ${p.full_name}`, hint: COMPANY_DOCS[type].hint, required: true, person_id: p.id };
  });
  return [...rules.required.map((t) => company(t, true)), ...rules.optional.map((t) => company(t, false)), ...people];
}

/** The slot a document fills, or undefined when no slot of this application takes it. */
export function slotOf(slots: Slot[], docType: string, personId: string | null): Slot | undefined {
  return slots.find((s) => s.type === docType && s.person_id === personId);
}

export interface Progress {
  steps: { company: boolean; people: boolean; bank: boolean; documents: boolean };
  done: number;
  total: number;
  missing_documents: string[];
  complete: boolean;
}

const filled = (v: string | null | undefined): boolean => typeof v === 'string' && v.trim() !== '';

function companyDone(a: KybApplicationRow): boolean {
  const base = [a.legal_name, a.entity_type, a.nib, a.country_code, a.address, a.industry, a.monthly_volume].every(filled);
  return base && (a.entity_type === 'foreign' || filled(a.npwp));
}

function personDone(p: StoredPerson): boolean {
  return filled(p.full_name) && filled(p.position) && p.roles.length > 0 && p.id_number_sealed !== null && filled(p.nationality);
}

function peopleDone(a: KybApplicationRow): boolean {
  return a.people.length > 0 && a.people.every(personDone) && a.people.some((p) => p.roles.includes('director'));
}

const bankDone = (a: KybApplicationRow): boolean => filled(a.bank_name) && filled(a.bank_account_holder) && a.bank_account_number_sealed !== null;

export function progressOf(a: KybApplicationRow, documents: Pick<DocumentRow, 'doc_type' | 'person_id'>[]): Progress {
  const missing = slotsOf(a)
    .filter((s) => s.required && !documents.some((d) => d.doc_type === s.type && d.person_id === s.person_id))
    .map((s) => s.key);
  const steps = { company: companyDone(a), people: peopleDone(a), bank: bankDone(a), documents: missing.length === 0 };
  const done = Object.values(steps).filter(Boolean).length;
  return { steps, done, total: 4, missing_documents: missing, complete: done === 4 };
}

/** Review takes 1 to 3 business days: `due_by` is the submission plus three weekdays (UTC). */
export const REVIEW_DAYS = { min: 1, max: 3 } as const;

export function reviewDueBy(submittedAt: Date): Date {
  const due = new Date(submittedAt.getTime());
  let left: number = REVIEW_DAYS.max;
  while (left > 0) {
    due.setUTCDate(due.getUTCDate() + 1);
    const day = due.getUTCDay();
    if (day !== 0 && day !== 6) left--;
  }
  return due;
}
