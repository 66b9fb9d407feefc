/**
 * GET /v1/user/balance (consumer spec 2 "Balance", 4.4): the balance projection, the
 * user's journal lines as recent transactions (escrow amount and platform fee on
 * releases), recent withdrawals, 30-day credit and debit, open withdrawals.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { fundUser } from '../../helpers/platform-factories.js';
import { createEscrow } from '../../factories/escrows.js';
import { createWithdrawal, fundedUser, staffUser } from '../../factories/withdrawals.js';
import { balanceFor } from '../../../shared/balance/service.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { AppError } from '../../../shared/errors.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import { reject } from '../../../shared/withdrawals/service.js';

describe('withdrawals: the balance answer', () => {
  it('lists the ledger lines newest first, with escrow amount and fee on releases', async () => {
    clock.set(new Date('2026-10-01T00:00:00.000Z'));
    const seller = await fundedUser(0);
    await fundUser(seller.id, 70_000); // 61 days before "now": outside the 30 days
    clock.set(new Date('2026-12-01T03:00:00.000Z'));
    const { escrow } = await createEscrow({ status: 'released', seller, amount: 150_000 });
    clock.advance(60_000);
    const pending = await createWithdrawal({ user: seller, amount: 100_000 });
    clock.advance(60_000);
    const admin = await staffUser();
    const rejected = await createWithdrawal({ user: seller, amount: 50_000 });
    clock.advance(60_000);
    await reject(undefined, { actorId: admin.id }, rejected.withdrawal.id, { note: 'no' });
    clock.advance(60_000);
    const { escrow: refunded, buyer } = await createEscrow({ status: 'refunded', amount: 80_000 });

    const key = await issueKey(seller.id);
    const res = await api().get('/v1/user/balance').set('Authorization', `Bearer ${key}`);
    expect(res.status).to.equal(200);
    const data = res.body.data;
    expect(data.balance).to.equal(70_000 + 148_000 - 100_000);
    expect((data.recent_transactions as Record<string, unknown>[]).map((t) => [t.type, t.amount, t.direction, t.status, t.escrow_id, t.withdrawal_id, t.escrow_amount, t.platform_fee])).to.deep.equal([
      ['withdrawal_refund', '50000', 'credit', 'completed', null, rejected.withdrawal.id, null, null],
      ['withdrawal', '-50000', 'debit', 'rejected', null, rejected.withdrawal.id, null, null],
      ['withdrawal', '-100000', 'debit', 'pending', null, pending.withdrawal.id, null, null],
      ['release_to_seller', '148000', 'credit', 'completed', escrow.id, null, '150000', '2000'],
      ['test.opening_balance', '70000', 'credit', 'completed', null, null, null, null],
    ]);
    const release = data.recent_transactions[3];
    expect(release).to.include({ currency: 'IDR', created_at: '2026-12-01T03:00:00.000Z' });
    expect(release.id).to.match(/^[0-9]+$/);
    expect((data.recent_withdrawals as { id: string; status: string }[]).map((w) => [w.id, w.status])).to.deep.equal([
      [rejected.withdrawal.id, 'rejected'],
      [pending.withdrawal.id, 'pending'],
    ]);
    expect(data.recent_withdrawals[1]).to.include({ amount: '100000', fee_amount: '5000', net_amount: '95000' });
    // 30 days: the release and the refund in, both withdrawals out; the opening balance is older.
    expect(data.stats_30d).to.deep.equal({ credit: 148_000 + 50_000, debit: 150_000, pending_count: 1 });

    // The buyer of the refunded escrow sees a refund.
    const buyerRes = await api().get('/v1/user/balance').set('Authorization', `Bearer ${await issueKey(buyer.id)}`);
    expect(buyerRes.body.data.balance).to.equal(80_000);
    expect((buyerRes.body.data.recent_transactions as Record<string, unknown>[]).map((t) => [t.type, t.amount, t.escrow_id, t.escrow_amount])).to.deep.equal([['refund', '80000', refunded.id, null]]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('counts every open withdrawal as pending and keeps 20 transactions and 5 withdrawals', async () => {
    clock.set(new Date('2026-12-01T03:00:00.000Z'));
    const user = await fundedUser(2_000_000);
    const admin = await staffUser();
    await createWithdrawal({ user, amount: 50_000, status: 'approved', staff: admin });
    await createWithdrawal({ user, amount: 50_000, status: 'processing', staff: admin });
    await createWithdrawal({ user, amount: 50_000, status: 'paid', staff: admin });
    for (let i = 0; i < 22; i += 1) await fundUser(user.id, 1000);
    const data = await balanceFor(user.id);
    expect(data.stats_30d.pending_count).to.equal(2);
    expect(data.recent_transactions).to.have.length(20);
    expect(data.recent_transactions.map((t) => t.type)).to.deep.equal(Array(20).fill('test.opening_balance'));
    for (let i = 0; i < 4; i += 1) await createWithdrawal({ user, amount: 50_000 });
    const more = await balanceFor(user.id);
    expect(more.recent_withdrawals).to.have.length(5);
    expect(more.stats_30d.pending_count).to.equal(6);
    expect(more.balance).to.equal(2_000_000 + 22_000 - 7 * 50_000);
  });

  it('a new account: zero and empty lists; the answer is always the caller\'s own', async () => {
    const fresh = await fundedUser(0);
    const rich = await fundedUser(500_000);
    const res = await api().get('/v1/user/balance').set('Authorization', `Bearer ${await issueKey(fresh.id)}`);
    expect(res.body.data).to.deep.equal({ balance: 0, recent_transactions: [], recent_withdrawals: [], stats_30d: { credit: 0, debit: 0, pending_count: 0 } });
    expect(rich.balance).to.equal(500_000);
    expect((await api().get('/v1/user/balance')).status).to.equal(401);
  });

  it('USER_NOT_FOUND for an account that does not exist', async () => {
    const err = await balanceFor(randomUUID()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(AppError);
    expect(err).to.include({ status: 404, code: 'USER_NOT_FOUND' });
  });
});
