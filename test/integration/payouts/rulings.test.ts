/**
 * Staff rulings on disputed milestones (D10 resolve-dispute; decision 0019; issue 27):
 * release (back to approved, then the normal release path), refund (everything held with
 * the buyer fee back to the workspace; the milestone cancelled), split (release_amount for
 * the counterparty, the rest refunded now; the release then pays release_amount - seller
 * fee); events with the operator label; the deal status follows; the ledger check after each.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { feedRows, milestoneRows } from '../../factories/deals.js';
import { balance, disbursementsOf, fundedDeal, instructionVia, releasePath } from '../../factories/releases.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';

const rulingPath = (mid: string) => `/v1/admin/enterprise/milestones/${mid}/resolve-dispute`;

describe('enterprise dispute rulings (D10)', () => {
  const client = api();

  async function disputed(kind: 'sandbox' | 'live', amounts = [1_000_000], extra: Record<string, unknown> = {}) {
    const r = await fundedDeal(client, kind, amounts, extra);
    const mid = r.mids[0]!;
    const res = await client.post(`/v1/enterprise/deals/${r.deal.deal.id}/milestones/${mid}/dispute`).set(r.w.h.operator).send({ reason: 'Barang tidak sesuai' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.deal.status).to.equal('disputed');
    const m = (await milestoneRows(r.deal.deal.id))[0]!;
    return { ...r, mid, m: { amount: Number(m.amount), buyerFee: Number(m.buyer_fee), sellerFee: Number(m.seller_fee), funding: Number(m.funding_amount), payout: Number(m.payout_amount) } };
  }

  it('release: the milestone is approved again, the deal no longer disputed, and finance releases it the normal way', async () => {
    const r = await disputed('live');
    const res = await client.post(rulingPath(r.mid)).set(r.staff).send({ outcome: 'release', note: 'Bukti pengiriman lengkap' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.milestone).to.deep.include({ id: r.mid, status: 'approved' });
    expect(res.body.data.deal_status).to.equal('funded');
    const ev = (await feedRows(r.w.workspace.id, r.deal.deal.id)).at(-1)!;
    expect([ev.event, ev.actor_id, ev.actor_label, ev.livemode]).to.deep.equal(['milestone.dispute_resolved', null, 'Operator', true]);
    expect(await balance(`milestone:${r.mid}`)).to.equal(r.m.amount);
    const a = await instructionVia(client, r, 'Utama');
    const rel = await client.post(releasePath(r.deal.deal.id, r.mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: a, amount: r.m.payout }] });
    expect(rel.status).to.equal(200);
    expect(rel.body.data.deal.status).to.equal('completed');
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('refund: everything held, with the buyer fee, goes back to the workspace; the milestone is cancelled and the deal follows', async () => {
    const r = await disputed('live', [1_000_000, 2_000_000], { fee_allocation: 'split', fee_buyer_percent: 50 });
    const [refunds, feesHeld, fees] = [await balance('enterprise:refunds_sent'), await balance('enterprise:buyer_fees_held'), await balance('platform:enterprise_fees')];
    const res = await client.post(rulingPath(r.mid)).set(r.staff).send({ outcome: 'refund' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.milestone.status).to.equal('cancelled');
    expect(res.body.data.deal_status).to.equal('funded');
    expect((await balance('enterprise:refunds_sent')) - refunds).to.equal(r.m.funding);
    expect(feesHeld - (await balance('enterprise:buyer_fees_held'))).to.equal(r.m.buyerFee);
    expect(await balance('platform:enterprise_fees')).to.equal(fees);
    expect(await balance(`milestone:${r.mid}`)).to.equal(0);
    expect(await checkLedger(db)).to.deep.equal([]);
    // A second ruling finds nothing disputed.
    const again = await client.post(rulingPath(r.mid)).set(r.staff).send({ outcome: 'refund' });
    expect(again.status).to.equal(409);
  });

  it('split: release_amount stays for the counterparty (paid less the seller fee), the rest is refunded now', async () => {
    const r = await disputed('live', [1_000_000], { fee_allocation: 'seller' });
    expect(r.m.sellerFee).to.be.greaterThan(0);
    const refunds = await balance('enterprise:refunds_sent');
    const res = await client.post(rulingPath(r.mid)).set(r.staff).send({ outcome: 'split', release_amount: 600_000 });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.milestone.status).to.equal('approved');
    expect((await balance('enterprise:refunds_sent')) - refunds).to.equal(400_000);
    expect(await balance(`milestone:${r.mid}`)).to.equal(600_000);
    expect(await checkLedger(db)).to.deep.equal([]);
    const a = await instructionVia(client, r, 'Utama');
    const full = await client.post(releasePath(r.deal.deal.id, r.mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: a, amount: r.m.payout }] });
    expect(full.status).to.equal(400);
    expect(full.body.error.details.fieldErrors.splits[0]).to.include(`must add up to ${600_000 - r.m.sellerFee}`);
    const rel = await client.post(releasePath(r.deal.deal.id, r.mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: a, amount: 600_000 - r.m.sellerFee }] });
    expect(rel.status, JSON.stringify(rel.body)).to.equal(200);
    // The deal's released amount is what was released, not what was refunded.
    expect(rel.body.data.deal).to.deep.include({ status: 'completed', total_amount: 1_000_000, released_amount: 600_000 });
    expect((await disbursementsOf(r.mid)).map((d) => Number(d.amount))).to.deep.equal([600_000 - r.m.sellerFee]);
    expect(await balance(`milestone:${r.mid}`)).to.equal(0);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('bodies: split needs a release_amount above the seller fee and below the amount; release and refund take none; an unknown outcome', async () => {
    const r = await disputed('sandbox', [1_000_000], { fee_allocation: 'seller' });
    for (const body of [
      { outcome: 'split' },
      { outcome: 'split', release_amount: 1_000_000 },
      { outcome: 'split', release_amount: r.m.sellerFee },
      { outcome: 'split', release_amount: 0 },
      { outcome: 'refund', release_amount: 10 },
      { outcome: 'hold' },
      {},
    ]) {
      const res = await client.post(rulingPath(r.mid)).set(r.staff).send(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_BODY');
    }
    expect((await milestoneRows(r.deal.deal.id))[0]!.status).to.equal('disputed');
    const ok = await client.post(rulingPath(r.mid)).set(r.staff).send({ outcome: 'split', release_amount: r.m.sellerFee + 1 });
    expect(ok.status).to.equal(200);
    // A sandbox ruling moves no money.
    expect(await db('ledger_accounts').where({ code: `milestone:${r.mid}` }).first()).to.equal(undefined);
  });

  it('only staff rule; a milestone not disputed answers 409; an unknown one 404', async () => {
    const r = await disputed('sandbox');
    for (const h of [r.w.h.owner, r.w.h.finance]) {
      const res = await client.post(rulingPath(r.mid)).set(h).send({ outcome: 'refund' });
      expect(res.status).to.equal(403);
    }
    const notDisputed = await client.post(rulingPath((await fundedDeal(client, 'sandbox')).mids[0]!)).set(r.staff).send({ outcome: 'release' });
    expect(notDisputed.status).to.equal(409);
    expect(notDisputed.body.error.code).to.equal('CONCURRENT_MODIFICATION');
    const missing = await client.post(rulingPath('00000000-0000-4000-8000-000000000000')).set(r.staff).send({ outcome: 'release' });
    expect(missing.status).to.equal(404);
    expect((await milestoneRows(r.deal.deal.id))[0]!.status).to.equal('disputed');
  });

  it('a split, then a new dispute and a refund: only what is still held goes back (each refund posted once)', async () => {
    const r = await disputed('live', [1_000_000], { fee_allocation: 'split', fee_buyer_percent: 50 });
    const refunds = await balance('enterprise:refunds_sent');
    expect((await client.post(rulingPath(r.mid)).set(r.staff).send({ outcome: 'split', release_amount: 700_000 })).status).to.equal(200);
    const again = await client.post(`/v1/enterprise/deals/${r.deal.deal.id}/milestones/${r.mid}/dispute`).set(r.w.h.operator).send({ reason: 'Masih bermasalah' });
    expect(again.status).to.equal(200);
    const tooMuch = await client.post(rulingPath(r.mid)).set(r.staff).send({ outcome: 'split', release_amount: 800_000 });
    expect(tooMuch.status).to.equal(400);
    expect((await client.post(rulingPath(r.mid)).set(r.staff).send({ outcome: 'refund' })).status).to.equal(200);
    expect((await balance('enterprise:refunds_sent')) - refunds).to.equal(r.m.amount + r.m.buyerFee);
    expect(await balance(`milestone:${r.mid}`)).to.equal(0);
    expect(await db('journal_entries').where('posting_key', 'like', `ent-refund:${r.mid}:%`).select('posting_key')).to.have.length(2);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('two rulings at once: one wins, the other finds it ruled', async () => {
    const r = await disputed('live');
    const answers = await Promise.all([client.post(rulingPath(r.mid)).set(r.staff).send({ outcome: 'refund' }), client.post(rulingPath(r.mid)).set(r.staff).send({ outcome: 'release' })]);
    expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 409]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });
});
