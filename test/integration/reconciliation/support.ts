/**
 * What the reconciliation tests share: a live workspace whose milestones reach every place
 * money can be (held, returned from a failed payout, in flight, paid out, refunded by a
 * ruling, split by a ruling) through the routes, and the route.
 */
import { expect } from 'chai';
import { db } from '../../../shared/db.js';
import type { Figures } from '../../../shared/reconciliation/repo.js';
import type { Difference } from '../../../shared/reconciliation/service.js';
import { activateVia, createDealVia, dealWorld, fundVia, staffHeaders, type Client, type DealWorld, type Headers } from '../../factories/deals.js';
import { makeLive } from '../../factories/releases.js';
import { decideVia, disputeVia, failVia, releaseVia, settleVia, submit } from '../overview/support.js';

export const RECONCILIATION = '/v1/enterprise/reconciliation';

export type { Figures };

export interface ReconBody {
  generated_at: string;
  balanced: boolean;
  currencies: { currency: string; ledger: Figures; derived: Figures }[];
  differences: Difference[];
}

export async function reconciliationOf(client: Client, h: Headers): Promise<ReconBody> {
  const res = await client.get(RECONCILIATION).set(h);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  expect(res.headers['cache-control']).to.equal('private, no-store');
  return res.body.data as ReconBody;
}

export interface MilestoneMoney {
  id: string;
  sequence_no: number;
  amount: number;
  buyer_fee: number;
  seller_fee: number;
  funding_amount: number;
  payout_amount: number;
  refunded_amount: number;
  returned_amount: number;
}

export const moneyOf = (dealId: string) =>
  db('deal_milestones')
    .where({ deal_id: dealId })
    .orderBy('sequence_no')
    .select<MilestoneMoney[]>('id', 'sequence_no', 'amount', 'buyer_fee', 'seller_fee', 'funding_amount', 'payout_amount', 'refunded_amount', 'returned_amount');

export interface Books {
  w: DealWorld;
  staff: Headers;
  dealId: string;
  reference: string;
  /** m1 released and paid out; m2 released, payout in flight; m3 refunded by a ruling; m4 held; m5 released, its payout failed (back in escrow); m6 split by a ruling (part refunded, the rest held). */
  mids: string[];
  payouts: { paid: string; inFlight: string; failed: string };
}

/**
 * A deal of six milestones with the fee split 50/50, funded for real (live: staff confirm the
 * funding, the ledger moves), in `w` (made live) or a new workspace.
 */
export async function liveBooks(client: Client, world?: DealWorld): Promise<Books> {
  const w = world ?? (await dealWorld(client));
  await makeLive(w);
  const staff = await staffHeaders();
  const amounts = [1_000_000, 2_000_000, 3_000_000, 4_000_000, 500_000, 600_000];
  const made = await createDealVia(client, w.h.operator, {
    title: 'Buku besar',
    counterparty_id: w.cpId,
    fee_allocation: 'split',
    fee_buyer_percent: 50,
    milestones: amounts.map((amount, i) => ({ title: `Tahap ${i + 1}`, amount })),
  });
  const deal = await activateVia(client, w.h.operator, made.deal.id);
  const dealId = deal.deal.id;
  const mids = deal.milestones.map((m) => m.id);
  for (const mid of mids) {
    const res = await client.post(`/v1/admin/enterprise/milestones/${mid}/confirm-funding`).set(staff).send({});
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  }
  const [m1, m2, m3, , m5, m6] = mids as [string, string, string, string, string, string];
  for (const mid of [m1, m2, m5]) {
    await submit(client, w.h.operator, dealId, mid);
    await decideVia(client, w.h.finance, mid);
  }
  const [paid] = await releaseVia(client, w, staff, dealId, m1);
  await settleVia(client, staff, paid!.id);
  const [inFlight] = await releaseVia(client, w, staff, dealId, m2);
  const [failed] = await releaseVia(client, w, staff, dealId, m5);
  await failVia(client, staff, failed!.id);
  await disputeVia(client, w.h.operator, dealId, m3);
  expect((await client.post(`/v1/admin/enterprise/milestones/${m3}/resolve-dispute`).set(staff).send({ outcome: 'refund' })).status).to.equal(200);
  await disputeVia(client, w.h.operator, dealId, m6);
  const split = await client.post(`/v1/admin/enterprise/milestones/${m6}/resolve-dispute`).set(staff).send({ outcome: 'split', release_amount: 400_000 });
  expect(split.status, JSON.stringify(split.body)).to.equal(200);
  return { w, staff, dealId, reference: deal.deal.reference as string, mids, payouts: { paid: paid!.id, inFlight: inFlight!.id, failed: failed!.id } };
}

/** Funds a sandbox deal (no money moves) in the world (which stays a sandbox). */
export async function sandboxDeal(client: Client, w: DealWorld): Promise<{ dealId: string; mids: string[] }> {
  const made = await createDealVia(client, w.h.operator, { title: 'Uji coba', counterparty_id: w.cpId, milestones: [{ title: 'Tahap 1', amount: 700_000 }] });
  const deal = await activateVia(client, w.h.operator, made.deal.id);
  const mids = deal.milestones.map((m) => m.id);
  for (const mid of mids) await fundVia(client, w.h.finance, deal.deal.id, mid);
  return { dealId: deal.deal.id, mids };
}

/** How many reconciliation marks (writes not yet worked out) the workspace has. */
export async function marksOf(workspaceId: string): Promise<number> {
  const row = await db('reconciliation_marks').where({ workspace_id: workspaceId }).count<{ n: string }>('* as n').first();
  return Number(row?.n ?? 0);
}
