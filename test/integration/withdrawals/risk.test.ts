/**
 * Risk checks recorded on each withdrawal (issue 10, decision 0008): new or changed
 * destination, an amount far above the user's history, many withdrawals in a short time,
 * a destination shared by several accounts. `review` is stored and held for staff;
 * `block` answers 403 RISK_BLOCKED and stores nothing.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { createWithdrawal, fundedUser, freshBank, staffUser, userBalance } from '../../factories/withdrawals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import type { UserRow } from '../../../shared/users/repo.js';
import { RISK } from '../../../shared/withdrawals/risk.js';

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

describe('withdrawals: risk checks', () => {
  let client: ReturnType<typeof api>;
  let admin: UserRow;

  beforeEach(async () => {
    clock.set(new Date('2026-12-01T03:00:00.000Z'));
    client = api();
    admin = await staffUser();
  });

  const keys = new Map<string, string>();
  async function withdraw(user: UserRow, amount: number, destination: Record<string, string>) {
    if (!keys.has(user.id)) keys.set(user.id, await issueKey(user.id));
    return client.post('/v1/withdrawals').set(bearer(keys.get(user.id)!)).send({ amount, method: 'bank_transfer', destination_details: destination });
  }

  it('a destination other accounts use: review from the second account, blocked from the fourth, nothing stored', async () => {
    const shared = freshBank();
    const answers = [];
    for (let i = 0; i < 4; i += 1) answers.push(await withdraw(await fundedUser(200_000), 100_000, shared));
    expect(answers.slice(0, 3).map((r): unknown[] => [r.status, r.body.data.risk])).to.deep.equal([
      [201, { action: 'allow', flags: ['first_withdrawal', 'new_destination'] }],
      [201, { action: 'review', flags: ['first_withdrawal', 'new_destination', 'shared_destination'] }],
      [201, { action: 'review', flags: ['first_withdrawal', 'new_destination', 'shared_destination'] }],
    ]);
    const blocked = answers[3]!;
    expect(blocked.status).to.equal(403);
    expect(blocked.body.error).to.deep.include({ code: 'RISK_BLOCKED', risk: { action: 'block', flags: ['first_withdrawal', 'new_destination', 'shared_destination'] } });
    expect(await db('withdrawals').count<{ n: number }[]>('* as n')).to.deep.equal([{ n: 3 }]);
    // The same bank account written differently is the same destination.
    const again = await withdraw(await fundedUser(200_000), 100_000, { ...shared, bank_name: shared.bank_name!.toLowerCase(), account_number: shared.account_number!.replace(/(\d{4})/, '$1-') });
    expect(again.status).to.equal(403);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('many withdrawals in a short time: review from the fourth in 24 hours, blocked from the eleventh', async () => {
    const user = await fundedUser(2_000_000);
    const bank = freshBank();
    const actions: string[] = [];
    for (let i = 0; i < 11; i += 1) {
      clock.advance(60_000);
      const res = await withdraw(user, 50_000, bank);
      actions.push(res.status === 201 ? (res.body.data.risk.action as string) : (res.body.error.code as string));
      if (i === 3) expect(res.body.data.risk.flags).to.include('many_recent_withdrawals');
    }
    expect(actions).to.deep.equal(['allow', 'allow', 'allow', 'review', 'review', 'review', 'review', 'review', 'review', 'review', 'RISK_BLOCKED']);
    expect(await userBalance(user.id)).to.equal(2_000_000 - 10 * 50_000);
    clock.advance(RISK.recentWindowMs);
    const later = await withdraw(user, 50_000, bank);
    expect(later.status).to.equal(201);
    expect(later.body.data.risk.flags).to.not.include('many_recent_withdrawals');
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('an amount far above the paid history, and a new or changed destination', async () => {
    const user = await fundedUser(5_000_000);
    const home = freshBank();
    await createWithdrawal({ user, amount: 100_000, destination: home, status: 'paid', staff: admin });
    clock.advance(RISK.recentWindowMs);
    const usual = await withdraw(user, 500_000, home);
    expect(usual.body.data.risk).to.deep.equal({ action: 'allow', flags: [] });
    const far = await withdraw(user, 501_000, home);
    expect(far.body.data.risk).to.deep.equal({ action: 'review', flags: ['amount_above_history'] });
    const elsewhere = await withdraw(user, 100_000, freshBank());
    expect(elsewhere.body.data.risk).to.deep.equal({ action: 'allow', flags: ['new_destination', 'changed_destination'] });
    // The destination paid to before, but not the latest one paid to: changed, not new.
    await createWithdrawal({ user, amount: 100_000, destination: freshBank(), status: 'paid', staff: admin });
    clock.advance(RISK.recentWindowMs);
    const back = await withdraw(user, 100_000, home);
    expect(back.body.data.risk).to.deep.equal({ action: 'allow', flags: ['changed_destination'] });
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a first withdrawal of a large amount to a new destination is held for review', async () => {
    const user = await fundedUser(20_000_000);
    const res = await withdraw(user, RISK.noHistoryAmount, freshBank());
    expect(res.body.data.risk).to.deep.equal({ action: 'review', flags: ['first_withdrawal', 'new_destination', 'amount_above_history'] });
  });
});
