/**
 * Releasing a milestone (enterprise spec 3 approved --release--> released, 4.6, 6, 8; D7
 * "Release"; decision 0019; issue 27): 1 to 5 splits to verified payout instructions of the
 * deal's counterparty summing to the payout amount, each a queued disbursement; events
 * milestone.released then one disbursement.queued per payout; on a live deal the ledger
 * moves the held money to payouts in flight and the fee to the platform, in one posting;
 * every refusal leaves everything as it was; two releases at once pay once.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { keyedFlights, statementsOf } from '../../helpers/statements.js';
import { dealSnapshot, dealWorld, feedRows, milestoneRows, setMilestoneStatus } from '../../factories/deals.js';
import { approve, balance, disbursementsOf, fundedDeal, instructionVia, otherCounterparty, releasePath } from '../../factories/releases.js';
import { db } from '../../../shared/db.js';
import { encryptSecret } from '../../../shared/crypto.js';
import { checkLedger } from '../../../shared/ledger/index.js';

describe('enterprise release (4.6, D7)', () => {
  const client = api();

  it('sandbox: two splits become two queued payouts, events in order, no money moves', async () => {
    const r = await fundedDeal(client, 'sandbox');
    const mid = r.mids[0]!;
    await approve(mid);
    const a = await instructionVia(client, r, 'Rekening utama');
    const b = await instructionVia(client, r, 'Rekening cadangan');
    const m = (await milestoneRows(r.deal.deal.id))[0]!;
    const payout = Number(m.payout_amount);
    const before = await db('journal_entries').count<{ count: string }[]>('* as count');
    const res = await client
      .post(releasePath(r.deal.deal.id, mid))
      .set(r.w.h.finance)
      .send({ splits: [{ payout_instruction_id: a, amount: payout - 300_000 }, { payout_instruction_id: b, amount: 300_000 }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const answered = (res.body.data.milestones as { id: string; status: string; released_at: string | null; disbursements: { amount: number; status: string; instruction_label: string; settled_at: null }[] }[]).find((x) => x.id === mid)!;
    expect(answered.status).to.equal('released');
    expect(answered.released_at).to.be.a('string');
    expect(answered.disbursements.map((d) => [d.amount, d.status, d.instruction_label, d.settled_at])).to.deep.equal([
      [payout - 300_000, 'queued', 'Rekening utama', null],
      [300_000, 'queued', 'Rekening cadangan', null],
    ]);
    expect(res.body.data.deal.status).to.equal('in_progress');
    expect(res.body.data.deal.released_amount).to.equal(Number(m.amount));
    const rows = await disbursementsOf(mid);
    expect(rows.map((d) => [d.payout_instruction_id, Number(d.amount), d.status, d.is_test, d.release_no])).to.deep.equal([
      [a, payout - 300_000, 'queued', true, 1],
      [b, 300_000, 'queued', true, 1],
    ]);
    const feed = (await feedRows(r.w.workspace.id, r.deal.deal.id)).slice(-3);
    expect(feed.map((e) => [e.event, e.entity_id, e.amount === null ? null : Number(e.amount), e.livemode])).to.deep.equal([
      ['milestone.released', mid, payout, false],
      ['disbursement.queued', rows[0]!.id, payout - 300_000, false],
      ['disbursement.queued', rows[1]!.id, 300_000, false],
    ]);
    expect(feed[0]!.actor_id).to.equal(r.w.users.finance.id);
    const jobs = await db('outbox').where({ job: 'payouts.disburse' }).whereRaw("payload->>'disbursement_id' = ANY(?)", [rows.map((d) => d.id)]).select('id');
    expect(jobs).to.have.length(2);
    expect(await db('journal_entries').count<{ count: string }[]>('* as count')).to.deep.equal(before);
    expect(await db('ledger_accounts').where({ code: `milestone:${mid}` }).first()).to.equal(undefined);
  });

  it('live: the held money goes to payouts in flight and the whole platform fee to the platform, in one posting', async () => {
    const r = await fundedDeal(client, 'live', [1_000_000, 2_000_000], { fee_allocation: 'split', fee_buyer_percent: 40 });
    const mid = r.mids[1]!;
    await approve(mid);
    const a = await instructionVia(client, r, 'Utama');
    const m = (await milestoneRows(r.deal.deal.id))[1]!;
    const [amount, buyerFee, sellerFee, payout] = [Number(m.amount), Number(m.buyer_fee), Number(m.seller_fee), Number(m.payout_amount)];
    expect(buyerFee).to.be.greaterThan(0);
    expect(sellerFee).to.be.greaterThan(0);
    const [inFlight, fees, feesHeld] = [await balance('enterprise:payouts_in_flight'), await balance('platform:enterprise_fees'), await balance('enterprise:buyer_fees_held')];
    expect(await balance(`milestone:${mid}`)).to.equal(amount);
    const res = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: a, amount: payout }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(await balance(`milestone:${mid}`)).to.equal(0);
    expect((await balance('enterprise:payouts_in_flight')) - inFlight).to.equal(payout);
    expect((await balance('platform:enterprise_fees')) - fees).to.equal(buyerFee + sellerFee);
    expect(feesHeld - (await balance('enterprise:buyer_fees_held'))).to.equal(buyerFee);
    const entries = await db('journal_entries').where({ posting_key: `ent-release:${mid}:1` }).select('id');
    expect(entries).to.have.length(1);
    const feed = await feedRows(r.w.workspace.id, r.deal.deal.id);
    expect(feed.filter((e) => e.event === 'milestone.released' || e.event === 'disbursement.queued').every((e) => e.livemode)).to.equal(true);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  describe('refusals leave everything as it was', () => {
    let r: Awaited<ReturnType<typeof fundedDeal>>;
    let mid: string;
    let payout: number;
    let verified: string;
    beforeEach(async () => {
      r = await fundedDeal(client, 'live');
      mid = r.mids[0]!;
      await approve(mid);
      verified = await instructionVia(client, r, 'Utama');
      payout = Number((await milestoneRows(r.deal.deal.id))[0]!.payout_amount);
    });
    const send = (body: unknown, h = r.w.h.finance, path = releasePath(r.deal.deal.id, mid)) => client.post(path).set(h).send(body as object);
    const unchanged = async (fn: () => Promise<void>) => {
      const before = await dealSnapshot(r.w.workspace.id);
      const disb = await db('disbursements').where({ workspace_id: r.w.workspace.id }).select('id');
      await fn();
      expect(await dealSnapshot(r.w.workspace.id)).to.deep.equal(before);
      expect(await db('disbursements').where({ workspace_id: r.w.workspace.id }).select('id')).to.deep.equal(disb);
    };
    const fieldError = (res: { status: number; body: { error: { code: string; details: { fieldErrors: Record<string, string[]> } } } }, field: string, text: RegExp) => {
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_BODY');
      expect(res.body.error.details.fieldErrors[field]!.join(' ')).to.match(text);
    };

    it('splits that do not add up to the payout amount (over, under), by one rupiah', () =>
      unchanged(async () => {
        fieldError(await send({ splits: [{ payout_instruction_id: verified, amount: payout + 1 }] }), 'splits', new RegExp(`must add up to ${payout}`));
        fieldError(await send({ splits: [{ payout_instruction_id: verified, amount: payout - 1 }] }), 'splits', new RegExp(`must add up to ${payout}`));
      }));

    it('no split, six splits, an amount of 0, a fraction or a missing field answer 400 INVALID_BODY', () =>
      unchanged(async () => {
        for (const body of [
          {},
          { splits: [] },
          { splits: Array.from({ length: 6 }, () => ({ payout_instruction_id: randomUUID(), amount: 1 })) },
          { splits: [{ payout_instruction_id: verified, amount: 0 }] },
          { splits: [{ payout_instruction_id: verified, amount: 10.5 }] },
          { splits: [{ amount: payout }] },
          { splits: [{ payout_instruction_id: 'not-a-uuid', amount: payout }] },
        ]) {
          const res = await send(body);
          expect(res.status, JSON.stringify(body)).to.equal(400);
          expect(res.body.error.code).to.equal('INVALID_BODY');
        }
      }));

    it('the same instruction twice, an unknown one, another workspace\'s, another counterparty\'s', async () => {
      const elsewhere = await fundedDeal(client, 'live');
      const foreign = await instructionVia(client, elsewhere, 'Milik orang lain');
      const cp2 = await otherCounterparty(client, r.w);
      const ofOther = await instructionVia(client, r, 'Pihak lain', { cpId: cp2 });
      await unchanged(async () => {
        fieldError(await send({ splits: [{ payout_instruction_id: verified, amount: payout - 1 }, { payout_instruction_id: verified, amount: 1 }] }), 'splits', /each payout instruction once/);
        fieldError(await send({ splits: [{ payout_instruction_id: randomUUID(), amount: payout }] }), 'splits', /not an instruction of this workspace/);
        fieldError(await send({ splits: [{ payout_instruction_id: foreign, amount: payout }] }), 'splits', /not an instruction of this workspace/);
        fieldError(await send({ splits: [{ payout_instruction_id: verified, amount: payout - 1 }, { payout_instruction_id: ofOther, amount: 1 }] }), 'splits', /another counterparty/);
      });
    });

    it('an instruction not verified, or deleted, cannot take money (409 INVALID_STATE / 400)', async () => {
      const pending = await instructionVia(client, r, 'Belum diverifikasi', { verified: false });
      const deleted = await instructionVia(client, r, 'Dihapus');
      const del = await client.delete(`/v1/enterprise/payout-instructions/${deleted}`).set(r.w.h.finance);
      expect(del.status, JSON.stringify(del.body)).to.equal(200);
      await unchanged(async () => {
        const res = await send({ splits: [{ payout_instruction_id: verified, amount: payout - 1 }, { payout_instruction_id: pending, amount: 1 }] });
        expect(res.status).to.equal(409);
        expect(res.body.error.code).to.equal('INVALID_STATE');
        expect(res.body.error.message).to.include('Belum diverifikasi');
        fieldError(await send({ splits: [{ payout_instruction_id: deleted, amount: payout }] }), 'splits', /not an instruction of this workspace/);
      });
    });

    it('an instruction altered in the database after its verification is refused (its signature no longer matches)', async () => {
      const altered = await instructionVia(client, r, 'Diubah diam-diam');
      await db('payout_instructions').where({ id: altered }).update({ account_number_sealed: encryptSecret('1234567890123') });
      await unchanged(async () => {
        const res = await send({ splits: [{ payout_instruction_id: altered, amount: payout }] });
        expect(res.status).to.equal(409);
        expect(res.body.error.code).to.equal('INVALID_STATE');
        expect(res.body.error.message).to.match(/changed after its verification/);
      });
    });

    it('roles: operator and viewer 403 FORBIDDEN; another workspace\'s deal 404; a milestone not approved 409', async () => {
      await unchanged(async () => {
        for (const h of [r.w.h.operator, r.w.h.viewer]) {
          const res = await send({ splits: [{ payout_instruction_id: verified, amount: payout }] }, h);
          expect(res.status).to.equal(403);
          expect(res.body.error.code).to.equal('FORBIDDEN');
        }
        const stranger = await dealWorld(client, 'Orang Asing');
        const res = await send({ splits: [{ payout_instruction_id: verified, amount: payout }] }, stranger.h.finance);
        expect(res.status).to.equal(404);
        const notApproved = await send({ splits: [{ payout_instruction_id: verified, amount: Number((await milestoneRows(r.deal.deal.id))[1]!.payout_amount) }] }, r.w.h.finance, releasePath(r.deal.deal.id, r.mids[1]!));
        expect(notApproved.status).to.equal(409);
        expect(notApproved.body.error.code).to.equal('CONCURRENT_MODIFICATION');
      });
    });
  });

  it('a released milestone cannot be released again; two releases at once pay once', async () => {
    const r = await fundedDeal(client, 'live');
    const mid = r.mids[0]!;
    await approve(mid);
    const a = await instructionVia(client, r, 'Utama');
    const payout = Number((await milestoneRows(r.deal.deal.id))[0]!.payout_amount);
    const body = { splits: [{ payout_instruction_id: a, amount: payout }] };
    const answers = await Promise.all([1, 2, 3].map(() => client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send(body)));
    expect(answers.map((x) => x.status).sort()).to.deep.equal([200, 409, 409]);
    expect(answers.filter((x) => x.status === 409).map((x) => (x.body as { error: { code: string } }).error.code)).to.deep.equal(['CONCURRENT_MODIFICATION', 'CONCURRENT_MODIFICATION']);
    expect(await disbursementsOf(mid)).to.have.length(1);
    expect(await balance('enterprise:payouts_in_flight')).to.be.at.least(payout);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('Idempotency-Key: the same release replays its answer and queues nothing more', async () => {
    const r = await fundedDeal(client, 'sandbox');
    const mid = r.mids[0]!;
    await approve(mid);
    const a = await instructionVia(client, r, 'Utama');
    const payout = Number((await milestoneRows(r.deal.deal.id))[0]!.payout_amount);
    const key = randomUUID();
    const body = { splits: [{ payout_instruction_id: a, amount: payout }] };
    const first = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).set('Idempotency-Key', key).send(body);
    const again = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).set('Idempotency-Key', key).send(body);
    expect(first.status).to.equal(200);
    expect(again.status).to.equal(200);
    expect(again.headers['idempotent-replay']).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    expect(await disbursementsOf(mid)).to.have.length(1);
  });

  it("keyed: the acting member (issue 42), the instructions (FOR SHARE), the release number and the mail's recipients are read with the key's statement after the deal's locks; the writes travel with the answer's reads: three round trips after it", async () => {
    const r = await fundedDeal(client, 'sandbox');
    const mid = r.mids[0]!;
    await approve(mid);
    const a = await instructionVia(client, r, 'Utama');
    const b = await instructionVia(client, r, 'Cadangan');
    const payout = Number((await milestoneRows(r.deal.deal.id))[0]!.payout_amount);
    const body = { splits: [{ payout_instruction_id: a, amount: payout - 1000 }, { payout_instruction_id: b, amount: 1000 }] };
    const stats = await statementsOf(() => client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).set('Idempotency-Key', randomUUID()).send(body));
    const res = stats.result;
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const { opening, after } = keyedFlights(stats);
    const parts = ['idempotency_open', 'FROM workspaces WHERE id', 'FOR UPDATE OF d', 'FROM deal_milestones', 'as "user_status"', 'from "payout_instructions"', 'max("release_no")', '"notify_email"'];
    const at = parts.map((part) => opening.findIndex((t) => t.includes(part)));
    expect(at.every((i, n) => i >= 0 && (n === 0 || i > at[n - 1]!)), opening.join('\n')).to.equal(true);
    expect(opening.find((t) => t.includes('from "payout_instructions"'))).to.include('for share');
    const shown = after.map((f) => f.join(' | ')).join('\n');
    expect(after, shown).to.have.length(3);
    expect(after[0]!, shown).to.have.length(1);
    expect(after[0]![0]).to.match(/^update "deal_milestones"/);
    // The disbursements with their jobs, the events, the mails, then the answer's five reads: one flight.
    const batch = after[1]!;
    expect(batch[0], shown).to.include('disbursements');
    expect(batch[1], shown).to.include('workspace_events');
    expect(batch.slice(2, -5).every((t) => t.includes('outbound_emails')), shown).to.equal(true);
    expect(batch.length).to.be.greaterThan(7);
    expect(after[2]!.map((t) => t.split(' ')[0]), shown).to.deep.equal(['INSERT', 'COMMIT;']);
    // The answer read in that round trip shows what it wrote: the deal as GET answers it.
    const g = await client.get(`/v1/enterprise/deals/${r.deal.deal.id}`).set(r.w.h.finance);
    expect(res.body.data).to.deep.equal(g.body.data);
    expect((res.body.data as { events: { event: string }[] }).events.slice(0, 3).map((e) => e.event)).to.deep.equal(['disbursement.queued', 'disbursement.queued', 'milestone.released']);
  });

  it('30 per minute per user: the 31st is 429 RATE_LIMITED and releases nothing; another finance member is not limited', async () => {
    const r = await fundedDeal(client, 'sandbox');
    const mid = r.mids[0]!;
    await approve(mid);
    const a = await instructionVia(client, r, 'Utama');
    const payout = Number((await milestoneRows(r.deal.deal.id))[0]!.payout_amount);
    for (let i = 1; i <= 30; i++) {
      const res = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: a, amount: payout + 1 }] });
      expect(res.status, `request ${i}`).to.equal(400);
    }
    const limited = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: a, amount: payout }] });
    expect(limited.status).to.equal(429);
    expect(limited.body.error.code).to.equal('RATE_LIMITED');
    expect(await disbursementsOf(mid)).to.deep.equal([]);
    const other = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.owner).send({ splits: [{ payout_instruction_id: a, amount: payout }] });
    expect(other.status, JSON.stringify(other.body)).to.equal(200);
  });

  it('a cancelled or disputed milestone cannot be released', async () => {
    const r = await fundedDeal(client, 'sandbox');
    const a = await instructionVia(client, r, 'Utama');
    await setMilestoneStatus(r.mids[0]!, 'disputed', { disputed_at: new Date() });
    const res = await client.post(releasePath(r.deal.deal.id, r.mids[0]!)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: a, amount: 1 }] });
    expect(res.status).to.equal(409);
    expect(await disbursementsOf(r.mids[0]!)).to.deep.equal([]);
  });
});
