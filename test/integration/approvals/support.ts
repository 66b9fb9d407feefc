/**
 * What the approval tests share: a deal workspace with a second finance member, milestones
 * funded and with evidence submitted through the routes, the decide call, and the rows of
 * decisions and approval slots.
 */
import { expect } from 'chai';
import { db } from '../../../shared/db.js';
import type { UserRow } from '../../../shared/users/repo.js';
import { activeDeal, DEALS, dealWorld, fundVia, type Client, type DealData, type DealWorld, type Headers } from '../../factories/deals.js';
import { addMember, headersOf, sessionOf } from '../../factories/enterprise.js';

export const APPROVALS = '/v1/enterprise/approvals';

/** The four-eyes threshold the tests set (milestones at or above it need two approvers). */
export const THRESHOLD = 2_000_000;

export interface Person {
  user: UserRow;
  h: Headers;
}

export interface ApprovalWorld extends DealWorld {
  /** A second finance member (a second approver besides `finance` and the owner). */
  finance2: Person;
}

/** A sandbox deal workspace (owner, operator, finance, viewer, a counterparty) with a second finance member and the four-eyes threshold at THRESHOLD. */
export async function approvalWorld(client: Client, name?: string): Promise<ApprovalWorld> {
  const w = await dealWorld(client, name);
  await db('workspaces').where({ id: w.workspace.id }).update({ four_eyes_threshold: THRESHOLD });
  const f2 = await addMember(w.workspace.id, 'finance');
  return { ...w, finance2: { user: f2.user, h: headersOf(await sessionOf(f2.user)) } };
}

export async function submitVia(client: Client, h: Headers, dealId: string, mid: string, summary = 'Barang diterima lengkap'): Promise<void> {
  const res = await client.post(`${DEALS}/${dealId}/milestones/${mid}/submit-evidence`).set(h).send({ summary });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
}

/** An activated deal whose milestones are funded (finance) and carry evidence (by `submitter`, the operator by default). */
export async function submittedDeal(client: Client, w: DealWorld, amounts: number[] = [1_000_000], submitter: Headers = w.h.operator): Promise<DealData> {
  const d = await activeDeal(client, w, amounts);
  for (const m of d.milestones) {
    await fundVia(client, w.h.finance, d.deal.id, m.id);
    await submitVia(client, submitter, d.deal.id, m.id);
  }
  return d;
}

export const decide = (client: Client, h: Headers, mid: string, body: Record<string, unknown> = { decision: 'approve' }) =>
  client.post(`${APPROVALS}/${mid}/decide`).set(h).send(body);

type Res = { status: number; body: { success?: boolean; error?: { code: string; message: string }; data?: unknown } };

export function expectError(res: Res, status: number, code: string, label = ''): void {
  expect(res.status, `${label} ${JSON.stringify(res.body)}`).to.equal(status);
  expect(res.body.success, label).to.equal(false);
  expect(res.body.error!.code, label).to.equal(code);
  expect(res.body, label).to.not.have.property('data');
}

/** The decide answer, expected 200. */
export async function decideOk(client: Client, h: Headers, mid: string, body: Record<string, unknown> = { decision: 'approve' }): Promise<Detail> {
  const res = await decide(client, h, mid, body);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.data as Detail;
}

export interface Item {
  milestone_id: string;
  status: string;
  approvals_required: number;
  approvals_done: number;
  my_decision: string | null;
  submitted_by: { id: string; name: string } | null;
  [k: string]: unknown;
}

export interface Detail {
  item: Item;
  proposed: { amount: number; currency: string; destination: { label: string; bank_name: string; account_number_masked: string } | null; deal_progress_pct: number };
  how_we_got_here: { event: string; entity_id: string | null; [k: string]: unknown }[];
  impact: { counterparty_paid: number; money_moved: number; milestones_remaining: number; deal_progress_after_pct: number };
  decision: {
    risk_tier: string;
    approvals_required: number;
    approvals: { id: string; approver: { id: string; name: string } | null; status: string; note: string | null; decided_at: string | null }[];
    reversibility: string;
    expires_at: string | null;
  };
  evidence: { id: string; [k: string]: unknown }[];
}

export interface DecisionRow {
  milestone_id: string;
  round: number;
  decision: string;
  decided_by: string;
  note: string | null;
  decided_at: Date;
}
export interface SlotRow {
  id: string;
  round: number;
  slot: number;
  status: string;
  approver_id: string | null;
  note: string | null;
}

export const decisionRows = (mid: string) => db('milestone_decisions').where({ milestone_id: mid }).orderBy([{ column: 'round' }, { column: 'decided_at' }]).select<DecisionRow[]>('*');
export const slotRows = (mid: string) => db('milestone_approvals').where({ milestone_id: mid }).orderBy([{ column: 'round' }, { column: 'slot' }]).select<SlotRow[]>('*');
export const milestoneStatus = async (mid: string): Promise<string> => (await db('deal_milestones').where({ id: mid }).first<{ status: string }>('status')).status;

/** Everything a decision could change (refusals change none of it). */
export async function approvalSnapshot(workspaceId: string) {
  return {
    milestones: await db('deal_milestones').where({ workspace_id: workspaceId }).orderBy('id'),
    slots: await db('milestone_approvals').where({ workspace_id: workspaceId }).orderBy('id'),
    decisions: await db('milestone_decisions').where({ workspace_id: workspaceId }).orderBy('id'),
    events: await db('workspace_events').where({ workspace_id: workspaceId }).orderBy('seq'),
  };
}
