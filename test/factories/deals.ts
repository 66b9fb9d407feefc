/**
 * Enterprise deals for the deal tests (test/integration/deals): a workspace with a member
 * of every role and a counterparty, deals made through POST /v1/enterprise/deals, and the
 * rows behind them. Only tests put a milestone in a state the routes cannot reach yet
 * (approve, release, revision: `setMilestoneStatus`).
 */
import { expect } from 'chai';
import type { api } from '../helpers/app.js';
import { db } from '../../shared/db.js';
import type { MemberRow, WorkspaceRow } from '../../shared/enterprise/repo.js';
import type { MilestoneStatus } from '../../shared/deals/states.js';
import type { UserRow } from '../../shared/users/repo.js';
import { addMember, createWorkspace, headersOf, sessionOf } from './enterprise.js';
import { createUser } from './users.js';

export type Client = ReturnType<typeof api>;
export type Headers = Record<string, string>;

export const DEALS = '/v1/enterprise/deals';

export interface DealWorld {
  workspace: WorkspaceRow;
  owner: UserRow;
  ownerMember: MemberRow;
  /** Session headers of each role. */
  h: { owner: Headers; operator: Headers; finance: Headers; viewer: Headers };
  users: { operator: UserRow; finance: UserRow; viewer: UserRow };
  /** A seller counterparty (ID, not verified). */
  cpId: string;
}

export async function counterpartyVia(client: Client, h: Headers, body: Record<string, unknown> = { name: 'PT Pemasok Jaya' }): Promise<string> {
  const res = await client.post('/v1/enterprise/counterparties').set(h).send(body);
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.data.id as string;
}

/** A sandbox workspace with an owner, an operator, a finance member and a viewer (sessions), and one counterparty. */
export async function dealWorld(client: Client, name?: string): Promise<DealWorld> {
  const { workspace, owner, ownerMember } = await createWorkspace(undefined, name);
  const operator = await addMember(workspace.id, 'operator');
  const finance = await addMember(workspace.id, 'finance');
  const viewer = await addMember(workspace.id, 'viewer');
  const h = {
    owner: headersOf(await sessionOf(owner)),
    operator: headersOf(await sessionOf(operator.user)),
    finance: headersOf(await sessionOf(finance.user)),
    viewer: headersOf(await sessionOf(viewer.user)),
  };
  const cpId = await counterpartyVia(client, h.owner);
  return { workspace, owner, ownerMember, h, users: { operator: operator.user, finance: finance.user, viewer: viewer.user }, cpId };
}

export const milestones = (amounts: number[]) => amounts.map((amount, i) => ({ title: `Tahap ${i + 1}`, amount }));

export const dealBody = (cpId: string, amounts: number[] = [1_000_000, 2_000_000], extra: Record<string, unknown> = {}) => ({
  title: 'Pengadaan server',
  counterparty_id: cpId,
  milestones: milestones(amounts),
  ...extra,
});

export interface DealData {
  deal: Record<string, unknown> & { id: string; status: string; fee: Record<string, unknown> };
  milestones: (Record<string, unknown> & { id: string; status: string; amount: number })[];
  events: (Record<string, unknown> & { event: string })[];
  outcome: Record<string, unknown>;
}

/** POST /deals, expected 201; answers `data`. */
export async function createDealVia(client: Client, h: Headers, body: Record<string, unknown>): Promise<DealData> {
  const res = await client.post(DEALS).set(h).send(body);
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.data as DealData;
}

/** POST /deals/:id/activate, expected 200; answers `data`. */
export async function activateVia(client: Client, h: Headers, dealId: string): Promise<DealData> {
  const res = await client.post(`${DEALS}/${dealId}/activate`).set(h).send({});
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.data as DealData;
}

