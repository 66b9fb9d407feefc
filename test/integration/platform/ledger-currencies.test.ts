/**
 * Currencies never mix (issue 42 point 4; decision 0023): a USD deal's money moves on USD
 * accounts only (`<code>:USD` beside the IDR ones), the database refuses an entry whose lines
 * are in two currencies and a change of an account's currency, a line naming another currency
 * than its account's is refused, and `checkLedger` balances each currency on its own.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { approve, balance, disbursementsOf, fundedDeal, instructionVia, releasePath } from '../../factories/releases.js';
import { db } from '../../../shared/db.js';
import { accountSpec, checkLedger, ensureAccounts, MixedCurrencyError, post } from '../../../shared/ledger/index.js';
import { settleByStaff } from '../../../shared/payouts/staff.js';

const ACCOUNTS = ['enterprise:funding_received', 'enterprise:buyer_fees_held', 'enterprise:payouts_in_flight', 'enterprise:payouts_sent', 'platform:enterprise_fees'];
const balances = async (suffix: string) => Object.fromEntries(await Promise.all(ACCOUNTS.map(async (c) => [c, await balance(`${c}${suffix}`)] as const)));
const diff = (after: Record<string, number>, before: Record<string, number>) => Object.fromEntries(ACCOUNTS.map((c) => [c, after[c]! - before[c]!]));
/** The IDR adjustments account (opened here: the tests start from empty tables). */
const adjustmentsId = async (trx: typeof db) => (await ensureAccounts(trx, [accountSpec({ system: 'adjustments' })])).get('system:adjustments')!;
const currencyOf = async (code: string) => (await db('ledger_accounts').where({ code }).first<{ currency: string } | undefined>('currency'))?.currency;

