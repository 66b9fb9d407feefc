/**
 * Property (fast-check, issue 10): after any sequence of withdrawals, incoming money,
 * voucher grants, approvals, payouts (staff or worker, sometimes twice), and rejections,
 * the user's balance equals the model's figure and the ledger's (the sum of the lines of
 * the user's account), payouts in flight hold exactly the open withdrawals, payouts sent
 * and platform fees exactly what was paid out, each voucher is used by at most one open
 * or paid withdrawal, and the ledger check passes after every step.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { fundUser } from '../../helpers/platform-factories.js';
import { freshBank, fundedUser, grantVoucher, setWithdrawSettings, staffUser, systemBooks } from '../../factories/withdrawals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { AppError } from '../../../shared/errors.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import { sandboxPayoutAdapter, setPayoutAdapter } from '../../../shared/withdrawals/payout-adapter.js';
import * as svc from '../../../shared/withdrawals/service.js';
import type { WithdrawalStatus } from '../../../shared/withdrawals/states.js';

type Command =
  | { op: 'request'; thousands: number }
  | { op: 'income'; amount: number }
  | { op: 'voucher'; amountOff: number }
  | { op: 'approve' | 'markPaid' | 'reject' | 'payout' | 'payoutTwice'; pick: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 50, max: 400 }).map((thousands) => ({ op: 'request' as const, thousands })) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 300_000 }).map((amount) => ({ op: 'income' as const, amount })) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 6000 }).map((amountOff) => ({ op: 'voucher' as const, amountOff })) },
  {
    weight: 6,
    arbitrary: fc.record({ op: fc.constantFrom('approve' as const, 'markPaid' as const, 'reject' as const, 'payout' as const, 'payoutTwice' as const), pick: fc.nat() }),
  },
);

interface Modelled {
  id: string;
  amount: number;
  fee: number;
  status: WithdrawalStatus;
}

async function ledgerFigure(userId: string): Promise<number> {
  const [row] = await db('journal_lines as l')
    .join('ledger_accounts as a', 'a.id', 'l.account_id')
    .where('a.user_id', userId)
    .select<{ total: number }[]>(db.raw('COALESCE(SUM(l.amount), 0)::bigint AS total'));
  return Number(row!.total);
}

async function codeOf(work: Promise<unknown>): Promise<string | null> {
  try {
    await work;
    return null;
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
}

describe('withdrawals: property — the balance always equals the ledger', function () {
  this.timeout(300_000);

  before(() => setPayoutAdapter(sandboxPayoutAdapter));
  after(() => setPayoutAdapter(null));

  it('holds after any sequence of withdrawals, rejections and payouts', async () => {
    clock.set(new Date('2026-12-01T03:00:00.000Z'));
    // Fixed Rp4.000 (floor Rp2.500): 50% off for loyal users (3 paid withdrawals) -> Rp2.000.
    await setWithdrawSettings({ fee: { type: 'fixed', value: 4000, min_idr: 2500, max_idr: 25_000, loyalty_discount_percent: 50 } });
    const staff = { actorId: (await staffUser()).id };
    let runs = 0;
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 500_000 }), fc.array(command, { minLength: 1, maxLength: 14 }), async (opening, commands) => {
        runs += 1;
        const user = await fundedUser(opening);
        const books0 = await systemBooks();
        let balance = opening;
        let vouchersGranted = 0;
        const ws: Modelled[] = [];
        for (const c of commands) {
          clock.advance(3 * 3600_000); // keeps the velocity check at review, never block
          if (c.op === 'income') {
            await fundUser(user.id, c.amount);
            balance += c.amount;
          } else if (c.op === 'voucher') {
            await grantVoucher(user.id, { amount_off: c.amountOff });
            vouchersGranted += 1;
          } else if (c.op === 'request') {
            const amount = c.thousands * 1000;
            const loyal = ws.filter((w) => w.status === 'paid').length >= 3;
            const maxFee = loyal ? 2000 : 4000;
            const attempt = svc.requestWithdrawal(undefined, user.id, { amount, method: 'bank_transfer', destination_details: freshBank() });
            if (amount > balance) {
              expect(await codeOf(attempt), `withdraw ${amount} of ${balance}`).to.equal('INSUFFICIENT_BALANCE');
              seen.add('insufficient');
            } else {
              const w = await attempt;
              expect(w.fee_amount).to.be.at.least(0).and.at.most(maxFee).and.below(amount);
              expect(w.fee_base - w.loyalty_discount).to.equal(maxFee);
              expect(w.voucher_discount > 0).to.equal(w.voucher_redemption_id !== null);
              expect(w.net_amount + w.fee_amount).to.equal(amount);
              ws.push({ id: w.id, amount, fee: w.fee_amount, status: 'pending' });
              if (loyal) seen.add('loyal');
              if (w.voucher_redemption_id) seen.add('voucher');
              balance -= amount;
            }
          } else if (ws.length > 0) {
            const w = ws[c.pick % ws.length]!;
            if (c.op === 'approve') {
              const code = await codeOf(svc.approve(undefined, staff, w.id, { note: 'property' }));
              expect(code).to.equal(w.status === 'pending' ? null : 'INVALID_STATE');
              if (code === null) w.status = 'approved';
            } else if (c.op === 'markPaid') {
              const code = await codeOf(svc.markPaid(undefined, staff, w.id));
              expect(code).to.equal(w.status === 'approved' ? null : 'INVALID_STATE');
              if (code === null) {
                w.status = 'paid';
                seen.add('paid');
              }
            } else if (c.op === 'reject') {
              const code = await codeOf(svc.reject(undefined, staff, w.id, { note: 'property' }));
              expect(code).to.equal(w.status === 'pending' || w.status === 'approved' ? null : 'INVALID_STATE');
              if (code === null) {
                w.status = 'rejected';
                seen.add('rejected');
                balance += w.amount;
              }
            } else {
              const times = c.op === 'payoutTwice' ? 2 : 1;
              for (let i = 0; i < times; i += 1) {
                const run = await svc.runPayout(w.id);
                if (w.status === 'approved') {
                  expect(run.outcome).to.equal('paid');
                  w.status = 'paid';
                } else {
                  expect(run).to.deep.equal({ outcome: 'skipped', withdrawal_id: w.id, status: w.status });
                  seen.add('skipped');
                }
              }
            }
          }
          const row = (await db('users').select('balance').where({ id: user.id }).first()) as { balance: number };
          expect(row.balance, 'users.balance').to.equal(balance);
          expect(await ledgerFigure(user.id), 'ledger lines of the account').to.equal(balance);
          const books = await systemBooks();
          const open = ws.filter((w) => ['pending', 'approved', 'processing'].includes(w.status));
          const paid = ws.filter((w) => w.status === 'paid');
          expect(books.inFlight - books0.inFlight, 'payouts in flight').to.equal(open.reduce((s, w) => s + w.amount, 0));
          expect(books.sent - books0.sent, 'payouts sent').to.equal(paid.reduce((s, w) => s + w.amount - w.fee, 0));
          expect(books.fees - books0.fees, 'platform fees').to.equal(paid.reduce((s, w) => s + w.fee, 0));
          // Vouchers: used exactly by the live (not rejected) withdrawals that took one, never twice.
          const used = await db('withdrawal_fee_voucher_redemptions').where({ user_id: user.id, status: 'used' }).select<{ id: string; withdrawal_id: string }[]>('id', 'withdrawal_id');
          const live = ws.filter((w) => w.status !== 'rejected').map((w) => w.id);
          const takers = await db('withdrawals')
            .whereIn('id', live.length ? live : ['00000000-0000-4000-8000-000000000000'])
            .whereNotNull('voucher_redemption_id')
            .select<{ id: string; voucher_redemption_id: string }[]>('id', 'voucher_redemption_id');
          expect(used.length).to.be.at.most(vouchersGranted);
          expect(used.map((u) => `${u.id}>${u.withdrawal_id}`).sort()).to.deep.equal(takers.map((t) => `${t.voucher_redemption_id}>${t.id}`).sort());
          expect(await checkLedger(db)).to.deep.equal([]);
        }
      }),
      {
        numRuns: 40,
        // One hand-written sequence first: three payouts make the user loyal, a voucher is
        // used, its withdrawal rejected (voucher back), used again, a payout run twice.
        examples: [
          [
            400_000,
            [
              { op: 'request', thousands: 100 },
              { op: 'approve', pick: 0 },
              { op: 'payoutTwice', pick: 0 },
              { op: 'request', thousands: 50 },
              { op: 'approve', pick: 1 },
              { op: 'markPaid', pick: 1 },
              { op: 'request', thousands: 50 },
              { op: 'approve', pick: 2 },
              { op: 'payout', pick: 2 },
              { op: 'voucher', amountOff: 1500 },
              { op: 'request', thousands: 60 },
              { op: 'reject', pick: 3 },
              { op: 'income', amount: 12_345 },
              { op: 'request', thousands: 200 },
              { op: 'markPaid', pick: 4 },
              { op: 'request', thousands: 500 },
            ],
          ],
        ],
      },
    );
    expect(runs).to.be.at.least(40);
    expect([...seen].sort()).to.include.members(['insufficient', 'loyal', 'paid', 'rejected', 'skipped', 'voucher']);
  });
});