/** A deal created and activated in a sandbox workspace (milestones awaiting_funding). */
export async function activeDeal(client: Client, w: DealWorld, amounts: number[] = [1_000_000, 2_000_000], extra: Record<string, unknown> = {}): Promise<DealData> {
  const made = await createDealVia(client, w.h.operator, dealBody(w.cpId, amounts, extra));
  return activateVia(client, w.h.operator, made.deal.id);
}

export const fundPath = (dealId: string, milestoneId: string) => `${DEALS}/${dealId}/milestones/${milestoneId}/fund`;

/** POST .../fund as finance, expected 200. */
export async function fundVia(client: Client, h: Headers, dealId: string, milestoneId: string): Promise<void> {
  const res = await client.post(fundPath(dealId, milestoneId)).set(h).send({ method: 'sandbox' });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
}

export interface MilestoneDbRow {
  id: string;
  deal_id: string;
  sequence_no: number;
  title: string;
  status: MilestoneStatus;
  amount: string;
  buyer_fee: string;
  seller_fee: string;
  funding_amount: string;
  payout_amount: string;
  approvals_required: number;
  funding_method: string | null;
  funding_reference: string | null;
  funded_at: Date | null;
  evidence_summary: string | null;
  evidence_submitted_by: string | null;
  disputed_at: Date | null;
  dispute_reason: string | null;
  due_at: Date | null;
  updated_at: Date;
}

export interface DealDbRow {
  id: string;
  workspace_id: string;
  reference: string;
  is_test: boolean;
  terms_review: boolean;
  activated_at: Date | null;
  cancelled_at: Date | null;
  fee_frozen: boolean;
  fee_rate_bp: number;
  fee_min: string;
  platform_fee: string;
  buyer_fee: string;
  seller_fee: string;
  fee_allocation: string;
  fee_buyer_percent: number;
  updated_at: Date;
}

export const dealRow = (id: string) => db('deals').where({ id }).first<DealDbRow>('*');
export const milestoneRows = (dealId: string) => db('deal_milestones').where({ deal_id: dealId }).orderBy('sequence_no').select<MilestoneDbRow[]>('*');
export const statusesOf = async (dealId: string) => (await milestoneRows(dealId)).map((m) => m.status);

/** Puts a milestone straight into a status (the moves that reach it are not built yet: approve, revision, release). */
export async function setMilestoneStatus(milestoneId: string, status: MilestoneStatus, extra: Record<string, unknown> = {}): Promise<void> {
  const n = await db('deal_milestones').where({ id: milestoneId }).update({ status, ...extra });
  expect(n).to.equal(1);
}

export interface FeedRow {
  seq: string;
  event: string;
  entity_type: string;
  entity_id: string | null;
  deal_id: string | null;
  deal_reference: string | null;
  actor_id: string | null;
  actor_name: string | null;
  actor_label: string | null;
  amount: string | null;
  livemode: boolean;
  summary: string;
}

/** The workspace's feed rows, oldest first (optionally of one deal). */
export function feedRows(workspaceId: string, dealId?: string): Promise<FeedRow[]> {
  const q = db('workspace_events').where({ workspace_id: workspaceId });
  if (dealId) q.andWhere({ deal_id: dealId });
  return q.orderBy('seq').select<FeedRow[]>('*');
}

/** Headers of a platform admin (staff) with a session. */
export async function staffHeaders(): Promise<Headers> {
  const { user } = await createUser({ role: 'admin', fullName: 'Staff Deals' });
  return headersOf(await sessionOf(user));
}

/** Everything of a workspace the deal routes could change (cross-workspace checks). */
export async function dealSnapshot(workspaceId: string) {
  return {
    deals: await db('deals').where({ workspace_id: workspaceId }).orderBy('id'),
    milestones: await db('deal_milestones').where({ workspace_id: workspaceId }).orderBy('id'),
    events: await db('workspace_events').where({ workspace_id: workspaceId }).orderBy('seq'),
    workspace: await db('workspaces').where({ id: workspaceId }).first(),
  };
}
