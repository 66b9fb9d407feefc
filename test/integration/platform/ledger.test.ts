import { expect } from 'chai';
import { db, pgConstraint, pgErrorCode } from '../../../shared/db.js';
import {
  InsufficientFundsError,
  UnbalancedPostingError,
  accountSpec,
  balanceOf,
  checkLedger,
  ensureAccounts,
  post,
  postMany,
  type Posting,
} from '../../../shared/ledger/index.js';
import { clock } from '../../../shared/clock.js';
import { countRows, createUser, fundUser, rejection, userBalance, withoutTriggers } from '../../helpers/platform-factories.js';

/** Writes an entry and its lines with plain SQL in one transaction (bypassing post()). */
async function rawEntry(lines: { accountId: number; amount: number }[]): Promise<void> {
  await db.transaction(async (trx) => {
    const entries: { id: number }[] = await trx('journal_entries')
      .insert({ kind: 'test.raw', created_at: clock.now() })
      .returning('id');
    const entry = entries[0];
    if (lines.length > 0) {
      await trx('journal_lines').insert(lines.map((l) => ({ entry_id: entry!.id, account_id: l.accountId, amount: l.amount })));
    }
  });
}

/** Waits until `n` sessions of this database wait on a lock (the racers are parked). */
async function lockWaiters(n: number, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const result = await db.raw<{ rows: { n: number }[] }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if ((result.rows[0]?.n ?? 0) >= n) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} lock waiter(s)`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('platform: ledger', () => {
  describe('balanced postings', () => {
    let accountIds: Map<string, number>;
    let userId: string;
    let userCode: string;
    const adjustmentsCode = accountSpec({ system: 'adjustments' }).code;

    beforeEach(async () => {
      const user = await createUser();
      userId = user.id;
      userCode = accountSpec({ userId: user.id }).code;
      accountIds = await ensureAccounts(db, [accountSpec({ userId: user.id }), accountSpec({ system: 'adjustments' })]);
    });

    it('the database refuses at commit an entry whose lines do not sum to zero', async () => {
      const err = await rejection(
        rawEntry([
          { accountId: accountIds.get(adjustmentsCode)!, amount: -100 },
          { accountId: accountIds.get(userCode)!, amount: 99 },
        ]),
      );
      expect(pgErrorCode(err)).to.equal('23514');
      expect(pgConstraint(err)).to.equal('journal_entries_balanced');
      expect(await countRows('journal_entries')).to.equal(0);
      expect(await countRows('journal_lines')).to.equal(0);
      // The lines had moved the balances inside the transaction; the rollback undid it.
      expect(await userBalance(userId)).to.equal(0);
      expect(await balanceOf(db, { system: 'adjustments' })).to.equal(0);
    });

    it('the database refuses an entry with a single line or none', async () => {
      const single = await rejection(rawEntry([{ accountId: accountIds.get(userCode)!, amount: 5 }]));
      expect(pgConstraint(single)).to.equal('journal_entries_balanced');
      const none = await rejection(rawEntry([]));
      expect(pgConstraint(none)).to.equal('journal_entries_balanced');
      expect(await countRows('journal_entries')).to.equal(0);
    });

    it('the database accepts a balanced raw entry and its lines move the balances (several lines on one account)', async () => {
      await rawEntry([
        { accountId: accountIds.get(adjustmentsCode)!, amount: -100 },
        { accountId: accountIds.get(userCode)!, amount: 60 },
        { accountId: accountIds.get(userCode)!, amount: 40 },
      ]);
      expect(await countRows('journal_lines')).to.equal(3);
      expect(await balanceOf(db, { userId })).to.equal(100);
      expect(await userBalance(userId)).to.equal(100);
      expect(await balanceOf(db, { system: 'adjustments' })).to.equal(-100);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('applies the lines of one statement as a net change per account, whatever their order', async () => {
      // -50 then +50 on an empty account: line by line it would dip below zero.
      await rawEntry([
        { accountId: accountIds.get(userCode)!, amount: -50 },
        { accountId: accountIds.get(userCode)!, amount: 50 },
      ]);
      expect(await userBalance(userId)).to.equal(0);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('the database refuses raw lines that would overdraw a user account, and nothing moves', async () => {
      const err = await rejection(
        rawEntry([
          { accountId: accountIds.get(adjustmentsCode)!, amount: 100 },
          { accountId: accountIds.get(userCode)!, amount: -100 },
        ]),
      );
      expect(pgErrorCode(err)).to.equal('23514');
      expect(pgConstraint(err)).to.equal('ledger_accounts_balance_non_negative');
      expect(await countRows('journal_entries')).to.equal(0);
      expect(await userBalance(userId)).to.equal(0);
      expect(await balanceOf(db, { system: 'adjustments' })).to.equal(0);
    });

    it('the database refuses a zero line', async () => {
      const err = await rejection(
        rawEntry([
          { accountId: accountIds.get(adjustmentsCode)!, amount: 0 },
          { accountId: accountIds.get(userCode)!, amount: 0 },
        ]),
      );
      expect(pgConstraint(err)).to.equal('journal_lines_amount_non_zero');
    });
  });

  it('post() refuses an unbalanced, one-line or zero-line posting in code and writes nothing', async () => {
    const user = await createUser();
    const bad: Posting[] = [
      { kind: 't', lines: [{ account: { system: 'adjustments' }, amount: -100 }, { account: { userId: user.id }, amount: 90 }] },
      { kind: 't', lines: [{ account: { userId: user.id }, amount: 100 }] },
      { kind: 't', lines: [{ account: { system: 'adjustments' }, amount: 0 }, { account: { userId: user.id }, amount: 0 }] },
    ];
    for (const posting of bad) {
      const err = await rejection(post(db, posting));
      expect(err).to.be.instanceOf(UnbalancedPostingError);
    }
    const fractional = await rejection(
      post(db, { kind: 't', lines: [{ account: { system: 'adjustments' }, amount: -0.5 }, { account: { userId: user.id }, amount: 0.5 }] }),
    );
    expect(fractional).to.be.instanceOf(RangeError);
    expect(await countRows('journal_entries')).to.equal(0);
    expect(await userBalance(user.id)).to.equal(0);
  });

  it('keeps users.balance equal to the ledger account through postings', async () => {
    const alice = await createUser();
    const bob = await createUser();
    await fundUser(alice.id, 100_000);
    expect(await userBalance(alice.id)).to.equal(100_000);
    expect(await balanceOf(db, { userId: alice.id })).to.equal(100_000);

    await post(db, {
      kind: 'test.transfer',
      lines: [
        { account: { userId: alice.id }, amount: -30_000 },
        { account: { userId: bob.id }, amount: 27_500 },
        { account: { system: 'platformFees' }, amount: 2_500 },
      ],
    });
    expect(await userBalance(alice.id)).to.equal(70_000);
    expect(await userBalance(bob.id)).to.equal(27_500);
    expect(await balanceOf(db, { userId: bob.id })).to.equal(27_500);
    expect(await balanceOf(db, { system: 'platformFees' })).to.equal(2_500);
    expect(await balanceOf(db, { system: 'adjustments' })).to.equal(-100_000);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a posting inside a transaction that rolls back leaves no trace', async () => {
    const user = await createUser();
    await rejection(
      db.transaction(async (trx) => {
        await fundUser(user.id, 500, trx);
        expect(await userBalance(user.id, trx)).to.equal(500);
        throw new Error('roll back');
      }),
    );
    expect(await userBalance(user.id)).to.equal(0);
    expect(await countRows('journal_entries')).to.equal(0);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('refuses an overdraft with InsufficientFundsError; the database refuses a negative balance too', async () => {
    const user = await createUser();
    await fundUser(user.id, 100);
    const err = await rejection(
      post(db, { kind: 'test.debit', lines: [{ account: { userId: user.id }, amount: -101 }, { account: { system: 'platformFees' }, amount: 101 }] }),
    );
    expect(err).to.be.instanceOf(InsufficientFundsError);
    expect((err as InsufficientFundsError).code).to.equal('INSUFFICIENT_BALANCE');
    expect(await userBalance(user.id)).to.equal(100);

    // Behind the balance guard (switched off here) the CHECK constraints still hold.
    const dbErr = await rejection(withoutTriggers((trx) => trx('users').where({ id: user.id }).update({ balance: -1 })));
    expect(pgConstraint(dbErr)).to.equal('users_balance_non_negative');
    const accErr = await rejection(
      withoutTriggers((trx) => trx('ledger_accounts').where({ user_id: user.id }).update({ balance: -1 })),
    );
    expect(pgConstraint(accErr)).to.equal('ledger_accounts_balance_non_negative');
    expect(await userBalance(user.id)).to.equal(100);
  });

  it("answers InsufficientFundsError (400 INSUFFICIENT_BALANCE) when the database's non-negative CHECK refuses the lines", async () => {
    const user = await createUser();
    await fundUser(user.id, 100);
    // A projection lagging behind its account: the code's check (on the account) passes,
    // the users.balance CHECK refuses the lines inserted by post().
    await withoutTriggers((trx) => trx('users').where({ id: user.id }).update({ balance: 10 }));
    const err = await rejection(
      post(db, { kind: 'test.debit', lines: [{ account: { userId: user.id }, amount: -50 }, { account: { system: 'platformFees' }, amount: 50 }] }),
    );
    expect(err).to.be.instanceOf(InsufficientFundsError);
    expect(err).to.include({ status: 400, code: 'INSUFFICIENT_BALANCE' });
    expect(await balanceOf(db, { userId: user.id })).to.equal(100);
    expect(await countRows('journal_entries')).to.equal(1);
  });

  it('applies a posting with several lines on one account as their sum', async () => {
    const user = await createUser();
    await fundUser(user.id, 100);
    await post(db, {
      kind: 'test.split',
      lines: [
        { account: { userId: user.id }, amount: -100 },
        { account: { userId: user.id }, amount: 30 },
        { account: { system: 'platformFees' }, amount: 70 },
      ],
    });
    expect(await userBalance(user.id)).to.equal(30);
    expect(await balanceOf(db, { userId: user.id })).to.equal(30);
    expect(await balanceOf(db, { system: 'platformFees' })).to.equal(70);
    const over = await rejection(
      post(db, {
        kind: 'test.split',
        lines: [
          { account: { userId: user.id }, amount: -40 },
          { account: { userId: user.id }, amount: 5 },
          { account: { system: 'platformFees' }, amount: 35 },
        ],
      }),
    );
    expect(over).to.be.instanceOf(InsufficientFundsError);
    expect(await userBalance(user.id)).to.equal(30);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  describe('balance guard: balances move only through journal lines', () => {
    let userId: string;
    beforeEach(async () => {
      userId = (await createUser()).id;
      await fundUser(userId, 1_000);
    });

    async function expectGuarded(attempt: PromiseLike<unknown>, what: string): Promise<void> {
      const err = await rejection(attempt);
      expect(pgErrorCode(err), (err as Error).message).to.equal('42501');
      expect((err as Error).message).to.include(what);
    }

    it('refuses UPDATE users SET balance = balance + 1', async () => {
      await expectGuarded(db.raw('UPDATE users SET balance = balance + 1 WHERE id = ?', [userId]), 'users.balance');
      await expectGuarded(db('users').where({ id: userId }).update({ balance: 0 }), 'users.balance');
      expect(await userBalance(userId)).to.equal(1_000);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('refuses UPDATE ledger_accounts SET balance = ... on user and system accounts', async () => {
      await expectGuarded(
        db.raw('UPDATE ledger_accounts SET balance = balance + 1 WHERE user_id = ?', [userId]),
        'ledger_accounts.balance',
      );
      await expectGuarded(
        db('ledger_accounts').where({ code: accountSpec({ system: 'adjustments' }).code }).update({ balance: 0 }),
        'ledger_accounts.balance',
      );
      expect(await balanceOf(db, { userId })).to.equal(1_000);
      expect(await balanceOf(db, { system: 'adjustments' })).to.equal(-1_000);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('is not opened by setting the flag its own trigger sets', async () => {
      await expectGuarded(
        db.transaction(async (trx) => {
          await trx.raw(`SELECT set_config('ledger.applying_lines', 'on', true)`);
          await trx.raw('UPDATE users SET balance = balance + 1 WHERE id = ?', [userId]);
        }),
        'users.balance',
      );
      expect(await userBalance(userId)).to.equal(1_000);
    });

    it('refuses a new account or user that starts with a balance', async () => {
      await expectGuarded(
        db('ledger_accounts').insert({ code: 'escrow:forged', kind: 'escrow', balance: 500, created_at: clock.now() }),
        'ledger_accounts.balance',
      );
      const now = clock.now();
      await expectGuarded(
        db('users').insert({
          email: 'rich@example.test',
          username: 'rich_user',
          full_name: 'Rich',
          balance: 5,
          created_at: now,
          updated_at: now,
        }),
        'users.balance',
      );
      expect(await countRows('users')).to.equal(1);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('refuses moving an account to another user or kind', async () => {
      const other = await createUser();
      // The guard answers before the unique index on user_id would.
      await expectGuarded(
        db.raw(`UPDATE ledger_accounts SET user_id = ? WHERE user_id = ?`, [other.id, userId]),
        'ledger_accounts.user_id',
      );
      await expectGuarded(
        db('ledger_accounts').where({ code: accountSpec({ system: 'adjustments' }).code }).update({ kind: 'platform_fee' }),
        'ledger_accounts.kind',
      );
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('lets the other columns change (profile edits, account settings)', async () => {
      await db('users').where({ id: userId }).update({ full_name: 'Renamed', updated_at: clock.now() });
      await db('ledger_accounts').where({ code: accountSpec({ system: 'platformFees' }).code }).update({ allow_negative: false });
      await db.raw('UPDATE users SET balance = balance WHERE id = ?', [userId]);
      expect(await userBalance(userId)).to.equal(1_000);
    });
  });

  describe('user accounts are opened at sign-up', () => {
    it('a users row inserted directly (as the factories do) already has its ledger account', async () => {
      const user = await createUser();
      const account = (await db('ledger_accounts').where({ user_id: user.id }).first()) as
        | { code: string; kind: string; balance: number; allow_negative: boolean }
        | undefined;
      expect(account).to.include({ code: `user:${user.id}`, kind: 'user', balance: 0, allow_negative: false });
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('post() never opens a user account: a posting to an unknown user fails and writes nothing', async () => {
      const err = await rejection(
        post(db, {
          kind: 'test.ghost',
          lines: [
            { account: { system: 'adjustments' }, amount: -5 },
            { account: { userId: '00000000-0000-4000-8000-000000000000' }, amount: 5 },
          ],
        }),
      );
      expect((err as Error).message).to.include('no ledger account');
      expect(await countRows('journal_entries')).to.equal(0);
    });

    it('two postings to a brand-new user, while a third transaction holds the user row and then posts, finish without deadlock', async () => {
      const user = await createUser();
      let holding!: () => void;
      const held = new Promise<void>((resolve) => (holding = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const credit = (amount: number, refId: string): Posting => ({
        kind: 'test.race',
        refId,
        lines: [
          // Neither the user's account nor the adjustments account has been used yet.
          { account: { system: 'adjustments' }, amount: -amount },
          { account: { userId: user.id }, amount },
        ],
      });
      // A service that locks the user row first and then posts (the documented order).
      const holder = db.transaction(async (trx) => {
        await trx('users').select('id').where({ id: user.id }).forUpdate();
        holding();
        await released;
        await post(trx, credit(300, 'holder'));
      });
      await held;
      const racers = [post(undefined, credit(100, 'a')), post(undefined, credit(100, 'b'))];
      await lockWaiters(2);
      release();
      const results = await Promise.allSettled([holder, ...racers]);
      const outcome = results.map((r) => (r.status === 'fulfilled' ? 'ok' : `${pgErrorCode(r.reason) ?? ''} ${String(r.reason)}`));
      expect(outcome).to.deep.equal(['ok', 'ok', 'ok']);
      expect(await userBalance(user.id)).to.equal(500);
      expect(await balanceOf(db, { userId: user.id })).to.equal(500);
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });

  it('never overdraws under 20 concurrent debits of 30 from a balance of 100', async () => {
    const user = await createUser();
    await fundUser(user.id, 100);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        post(undefined, {
          kind: 'test.debit',
          refId: String(i),
          lines: [
            { account: { userId: user.id }, amount: -30 },
            // The fee account does not exist yet: the racers also race to create it.
            { account: { system: 'platformFees' }, amount: 30 },
          ],
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok).to.have.length(3);
    expect(failed).to.have.length(17);
    for (const f of failed) expect(f.reason).to.be.instanceOf(InsufficientFundsError);
    expect(await userBalance(user.id)).to.equal(10);
    expect(await balanceOf(db, { userId: user.id })).to.equal(10);
    expect(await balanceOf(db, { system: 'platformFees' })).to.equal(90);
    expect(await countRows('journal_entries')).to.equal(4);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('concurrent transfers in both directions between two users neither deadlock nor lose money', async () => {
    const a = await createUser();
    const b = await createUser();
    await fundUser(a.id, 1_000);
    await fundUser(b.id, 1_000);
    const moves = Array.from({ length: 30 }, (_, i) => {
      const [from, to] = i % 2 === 0 ? [a, b] : [b, a];
      return post(undefined, {
        kind: 'test.transfer',
        lines: [
          { account: { userId: from.id }, amount: -(10 + i) },
          { account: { userId: to.id }, amount: 10 + i },
        ],
      });
    });
    await Promise.all(moves);
    // Even moves: a -> b of 10,12,...,38 (sum 360); odd: b -> a of 11,...,39 (sum 375).
    expect(await userBalance(a.id)).to.equal(1_000 - 360 + 375);
    expect(await userBalance(b.id)).to.equal(1_000 + 360 - 375);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  describe('checkLedger', () => {
    let userId: string;
    beforeEach(async () => {
      userId = (await createUser()).id;
      await fundUser(userId, 1_000);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('detects a tampered users.balance', async () => {
      await withoutTriggers((trx) => trx('users').where({ id: userId }).update({ balance: trx.raw('balance + 1') }));
      const rules = (await checkLedger(db)).map((v) => v.rule);
      expect(rules).to.deep.equal(['user-projection']);
    });

    it('detects a tampered ledger account balance', async () => {
      await withoutTriggers((trx) =>
        trx('ledger_accounts').where({ user_id: userId }).update({ balance: trx.raw('balance + 1') }),
      );
      const violations = await checkLedger(db);
      const rules = violations.map((v) => v.rule);
      expect(rules).to.include.members(['account-projection', 'user-projection', 'books-balance']);
      expect(violations.find((v) => v.rule === 'account-projection')!.detail).to.include(`user:${userId}`);
    });

    it('detects a user without a ledger account, and one with a balance but no account', async () => {
      // Inserted with triggers off, so the database does not open the account.
      const other = await withoutTriggers((trx) => createUser(trx));
      let violations = await checkLedger(db);
      expect(violations.map((v) => v.rule)).to.deep.equal(['user-account']);
      expect(violations[0]!.detail).to.include(other.id);
      await withoutTriggers((trx) => trx('users').where({ id: other.id }).update({ balance: 5 }));
      violations = await checkLedger(db);
      expect(violations.map((v) => v.rule)).to.deep.equal(['user-projection', 'user-account']);
      expect(violations[0]!.detail).to.include(other.id);
    });
  });

  it('keeps journal lines and entries append-only (UPDATE and DELETE refused)', async () => {
    const user = await createUser();
    await fundUser(user.id, 1_000);
    for (const attempt of [
      db('journal_lines').update({ amount: db.raw('amount * 2') }),
      db('journal_lines').delete(),
      db('journal_entries').update({ memo: 'rewritten' }),
      db('journal_entries').delete(),
    ]) {
      const err = await rejection(attempt);
      expect(pgErrorCode(err)).to.equal('42501');
      expect((err as Error).message).to.include('append-only');
    }
    expect(await countRows('journal_lines')).to.equal(2);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('posts a postingKey once: a repeat returns the first entry and moves no money', async () => {
    const user = await createUser();
    const deposit: Posting = {
      kind: 'test.deposit',
      postingKey: 'deposit:order-1',
      lines: [
        { account: { system: 'gatewayClearing' }, amount: -50_000 },
        { account: { userId: user.id }, amount: 50_000 },
      ],
    };
    const first = await post(db, deposit);
    expect(first.duplicate).to.equal(false);
    const second = await post(db, deposit);
    expect(second).to.deep.equal({ entryId: first.entryId, duplicate: true });
    expect(await userBalance(user.id)).to.equal(50_000);
    expect(await countRows('journal_entries')).to.equal(1);
  });

  it('posts a postingKey once under 10 concurrent attempts', async () => {
    const user = await createUser();
    const deposit: Posting = {
      kind: 'test.deposit',
      postingKey: 'deposit:order-2',
      lines: [
        { account: { system: 'gatewayClearing' }, amount: -70_000 },
        { account: { userId: user.id }, amount: 70_000 },
      ],
    };
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => post(undefined, deposit)));
    const fresh = results.filter((r) => r.status === 'fulfilled' && !r.value.duplicate);
    expect(fresh).to.have.length(1);
    for (const r of results) {
      if (r.status === 'rejected') expect((r.reason as { code?: string }).code).to.equal('CONCURRENT_MODIFICATION');
    }
    expect(await userBalance(user.id)).to.equal(70_000);
    expect(await countRows('journal_entries')).to.equal(1);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  describe('postMany: several postings in one go, as if made one after another', () => {
    const move = (from: Posting['lines'][number]['account'], to: Posting['lines'][number]['account'], amount: number, postingKey?: string): Posting => ({
      kind: 'test.move',
      ...(postingKey ? { postingKey, refType: 'test', refId: postingKey } : {}),
      lines: [
        { account: from, amount: -amount },
        { account: to, amount },
      ],
    });

    it('ties every line to its own entry: each entry balances and carries its own reference', async () => {
      const users = [await createUser(), await createUser(), await createUser()];
      const postings = users.map((u, k) => move({ system: 'gatewayClearing' }, { userId: u.id }, 1_000 * (k + 1), `batch:${k}`));
      const results = await postMany(db, postings);
      expect(results.map((r) => r.duplicate)).to.deep.equal([false, false, false]);
      expect(new Set(results.map((r) => r.entryId)).size).to.equal(3);
      for (const [k, u] of users.entries()) {
        const entry = (await db('journal_entries').where({ id: results[k]!.entryId }).first()) as { ref_id: string; posting_key: string };
        expect(entry).to.deep.include({ ref_id: `batch:${k}`, posting_key: `batch:${k}` });
        const lines = (await db('journal_lines').where({ entry_id: results[k]!.entryId }).orderBy('amount')) as { amount: number }[];
        expect(lines.map((l) => Number(l.amount))).to.deep.equal([-1_000 * (k + 1), 1_000 * (k + 1)]);
        expect(await userBalance(u.id)).to.equal(1_000 * (k + 1));
      }
      expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(-6_000);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('checks balances in order: a credit then a spend of it passes; the spend first refuses all and writes nothing', async () => {
      const a = await createUser();
      const b = await createUser();
      await postMany(db, [move({ system: 'adjustments' }, { userId: a.id }, 500), move({ userId: a.id }, { userId: b.id }, 500)]);
      expect(await userBalance(a.id)).to.equal(0);
      expect(await userBalance(b.id)).to.equal(500);
      const entries = await countRows('journal_entries');
      const refused = await rejection(postMany(db, [move({ userId: b.id }, { userId: a.id }, 800), move({ system: 'adjustments' }, { userId: b.id }, 800)]));
      expect(refused).to.be.instanceOf(InsufficientFundsError);
      expect(await countRows('journal_entries')).to.equal(entries);
      expect(await userBalance(a.id)).to.equal(0);
      expect(await userBalance(b.id)).to.equal(500);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a key already used, or used earlier in the list, is a duplicate of the first entry and moves nothing', async () => {
      const u = await createUser();
      const first = await post(db, move({ system: 'gatewayClearing' }, { userId: u.id }, 100, 'dup:old'));
      const results = await postMany(db, [
        move({ system: 'gatewayClearing' }, { userId: u.id }, 100, 'dup:old'),
        move({ system: 'gatewayClearing' }, { userId: u.id }, 200, 'dup:new'),
        move({ system: 'gatewayClearing' }, { userId: u.id }, 200, 'dup:new'),
        move({ system: 'gatewayClearing' }, { userId: u.id }, 300),
      ]);
      expect(results[0]).to.deep.equal({ entryId: first.entryId, duplicate: true });
      expect(results[1]!.duplicate).to.equal(false);
      expect(results[2]).to.deep.equal({ entryId: results[1]!.entryId, duplicate: true });
      expect(results[3]!.duplicate).to.equal(false);
      expect(await userBalance(u.id)).to.equal(600);
      expect(await countRows('journal_entries')).to.equal(3);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('an unbalanced posting anywhere in the list refuses all before touching the database', async () => {
      const u = await createUser();
      const bad: Posting = { kind: 'test.bad', lines: [{ account: { userId: u.id }, amount: 5 }, { account: { system: 'adjustments' }, amount: -4 }] };
      expect(await rejection(postMany(db, [move({ system: 'adjustments' }, { userId: u.id }, 5), bad]))).to.be.instanceOf(UnbalancedPostingError);
      expect(await countRows('journal_entries')).to.equal(0);
      expect(await postMany(db, [])).to.deep.equal([]);
    });
  });

  it("a posting's lock on a users row does not block rows that reference the user (foreign-key checks), so it closes no deadlock cycle", async () => {
    const user = await createUser();
    const other = await createUser();
    const trx = await db.transaction();
    try {
      await post(trx, { kind: 'test.hold', lines: [{ account: { system: 'adjustments' }, amount: -10 }, { account: { userId: user.id }, amount: 10 }] });
      // Another connection inserts rows that reference the locked user while the posting is open.
      const inserted = await db.transaction(async (t2) => {
        await t2.raw("SET LOCAL lock_timeout = '1s'");
        const rows = await t2('notifications')
          .insert({ user_id: user.id, type: 'escrow_joined', title: 't', body: 'b', source_key: `fk-${other.id}`, created_at: clock.now() })
          .returning('id');
        return rows.length;
      });
      expect(inserted).to.equal(1);
    } finally {
      await trx.commit();
    }
    expect(await userBalance(user.id)).to.equal(10);
  });
});
