/**
 * Concurrency of withdrawals (ARCHITECTURE rule 3, issue 10): real concurrent HTTP
 * requests, repeated over rounds with the start order alternating. No sequence can
 * withdraw more than the balance, use one voucher twice, or both pay and refund one
 * withdrawal; the ledger holds after every round.
 */
import type { Job } from 'bullmq';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { issueKey, signInRaw } from '../../helpers/auth-signin-util.js';
import { createEscrow } from '../../factories/escrows.js';
import { DEFAULT_PASSWORD } from '../../factories/users.js';
import { createWithdrawal, fundedUser, freshBank, grantVoucher, staffUser, systemBooks, userBalance } from '../../factories/withdrawals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import type { UserRow } from '../../../shared/users/repo.js';
import { setPayoutAdapter, type PayoutAdapter } from '../../../shared/withdrawals/payout-adapter.js';
import { runPayout } from '../../../shared/withdrawals/service.js';
import type { JobData } from '../../../shared/queues.js';
import { buildRegistry } from '../../../workers/registry.js';

const ROUNDS = 8;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** Starts all at once (the order rotated by `round`), waits for all; answers in the original order. */
async function together<T>(round: number, work: (() => PromiseLike<T>)[]): Promise<T[]> {
  const order = work.map((_, i) => (i + round) % work.length);
  const started = new Map<number, Promise<T>>();
  for (const i of order) started.set(i, Promise.resolve(work[i]!()));
  return Promise.all(work.map((_, i) => started.get(i)!));
}

const statuses = (rs: Response[]) => rs.map((r) => r.status).sort();

async function entries(id: string, kind: string): Promise<number> {
  const [r] = await db('journal_entries').where({ ref_type: 'withdrawal', ref_id: id, kind }).count<{ n: number }[]>('* as n');
  return Number(r!.n);
}

