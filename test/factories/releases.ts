/**
 * Releases and payouts for the payout tests (test/integration/payouts): a deal whose
 * milestones are funded (sandbox: the fund route; live: staff confirmation, which posts to
 * the ledger), verified payout instructions made over HTTP, and an approved milestone
 * (approval is put in the row directly: the approvals tests own the decide route).
 */
import { expect } from 'chai';
import { db } from '../../shared/db.js';
import { activateVia, counterpartyVia, createDealVia, dealBody, dealWorld, fundVia, setMilestoneStatus, staffHeaders, type Client, type DealData, type DealWorld, type Headers } from './deals.js';

export interface ReleaseWorld {
  w: DealWorld;
  staff: Headers;
  deal: DealData;
  mids: string[];
  live: boolean;
}

/** The workspace live by its columns (what a KYB approval does to them) and its counterparty verified. */
export async function makeLive(w: DealWorld): Promise<void> {
  await db('workspaces').where({ id: w.workspace.id }).update({ is_sandbox: false, kyb_status: 'verified' });
  await db('counterparties').where({ id: w.cpId }).update({ kyb_status: 'verified' });
}

/** A deal with every milestone funded (live: confirmed by staff, money in the ledger). */
export async function fundedDeal(client: Client, kind: 'sandbox' | 'live', amounts: number[] = [1_000_000, 2_000_000], extra: Record<string, unknown> = {}, world?: DealWorld): Promise<ReleaseWorld> {
  const w = world ?? (await dealWorld(client));
  const live = kind === 'live';
  if (live && !world) await makeLive(w);
  const staff = await staffHeaders();
  const made = await createDealVia(client, w.h.owner, dealBody(w.cpId, amounts, extra));
  const deal = await activateVia(client, w.h.owner, made.deal.id);
  const mids = deal.milestones.map((m) => m.id);
  for (const mid of mids) {
    if (live) {
      const res = await client.post(`/v1/admin/enterprise/milestones/${mid}/confirm-funding`).set(staff).send({});
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    } else {
      await fundVia(client, w.h.finance, deal.deal.id, mid);
    }
  }
  return { w, staff, deal, mids, live };
}

/** Approval is not this file's subject: the row is moved to approved as the decide route would leave it. */
export async function approve(mid: string): Promise<void> {
  await setMilestoneStatus(mid, 'approved', { approved_at: new Date() });
}

let accountSeq = 0;

/** A payout instruction of the counterparty made by finance over HTTP and, unless `verified: false`, verified by staff. */
export async function instructionVia(client: Client, r: { w: DealWorld; staff: Headers }, label: string, options: { cpId?: string; verified?: boolean; accountNumber?: string } = {}): Promise<string> {
  accountSeq += 1;
  const res = await client
    .post('/v1/enterprise/payout-instructions')
    .set(r.w.h.finance)
    .send({ label, counterparty_id: options.cpId ?? r.w.cpId, bank_name: 'BCA', account_number: options.accountNumber ?? `80${String(1_000_000 + accountSeq)}${accountSeq % 10}`, account_holder: 'PT Pemasok Jaya' });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  const id = res.body.data.id as string;
  if (options.verified !== false) {
    // As staff do it (issue 42): reveal the destination, then verify the version shown.
    const shown = await client.post(`/v1/admin/enterprise/payout-instructions/${id}/reveal`).set(r.staff).send({});
    expect(shown.status, JSON.stringify(shown.body)).to.equal(200);
    const v = await client.post(`/v1/admin/enterprise/payout-instructions/${id}/verify`).set(r.staff).send({ destination_version: shown.body.data.destination_version });
    expect(v.status, JSON.stringify(v.body)).to.equal(200);
  }
  return id;
}

export const releasePath = (dealId: string, mid: string) => `/v1/enterprise/deals/${dealId}/milestones/${mid}/release`;

/** A second counterparty of the same workspace. */
export const otherCounterparty = (client: Client, w: DealWorld) => counterpartyVia(client, w.h.owner, { name: 'PT Lain Sekali' });

export interface DisbursementDbRow {
  id: string;
  milestone_id: string;
  payout_instruction_id: string;
  instruction_label: string;
  amount: string;
  status: string;
  attempts: number;
  release_no: number;
  is_test: boolean;
  failure_reason: string | null;
  provider_reference: string | null;
  lease_until: Date | null;
}

export const disbursementsOf = (mid: string) => db('disbursements').where({ milestone_id: mid }).orderBy([{ column: 'release_no' }, { column: 'split_no' }]).select<DisbursementDbRow[]>('*');

/** A ledger account's balance by its code (0 when it was never opened). */
export const balance = async (code: string): Promise<number> => Number((await db('ledger_accounts').where({ code }).first<{ balance: string } | undefined>('balance'))?.balance ?? 0);

/** An approved milestone released over HTTP into one payout per instruction (amounts: all to the first but 1 rupiah per extra). */
export async function releasedMilestone(client: Client, kind: 'sandbox' | 'live', labels: string[] = ['Utama'], world?: DealWorld) {
  const r = await fundedDeal(client, kind, undefined, undefined, world);
  const mid = r.mids[0]!;
  await approve(mid);
  const ids: string[] = [];
  for (const label of labels) ids.push(await instructionVia(client, r, label));
  const payout = Number((await db('deal_milestones').where({ id: mid }).first<{ payout_amount: string }>('payout_amount')).payout_amount);
  const splits = ids.map((id, i) => ({ payout_instruction_id: id, amount: i === 0 ? payout - (ids.length - 1) : 1 }));
  const res = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send({ splits });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return { ...r, mid, payout, instructionIds: ids, disbursements: await disbursementsOf(mid) };
}