describe('ledger currencies (issue 42 point 4, decision 0023)', () => {
  const client = api();

  it('a live USD deal funds, releases and settles on USD accounts only; the IDR accounts do not move; the check holds per currency', async () => {
    const idrBefore = await balances('');
    const usdBefore = await balances(':USD');
    const r = await fundedDeal(client, 'live', [5_000_000], { currency: 'USD' });
    const mid = r.mids[0]!;
    expect(await currencyOf(`milestone:${mid}`)).to.equal('USD');
    expect(await currencyOf('enterprise:funding_received:USD')).to.equal('USD');
    const m = (await db('deal_milestones').where({ id: mid }).first()) as { amount: string; buyer_fee: string; seller_fee: string; funding_amount: string; payout_amount: string };
    expect(diff(await balances(':USD'), usdBefore)).to.deep.equal({
      'enterprise:funding_received': -Number(m.funding_amount),
      'enterprise:buyer_fees_held': Number(m.buyer_fee),
      'enterprise:payouts_in_flight': 0,
      'enterprise:payouts_sent': 0,
      'platform:enterprise_fees': 0,
    });

    await approve(mid);
    const ins = await instructionVia(client, r, 'USD account');
    const res = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: ins, amount: Number(m.payout_amount) }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const [d] = await disbursementsOf(mid);
    await settleByStaff(undefined, { actorId: (await db('users').where({ role: 'admin' }).first<{ id: string }>('id')).id, ip: '127.0.0.1' }, d!.id);

    expect(diff(await balances(':USD'), usdBefore)).to.deep.equal({
      'enterprise:funding_received': -Number(m.funding_amount),
      'enterprise:buyer_fees_held': 0,
      'enterprise:payouts_in_flight': 0,
      'enterprise:payouts_sent': Number(m.payout_amount),
      'platform:enterprise_fees': Number(m.buyer_fee) + Number(m.seller_fee),
    });
    expect(await balances('')).to.deep.equal(idrBefore);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a posting across currencies is refused in code and in the database; a line in another currency than its account is refused', async () => {
    const r = await fundedDeal(client, 'live', [1_000_000], { currency: 'USD' });
    const mid = r.mids[0]!;
    await adjustmentsId(db);
    // In code: two currencies in one posting.
    let err: unknown;
    try {
      await post(db, { kind: 'test.mixed', lines: [{ account: { milestoneId: mid, currency: 'USD' }, amount: 100 }, { account: { system: 'adjustments' }, amount: -100 }] });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(MixedCurrencyError);
    // In the database: the USD milestone account named as IDR.
    err = undefined;
    try {
      await post(db, { kind: 'test.mislabelled', lines: [{ account: { milestoneId: mid, currency: 'IDR' }, amount: 100 }, { account: { system: 'adjustments' }, amount: -100 }] });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(MixedCurrencyError);
    // In the database, below the code: a raw entry with an IDR and a USD line.
    err = undefined;
    try {
      await db.transaction(async (trx) => {
        const [e] = await trx('journal_entries').insert({ kind: 'test.raw_mixed', created_at: new Date() }).returning<{ id: number }[]>('id');
        const milestone = (await trx('ledger_accounts').where({ code: `milestone:${mid}` }).first<{ id: number }>('id')).id;
        await trx('journal_lines').insert([
          { entry_id: e!.id, account_id: milestone, amount: -100 },
          { entry_id: e!.id, account_id: await adjustmentsId(trx), amount: 100 },
        ]);
      });
    } catch (e) {
      err = e;
    }
    expect((err as { constraint?: string }).constraint, String(err)).to.equal('journal_entries_one_currency');
    // An account keeps its currency.
    err = undefined;
    try {
      await db('ledger_accounts').where({ code: `milestone:${mid}` }).update({ currency: 'IDR' });
    } catch (e) {
      err = e;
    }
    expect(String(err)).to.match(/currency cannot change/);
    expect(await currencyOf(`milestone:${mid}`)).to.equal('USD');
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('checkLedger balances each currency on its own: an IDR line against a USD line is two violations, not a zero sum', async () => {
    await fundedDeal(client, 'live', [1_000_000], { currency: 'USD' });
    // Planted below every trigger (replica role), in a transaction that is rolled back.
    const violations = await db
      .transaction(async (trx) => {
        await trx.raw('SET LOCAL session_replication_role = replica');
        const [e] = await trx('journal_entries').insert({ kind: 'test.planted', created_at: new Date() }).returning<{ id: number }[]>('id');
        const usd = (await trx('ledger_accounts').where({ code: 'enterprise:funding_received:USD' }).first<{ id: number }>('id')).id;
        const idr = await adjustmentsId(trx);
        await trx('journal_lines').insert([
          { entry_id: e!.id, account_id: usd, amount: 7 },
          { entry_id: e!.id, account_id: idr, amount: -7 },
        ]);
        await trx('ledger_accounts').where({ id: usd }).increment('balance', 7);
        await trx('ledger_accounts').where({ id: idr }).decrement('balance', 7);
        const found = await checkLedger(trx);
        throw Object.assign(new Error('rollback'), { found });
      })
      .catch((e: { found?: Awaited<ReturnType<typeof checkLedger>> }) => { if (!e.found) throw e; return e.found; });
    // The planted lines also sit outside their accounts' hash chains (decision 0028).
    expect(violations.filter((v) => v.rule === 'ledger-chain').map((v) => v.detail.replace(/ \(account #\d+\)/, ''))).to.deep.equal([
      "journal line 4 has no link in its account's chain: inserted",
      "journal line 5 has no link in its account's chain: inserted",
    ]);
    expect(violations.filter((v) => v.rule !== 'ledger-chain').map((v) => v.rule).sort()).to.deep.equal(['books-balance', 'books-balance', 'entry-one-currency']);
    expect(violations.filter((v) => v.rule === 'books-balance').map((v) => v.detail)).to.deep.equal([
      'the IDR account balances sum to -7, not 0',
      'the USD account balances sum to 7, not 0',
    ]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });
});