describe('withdrawal races', function () {
  this.timeout(120_000);
  let client: ReturnType<typeof api>;
  let admin: UserRow;

  beforeEach(async () => {
    clock.set(new Date('2026-12-01T03:00:00.000Z'));
    client = api();
    admin = await staffUser();
  });

  it('two withdrawals on one balance (a key and a session at once): exactly one is taken', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const user = await fundedUser(150_000);
      const key = await issueKey(user.id);
      const s = await signInRaw(client, user.email, DEFAULT_PASSWORD);
      const body = () => ({ amount: 100_000, method: 'bank_transfer', destination_details: freshBank() });
      const [a, b] = await together<Response>(round, [
        () => client.post('/v1/withdrawals').set(bearer(key)).send(body()),
        () => client.post('/v1/withdrawals').set({ Cookie: s.cookie, 'X-CSRF-Token': s.csrf }).send(body()),
      ]);
      expect(statuses([a!, b!]), `round ${round}: ${JSON.stringify([a!.body, b!.body])}`).to.deep.equal([201, 400]);
      expect([a!, b!].find((r) => r.status === 400)!.body.error).to.deep.include({ code: 'INSUFFICIENT_BALANCE', balance: 50_000 });
      expect(await userBalance(user.id)).to.equal(50_000);
      expect(await db('withdrawals').where({ user_id: user.id }).count<{ n: number }[]>('* as n')).to.deep.equal([{ n: 1 }]);
      expect(await checkLedger(db)).to.deep.equal([]);
    }
  });

  it('five withdrawals of 50,000 on a 150,000 balance: exactly three are taken, the balance ends at 0', async () => {
    for (let round = 0; round < 3; round += 1) {
      const user = await fundedUser(150_000);
      const key = await issueKey(user.id);
      const before = await systemBooks();
      const answers = await together<Response>(
        round,
        Array.from({ length: 5 }, () => () => client.post('/v1/withdrawals').set(bearer(key)).send({ amount: 50_000, method: 'bank_transfer', destination_details: freshBank() })),
      );
      expect(statuses(answers), JSON.stringify(answers.map((r): unknown => r.body))).to.deep.equal([201, 201, 201, 400, 400]);
      expect(await userBalance(user.id)).to.equal(0);
      expect((await systemBooks()).inFlight - before.inFlight).to.equal(150_000);
      expect(await checkLedger(db)).to.deep.equal([]);
    }
  });

  it('a withdrawal against an incoming release: the balance is always exactly what both leave', async () => {
    const outcomes = { withdrawFirst: 0, releaseFirst: 0 };
    for (let round = 0; round < ROUNDS; round += 1) {
      const seller = await fundedUser(100_000);
      const key = await issueKey(seller.id);
      const { escrow, buyer } = await createEscrow({ status: 'received', seller, amount: 150_000 });
      const buyerKey = await issueKey(buyer.id);
      // 190,000 fits only after the release (100,000 + 148,000); 50,000 fits either way, even
      // after both (248,000 - 190,000 = 58,000; with 200,000 a release-then-big order left 48,000).
      const [big, small, rel] = await together<Response>(round, [
        () => client.post('/v1/withdrawals').set(bearer(key)).send({ amount: 190_000, method: 'bank_transfer', destination_details: freshBank() }),
        () => client.post('/v1/withdrawals').set(bearer(key)).send({ amount: 50_000, method: 'dana', destination_details: { phone: `0812${1_000_000 + round}` } }),
        () => client.post(`/api/escrows/${escrow.id}/release`).set(bearer(buyerKey)).send({}),
      ]);
      expect(rel!.status, JSON.stringify(rel!.body)).to.equal(200);
      expect(small!.status, JSON.stringify(small!.body)).to.equal(201);
      let expected = 100_000 + 148_000 - 50_000;
      if (big!.status === 201) {
        expected -= 190_000;
        outcomes.releaseFirst += 1;
      } else {
        expect(big!.body.error.code, JSON.stringify(big!.body)).to.equal('INSUFFICIENT_BALANCE');
        outcomes.withdrawFirst += 1;
      }
      expect(await userBalance(seller.id), `round ${round}`).to.equal(expected);
      expect(await checkLedger(db)).to.deep.equal([]);
    }
    expect(outcomes.withdrawFirst + outcomes.releaseFirst).to.equal(ROUNDS);
  });

  it('reject against mark paid (two staff members at once): exactly one wins, the money moves once', async () => {
    const other = await staffUser();
    const keys = [await issueKey(admin.id), await issueKey(other.id)];
    const wins = { rejected: 0, paid: 0 };
    for (let round = 0; round < ROUNDS; round += 1) {
      const user = await fundedUser(100_000);
      const { withdrawal } = await createWithdrawal({ user, amount: 100_000, status: 'approved', staff: admin });
      const [rej, paid] = await together<Response>(round, [
        () => client.post(`/v1/admin/withdrawals/${withdrawal.id}/reject`).set(bearer(keys[0]!)).send({ note: `race ${round}` }),
        () => client.post(`/v1/admin/withdrawals/${withdrawal.id}/mark-paid`).set(bearer(keys[1]!)).send({ reference: `R${round}` }),
      ]);
      expect(statuses([rej!, paid!]), JSON.stringify([rej!.body, paid!.body])).to.deep.equal([200, 409]);
      const loser = rej!.status === 409 ? rej! : paid!;
      expect(loser.body.error.code).to.equal('INVALID_STATE');
      if (rej!.status === 200) {
        wins.rejected += 1;
        expect(loser.body.error.status).to.equal('rejected');
        expect(await userBalance(user.id)).to.equal(100_000);
        expect([await entries(withdrawal.id, 'withdrawal_refund'), await entries(withdrawal.id, 'withdrawal_payout')]).to.deep.equal([1, 0]);
      } else {
        wins.paid += 1;
        expect(loser.body.error.status).to.equal('paid');
        expect(await userBalance(user.id)).to.equal(0);
        expect([await entries(withdrawal.id, 'withdrawal_refund'), await entries(withdrawal.id, 'withdrawal_payout')]).to.deep.equal([0, 1]);
      }
      expect(await checkLedger(db)).to.deep.equal([]);
    }
    expect(wins.rejected + wins.paid).to.equal(ROUNDS);
  });

  it('reject against the payout worker: rejected and never sent, or sent and never refunded', async () => {
    let sent = 0;
    const counting: PayoutAdapter = {
      name: 'counting',
      automatic: true,
      send: (req) => {
        sent += 1;
        return Promise.resolve({ outcome: 'paid', providerReference: `p-${req.reference}` });
      },
    };
    setPayoutAdapter(counting);
    try {
      const key = await issueKey(admin.id);
      for (let round = 0; round < ROUNDS; round += 1) {
        const user = await fundedUser(100_000);
        const { withdrawal } = await createWithdrawal({ user, amount: 100_000, status: 'approved', staff: admin });
        const sentBefore = sent;
        const [rej, run] = await together<unknown>(round, [
          () => client.post(`/v1/admin/withdrawals/${withdrawal.id}/reject`).set(bearer(key)).send({ note: 'stop' }),
          () => runPayout(withdrawal.id),
        ]);
        const res = rej as Response;
        if (res.status === 200) {
          expect(run).to.deep.equal({ outcome: 'skipped', withdrawal_id: withdrawal.id, status: 'rejected' });
          expect(sent).to.equal(sentBefore);
          expect(await userBalance(user.id)).to.equal(100_000);
        } else {
          expect(res.status).to.equal(409);
          expect(['processing', 'paid']).to.include(res.body.error.status);
          expect(run).to.deep.include({ outcome: 'paid' });
          expect(sent).to.equal(sentBefore + 1);
          expect(await userBalance(user.id)).to.equal(0);
        }
        expect(await entries(withdrawal.id, 'withdrawal_refund') + (await entries(withdrawal.id, 'withdrawal_payout'))).to.equal(1);
        expect(await checkLedger(db)).to.deep.equal([]);
      }
    } finally {
      setPayoutAdapter(null);
    }
  });

  it('mark paid against the payout worker (its processor, at once): exactly one pays, one posting; staff 409 or the worker does nothing', async () => {
    const sent: string[] = [];
    const counting: PayoutAdapter = {
      name: 'counting',
      automatic: true,
      send: async (req) => {
        sent.push(req.withdrawalId);
        // A provider that takes a moment: staff arriving meanwhile find the claim live.
        await new Promise((resolve) => setTimeout(resolve, 5));
        return { outcome: 'paid', providerReference: `p-${req.reference}` };
      },
    };
    setPayoutAdapter(counting);
    const processor = buildRegistry().get('payouts.send')!;
    const wins = { staff: 0, worker: 0 };
    try {
      const key = await issueKey(admin.id);
      for (let round = 0; round < ROUNDS * 2; round += 1) {
        const user = await fundedUser(100_000);
        const { withdrawal } = await createWithdrawal({ user, amount: 100_000, status: 'approved', staff: admin });
        const [http, run] = await together<unknown>(round, [
          () => client.post(`/v1/admin/withdrawals/${withdrawal.id}/mark-paid`).set(bearer(key)).send({ reference: `R${round}` }),
          // The worker starts 0 to 90 ms late, so that each side wins in some rounds.
          async () => {
            await new Promise((resolve) => setTimeout(resolve, round * 6));
            return processor({ data: { withdrawal_id: withdrawal.id } } as unknown as Job<JobData>);
          },
        ]);
        const res = http as Response;
        const after = (await db('withdrawals').where({ id: withdrawal.id }).first()) as { status: string; payout_reference: string; processed_by: string | null };
        expect(after.status).to.equal('paid');
        if (res.status === 200) {
          // Staff won: approved -> paid before the claim; the worker found it paid and sent nothing.
          wins.staff += 1;
          expect(run).to.deep.equal({ outcome: 'skipped', withdrawal_id: withdrawal.id, status: 'paid' });
          expect(sent).to.not.include(withdrawal.id);
          expect(after).to.include({ payout_reference: `R${round}`, processed_by: admin.id });
        } else {
          // The worker won the claim: staff were refused while it was sending (or after it paid).
          wins.worker += 1;
          expect(res.status, JSON.stringify(res.body)).to.equal(409);
          expect(res.body.error.code).to.equal('INVALID_STATE');
          expect(['processing', 'paid']).to.include(res.body.error.status);
          expect(run).to.deep.equal({ outcome: 'paid', withdrawal_id: withdrawal.id, reference: `p-wd_${withdrawal.id}` });
          expect(sent.filter((id) => id === withdrawal.id)).to.have.length(1);
          expect(after).to.include({ payout_reference: `p-wd_${withdrawal.id}`, processed_by: null });
        }
        expect([await entries(withdrawal.id, 'withdrawal_payout'), await entries(withdrawal.id, 'withdrawal_refund')], `round ${round}`).to.deep.equal([1, 0]);
        expect(await userBalance(user.id)).to.equal(0);
        expect(await checkLedger(db)).to.deep.equal([]);
      }
    } finally {
      setPayoutAdapter(null);
    }
    expect(wins.staff + wins.worker).to.equal(ROUNDS * 2);
    expect(wins.staff > 0 && wins.worker > 0, JSON.stringify(wins)).to.equal(true);
  });

  it('one voucher, two withdrawals at once: it is used by exactly one', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const user = await fundedUser(300_000);
      const key = await issueKey(user.id);
      const voucher = await grantVoucher(user.id, { percent_off: 100 });
      const answers = await together<Response>(
        round,
        [0, 1].map(() => () => client.post('/v1/withdrawals').set(bearer(key)).send({ amount: 100_000, method: 'bank_transfer', destination_details: freshBank() })),
      );
      expect(statuses(answers)).to.deep.equal([201, 201]);
      expect(answers.map((r) => r.body.data.fee_amount as string).sort()).to.deep.equal(['0', '5000']);
      const free = answers.find((r) => r.body.data.fee_amount === '0')!;
      const redemption = await db('withdrawal_fee_voucher_redemptions').where({ id: voucher.redemptionId }).first();
      expect(redemption).to.include({ status: 'used', withdrawal_id: free.body.data.id });
      expect(await userBalance(user.id)).to.equal(100_000);
      expect(await checkLedger(db)).to.deep.equal([]);
    }
  });
});
