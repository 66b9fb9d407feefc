/**
 * POST /v1/withdrawals (consumer spec 4.4): the amount leaves the balance at request time
 * (user -> payouts in flight, one posting), the fee is fixed then, every error of the spec,
 * the step rule and its whole-balance exception, idempotency. Then the caller's reads:
 * GET /v1/withdrawals (paginated, by status), GET /v1/withdrawals/:id, the config.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { createEscrow } from '../../factories/escrows.js';
import { createWithdrawal, fundedUser, freshBank, grantVoucher, setWithdrawSettings, staffUser, systemBooks, userBalance } from '../../factories/withdrawals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import { reject } from '../../../shared/withdrawals/service.js';
import type { UserRow } from '../../../shared/users/repo.js';

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

async function entriesOf(withdrawalId: string): Promise<{ kind: string; posting_key: string }[]> {
  return (await db('journal_entries').select('kind', 'posting_key').where({ ref_type: 'withdrawal', ref_id: withdrawalId }).orderBy('id')) as {
    kind: string;
    posting_key: string;
  }[];
}

async function countWithdrawals(): Promise<number> {
  const [row] = await db('withdrawals').count<{ n: number }[]>('* as n');
  return Number(row!.n);
}

describe('withdrawals: requests', () => {
  let client: ReturnType<typeof api>;
  let user: UserRow;
  let key: string;

  beforeEach(async () => {
    clock.set(new Date('2026-12-01T03:00:00.000Z'));
    client = api();
    user = await fundedUser(200_000);
    key = await issueKey(user.id);
  });

  const withdraw = (body: Record<string, unknown>, auth = key) => client.post('/v1/withdrawals').set(bearer(auth)).send(body);

  it('201: takes the amount from the balance into payouts in flight, with the fallback fee', async () => {
    const before = await systemBooks();
    const res = await withdraw({ amount: 100_000, method: 'bank_transfer', destination_details: { bank_name: 'BCA', account_number: '1234-5678-90', account_holder: 'Budi Santoso' }, destination_ack: true });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const w = res.body.data;
    expect(w).to.deep.include({
      user_id: user.id,
      amount: '100000',
      fee_amount: '5000',
      net_amount: '95000',
      method: 'bank_transfer',
      destination_details: JSON.stringify({ bank_name: 'BCA', account_number: '1234567890', account_holder: 'Budi Santoso' }),
      status: 'pending',
      admin_note: null,
      processed_by: null,
      processed_at: null,
      risk: { action: 'allow', flags: ['first_withdrawal', 'new_destination'] },
      destination_ack: true,
      created_at: '2026-12-01T03:00:00.000Z',
    });
    expect(w.fee_breakdown).to.deep.equal({ base: '5000', loyalty_discount: '0', voucher_discount: '0', voucher_redemption_id: null });
    expect(await userBalance(user.id)).to.equal(100_000);
    const after = await systemBooks();
    expect(after.inFlight - before.inFlight).to.equal(100_000);
    expect(after.sent - before.sent).to.equal(0);
    expect(after.fees - before.fees).to.equal(0);
    expect(await entriesOf(w.id as string)).to.deep.equal([{ kind: 'withdrawal', posting_key: `withdrawal:${w.id}` }]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('accepts every method with its destination fields', async () => {
    const rich = await fundedUser(1_000_000);
    const richKey = await issueKey(rich.id);
    const cases: [string, Record<string, string>, Record<string, string>][] = [
      ['dana', { phone: '0812 3456 7890' }, { phone: '+6281234567890' }],
      ['gopay', { phone: '+6281298765432' }, { phone: '+6281298765432' }],
      ['crypto', { network: 'TRC20', wallet_address: 'TXyz1234567890abcdefghijklmnopqr' }, { network: 'TRC20', wallet_address: 'TXyz1234567890abcdefghijklmnopqr' }],
    ];
    for (const [method, given, stored] of cases) {
      const res = await withdraw({ amount: 50_000, method, destination_details: given }, richKey);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data.method).to.equal(method);
      expect(JSON.parse(res.body.data.destination_details as string)).to.deep.equal(stored);
      expect(res.body.data.destination_ack).to.equal(false);
    }
    expect(await userBalance(rich.id)).to.equal(850_000);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  describe('the amount', () => {
    it('INVALID_AMOUNT below the minimum, above the maximum, not whole; nothing moves', async () => {
      const rich = await fundedUser(200_000_000);
      const richKey = await issueKey(rich.id);
      for (const amount of [49_999, 100_001_000, 0, -50_000, 50_000.5, '50.000', null, true]) {
        const res = await withdraw({ amount, method: 'bank_transfer', destination_details: freshBank() }, richKey);
        expect(res.status, `${String(amount)}: ${JSON.stringify(res.body)}`).to.equal(400);
        expect(res.body.error).to.deep.include({ code: 'INVALID_AMOUNT', min: 50_000, max: 100_000_000, step: 1000 });
      }
      const missing = await withdraw({ method: 'bank_transfer', destination_details: freshBank() }, richKey);
      expect(missing.body.error.code).to.equal('INVALID_AMOUNT');
      expect(await userBalance(rich.id)).to.equal(200_000_000);
      expect(await countWithdrawals()).to.equal(0);
    });

    it('accepts a digit string and the exact limits', async () => {
      const rich = await fundedUser(100_050_000);
      const richKey = await issueKey(rich.id);
      expect((await withdraw({ amount: '50000', method: 'bank_transfer', destination_details: freshBank() }, richKey)).status).to.equal(201);
      expect((await withdraw({ amount: 100_000_000, method: 'bank_transfer', destination_details: freshBank() }, richKey)).status).to.equal(201);
      expect(await userBalance(rich.id)).to.equal(0);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('must be a multiple of the step unless it is the whole balance', async () => {
      const odd = await fundedUser(123_456);
      const oddKey = await issueKey(odd.id);
      const off = await withdraw({ amount: 100_500, method: 'bank_transfer', destination_details: freshBank() }, oddKey);
      expect(off.status).to.equal(400);
      expect(off.body.error.code).to.equal('INVALID_AMOUNT');
      expect(off.body.error.message).to.match(/multiple of 1000/);
      // One rupiah short of the whole balance is not the whole balance.
      expect((await withdraw({ amount: 123_455, method: 'bank_transfer', destination_details: freshBank() }, oddKey)).body.error.code).to.equal('INVALID_AMOUNT');
      const whole = await withdraw({ amount: 123_456, method: 'bank_transfer', destination_details: freshBank() }, oddKey);
      expect(whole.status, JSON.stringify(whole.body)).to.equal(201);
      expect(whole.body.data).to.include({ amount: '123456', fee_amount: '5000', net_amount: '118456' });
      expect(await userBalance(odd.id)).to.equal(0);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('the whole balance still has to reach the minimum', async () => {
      const small = await fundedUser(30_500);
      const res = await withdraw({ amount: 30_500, method: 'dana', destination_details: { phone: '081234567890' } }, await issueKey(small.id));
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_AMOUNT');
      expect(await userBalance(small.id)).to.equal(30_500);
    });

    it('follows the withdraw_limits setting (and the step of the setting)', async () => {
      await setWithdrawSettings({ limits: { min_idr: 10_000, max_idr: 150_000, step_idr: 5000 } });
      expect((await withdraw({ amount: 12_000, method: 'bank_transfer', destination_details: freshBank() })).body.error.code).to.equal('INVALID_AMOUNT');
      expect((await withdraw({ amount: 155_000, method: 'bank_transfer', destination_details: freshBank() })).body.error.code).to.equal('INVALID_AMOUNT');
      const ok = await withdraw({ amount: 15_000, method: 'bank_transfer', destination_details: freshBank() });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
      expect(ok.body.data.net_amount).to.equal('10000');
    });

    it('INSUFFICIENT_BALANCE above the balance; nothing moves', async () => {
      const res = await withdraw({ amount: 201_000, method: 'bank_transfer', destination_details: freshBank() });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.deep.include({ code: 'INSUFFICIENT_BALANCE', balance: 200_000 });
      expect(await userBalance(user.id)).to.equal(200_000);
      const empty = await fundedUser(0);
      expect((await withdraw({ amount: 50_000, method: 'bank_transfer', destination_details: freshBank() }, await issueKey(empty.id))).body.error.code).to.equal('INSUFFICIENT_BALANCE');
      expect(await countWithdrawals()).to.equal(0);
    });

    it('FEE_EXCEEDS_AMOUNT when the fee takes the whole amount or more', async () => {
      await setWithdrawSettings({ fee: { type: 'fixed', value: 60_000, min_idr: 0, max_idr: 100_000 } });
      const more = await withdraw({ amount: 50_000, method: 'bank_transfer', destination_details: freshBank() });
      expect(more.status).to.equal(400);
      expect(more.body.error).to.deep.include({ code: 'FEE_EXCEEDS_AMOUNT', fee: 60_000 });
      await setWithdrawSettings({ fee: { type: 'fixed', value: 50_000, min_idr: 0, max_idr: 100_000 } });
      expect((await withdraw({ amount: 50_000, method: 'bank_transfer', destination_details: freshBank() })).body.error.code).to.equal('FEE_EXCEEDS_AMOUNT');
      const ok = await withdraw({ amount: 51_000, method: 'bank_transfer', destination_details: freshBank() });
      expect(ok.status).to.equal(201);
      expect(ok.body.data).to.include({ fee_amount: '50000', net_amount: '1000' });
      expect(await userBalance(user.id)).to.equal(149_000);
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });

  describe('method, destination and account', () => {
    it('INVALID_METHOD for an unknown or missing method', async () => {
      for (const method of ['ovo', 'BANK_TRANSFER', '', 7, undefined]) {
        const res = await withdraw({ amount: 100_000, method, destination_details: freshBank() });
        expect(res.status, String(method)).to.equal(400);
        expect(res.body.error.code).to.equal('INVALID_METHOD');
      }
    });

    it('MISSING_DESTINATION names the fields the method needs', async () => {
      const cases: [string, unknown, string[]][] = [
        ['bank_transfer', undefined, ['bank_name', 'account_number', 'account_holder']],
        ['bank_transfer', { bank_name: 'BCA' }, ['account_number', 'account_holder']],
        ['dana', { account_number: '123' }, ['phone']],
        ['gopay', { phone: '021-555-0100' }, ['phone']],
        ['crypto', { wallet_address: 'TXyz1234567890abcdefghijklmnopqr' }, ['network']],
        ['crypto', 'TRC20 TXyz1234567890', ['network', 'wallet_address']],
      ];
      for (const [method, destination_details, fields] of cases) {
        const res = await withdraw({ amount: 100_000, method, destination_details });
        expect(res.status, `${method} ${JSON.stringify(destination_details)}`).to.equal(400);
        expect(res.body.error).to.deep.include({ code: 'MISSING_DESTINATION', fields });
      }
      expect(await userBalance(user.id)).to.equal(200_000);
    });

    it('EMAIL_NOT_VERIFIED (403) before anything else, whatever the body', async () => {
      const unverified = await fundedUser(200_000, { verified: false });
      const k = await issueKey(unverified.id);
      for (const body of [{ amount: 100_000, method: 'bank_transfer', destination_details: freshBank() }, { amount: 1, method: 'x' }, {}]) {
        const res = await withdraw(body, k);
        expect(res.status).to.equal(403);
        expect(res.body.error.code).to.equal('EMAIL_NOT_VERIFIED');
      }
      expect(await userBalance(unverified.id)).to.equal(200_000);
    });

    it('INVALID_BODY for unknown fields or a non-boolean destination_ack; 401 without credentials', async () => {
      const extra = await withdraw({ amount: 100_000, method: 'bank_transfer', destination_details: freshBank(), fee_amount: 0 });
      expect(extra.status).to.equal(400);
      expect(extra.body.error.code).to.equal('INVALID_BODY');
      const ack = await withdraw({ amount: 100_000, method: 'bank_transfer', destination_details: freshBank(), destination_ack: 'yes' });
      expect(ack.body.error.code).to.equal('INVALID_BODY');
      const anon = await client.post('/v1/withdrawals').send({ amount: 100_000, method: 'bank_transfer', destination_details: freshBank() });
      expect(anon.status).to.equal(401);
      expect(anon.body.error.code).to.equal('UNAUTHORIZED');
    });
  });

  describe('idempotency', () => {
    it('a retry with the same key answers the first withdrawal again and takes the money once', async () => {
      const idem = randomUUID();
      const body = { amount: 100_000, method: 'bank_transfer', destination_details: freshBank() };
      const first = await client.post('/v1/withdrawals').set(bearer(key)).set('Idempotency-Key', idem).send(body);
      expect(first.status).to.equal(201);
      const again = await client.post('/v1/withdrawals').set(bearer(key)).set('Idempotency-Key', idem).send(body);
      expect(again.status).to.equal(201);
      expect(again.headers['idempotent-replay']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expect(await userBalance(user.id)).to.equal(100_000);
      expect(await countWithdrawals()).to.equal(1);
      const other = await client.post('/v1/withdrawals').set(bearer(key)).set('Idempotency-Key', idem).send({ ...body, amount: 50_000 });
      expect(other.status).to.equal(422);
      expect(other.body.error.code).to.equal('IDEMPOTENCY_KEY_CONFLICT');
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a refused request releases its key: the retry runs again', async () => {
      const idem = randomUUID();
      const body = { amount: 300_000, method: 'bank_transfer', destination_details: freshBank() };
      expect((await client.post('/v1/withdrawals').set(bearer(key)).set('Idempotency-Key', idem).send(body)).body.error.code).to.equal('INSUFFICIENT_BALANCE');
      const { escrow } = await createEscrow({ status: 'released', seller: user, amount: 150_000 });
      expect(escrow.fee_amount).to.equal(2000);
      expect(await userBalance(user.id)).to.equal(348_000);
      const retry = await client.post('/v1/withdrawals').set(bearer(key)).set('Idempotency-Key', idem).send(body);
      expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
      expect(await userBalance(user.id)).to.equal(48_000);
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });

  describe('the fee', () => {
    it('follows a percentage setting with its floor and cap', async () => {
      const rich = await fundedUser(10_000_000);
      const k = await issueKey(rich.id);
      await setWithdrawSettings({ fee: { type: 'percentage', value: 0.5, min_idr: 2500, max_idr: 20_000 } });
      const cases: [number, string][] = [
        [100_000, '2500'],
        [1_000_000, '5000'],
        [5_000_000, '20000'],
      ];
      for (const [amount, fee] of cases) {
        const res = await withdraw({ amount, method: 'bank_transfer', destination_details: freshBank() }, k);
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
        expect(res.body.data.fee_amount, String(amount)).to.equal(fee);
        expect(res.body.data.net_amount).to.equal(String(amount - Number(fee)));
      }
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('falls back to fixed Rp5.000 when the setting is invalid', async () => {
      await setWithdrawSettings({ fee: { type: 'percentage', value: 'one', min_idr: 0, max_idr: 0 } });
      const res = await withdraw({ amount: 100_000, method: 'bank_transfer', destination_details: freshBank() });
      expect(res.body.data.fee_amount).to.equal('5000');
    });

    it('a cap of 0 makes it free', async () => {
      await setWithdrawSettings({ fee: { type: 'fixed', value: 5000, min_idr: 2500, max_idr: 0 } });
      const res = await withdraw({ amount: 100_000, method: 'bank_transfer', destination_details: freshBank() });
      expect(res.body.data).to.include({ fee_amount: '0', net_amount: '100000' });
    });

    it('gives loyal users the loyalty discount (3 paid withdrawals, or 5 released escrows)', async () => {
      await setWithdrawSettings({ fee: { type: 'fixed', value: 6000, min_idr: 2500, max_idr: 25_000, loyalty_discount_percent: 50 } });
      const loyal = await fundedUser(1_000_000);
      const k = await issueKey(loyal.id);
      const bank = freshBank();
      for (let i = 0; i < 2; i += 1) await createWithdrawal({ user: loyal, amount: 100_000, destination: bank, status: 'paid' });
      const notYet = await withdraw({ amount: 100_000, method: 'bank_transfer', destination_details: bank }, k);
      expect(notYet.body.data.fee_amount).to.equal('6000');
      await createWithdrawal({ user: loyal, amount: 100_000, destination: bank, status: 'paid' });
      const now = await withdraw({ amount: 100_000, method: 'bank_transfer', destination_details: bank }, k);
      expect(now.body.data).to.include({ fee_amount: '3000', net_amount: '97000' });
      expect(now.body.data.fee_breakdown).to.deep.include({ base: '6000', loyalty_discount: '3000' });

      const seller = await fundedUser(0);
      for (let i = 0; i < 4; i += 1) await createEscrow({ status: 'released', seller, amount: 100_000 });
      const sk = await issueKey(seller.id);
      expect((await withdraw({ amount: 50_000, method: 'bank_transfer', destination_details: freshBank() }, sk)).body.data.fee_amount).to.equal('6000');
      await createEscrow({ status: 'released', seller, amount: 100_000 });
      expect((await withdraw({ amount: 50_000, method: 'bank_transfer', destination_details: freshBank() }, sk)).body.data.fee_amount).to.equal('3000');
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('consumes the best voucher (after loyalty), once; an expired voucher is not used', async () => {
      const expired = await grantVoucher(user.id, { amount_off: 5000, expires_at: new Date('2026-11-30T00:00:00.000Z') });
      const small = await grantVoucher(user.id, { amount_off: 1000 });
      const best = await grantVoucher(user.id, { percent_off: 50, max_discount_amount: 4000 });
      const res = await withdraw({ amount: 50_000, method: 'bank_transfer', destination_details: freshBank() });
      expect(res.status).to.equal(201);
      expect(res.body.data).to.include({ fee_amount: '2500', net_amount: '47500' });
      expect(res.body.data.fee_breakdown).to.deep.equal({ base: '5000', loyalty_discount: '0', voucher_discount: '2500', voucher_redemption_id: best.redemptionId });
      const rows = await db('withdrawal_fee_voucher_redemptions').select<{ id: string; status: string; withdrawal_id: string | null }[]>('id', 'status', 'withdrawal_id');
      const byId = new Map(rows.map((r) => [r.id, r]));
      expect(byId.get(best.redemptionId)).to.include({ status: 'used', withdrawal_id: res.body.data.id });
      expect(byId.get(small.redemptionId)).to.include({ status: 'available', withdrawal_id: null });
      expect(byId.get(expired.redemptionId)).to.include({ status: 'available', withdrawal_id: null });
      // The next one gets the remaining (smaller) voucher.
      const next = await withdraw({ amount: 50_000, method: 'bank_transfer', destination_details: freshBank() });
      expect(next.body.data).to.include({ fee_amount: '4000' });
      expect(next.body.data.fee_breakdown.voucher_redemption_id).to.equal(small.redemptionId);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('voucher ties go to the earliest expiry', async () => {
      const later = await grantVoucher(user.id, { amount_off: 2000, expires_at: new Date('2026-12-20T00:00:00.000Z') });
      const never = await grantVoucher(user.id, { amount_off: 2000 });
      const sooner = await grantVoucher(user.id, { amount_off: 2000, expires_at: new Date('2026-12-10T00:00:00.000Z') });
      const used: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        const res = await withdraw({ amount: 50_000, method: 'bank_transfer', destination_details: freshBank() });
        used.push(res.body.data.fee_breakdown.voucher_redemption_id as string);
      }
      expect(used).to.deep.equal([sooner.redemptionId, later.redemptionId, never.redemptionId]);
    });
  });

  describe('reads', () => {
    it('GET /v1/withdrawals: the caller\'s own, newest first, paginated, filtered by status', async () => {
      const other = await fundedUser(500_000);
      await createWithdrawal({ user: other, amount: 50_000 });
      const ids: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        clock.advance(60_000);
        ids.push((await createWithdrawal({ user, amount: 50_000 })).withdrawal.id);
      }
      const staff = await staffUser();
      await reject(undefined, { actorId: staff.id }, ids[0]!, { note: 'wrong account' });
      const page1 = await client.get('/v1/withdrawals?limit=2').set(bearer(key));
      expect(page1.status).to.equal(200);
      expect((page1.body.data as { id: string }[]).map((w) => w.id)).to.deep.equal([ids[2], ids[1]]);
      expect(page1.body.pagination).to.deep.equal({ page: 1, limit: 2, total: 3, total_pages: 2 });
      const page2 = await client.get('/v1/withdrawals?limit=2&page=2').set(bearer(key));
      expect((page2.body.data as { id: string }[]).map((w) => w.id)).to.deep.equal([ids[0]]);
      const rejected = await client.get('/v1/withdrawals?status=rejected').set(bearer(key));
      expect((rejected.body.data as { id: string; status: string; admin_note: string }[]).map((w) => [w.id, w.status, w.admin_note])).to.deep.equal([[ids[0], 'rejected', 'wrong account']]);
      const bad = await client.get('/v1/withdrawals?status=lost&limit=51').set(bearer(key));
      expect(bad.status).to.equal(400);
      expect(bad.body.error.code).to.equal('INVALID_QUERY');
    });

    it('a stranger sees none of another user\'s withdrawals', async () => {
      const { withdrawal } = await createWithdrawal({ user, amount: 50_000 });
      const stranger = await fundedUser(0);
      const theirs = await client.get('/v1/withdrawals').set(bearer(await issueKey(stranger.id)));
      expect(theirs.status).to.equal(200);
      expect(theirs.body.data).to.deep.equal([]);
      expect(theirs.body.pagination).to.deep.include({ total: 0 });
      const mine = await client.get('/v1/withdrawals').set(bearer(key));
      expect((mine.body.data as { id: string }[]).map((w) => w.id)).to.deep.equal([withdrawal.id]);
      // No route reads or moves one withdrawal by id for its owner, let alone a stranger.
      expect((await client.get(`/v1/withdrawals/${withdrawal.id}`).set(bearer(key))).status).to.equal(404);
    });

    it('GET /v1/withdrawals/config: fallbacks, settings, the caller\'s unused unexpired vouchers', async () => {
      const fallback = await client.get('/v1/withdrawals/config').set(bearer(key));
      expect(fallback.status).to.equal(200);
      expect(fallback.body.data).to.deep.equal({
        withdraw_min_idr: 50_000,
        withdraw_max_idr: 100_000_000,
        withdraw_step_idr: 1000,
        withdraw_fee_type: 'fixed',
        withdraw_fee_value: 5000,
        withdraw_fee_min_idr: 2500,
        withdraw_fee_max_idr: 25_000,
        withdraw_fee_loyalty_discount_percent: 0,
        withdraw_fee_vouchers: [],
        withdraw_fee_loyalty_eligible: false,
      });
      const used = await grantVoucher(user.id, { code: 'DIPAKAI', amount_off: 1000 });
      const { withdrawal } = await createWithdrawal({ user, amount: 50_000 });
      expect(withdrawal.voucher_redemption_id).to.equal(used.redemptionId);
      await setWithdrawSettings({
        fee: { type: 'percentage', value: 0.5, min_idr: 1000, max_idr: 0, loyalty_discount_percent: 20 },
        limits: { min_idr: 10_000, max_idr: 5_000_000, step_idr: 500 },
      });
      const v1 = await grantVoucher(user.id, { code: 'HEMAT50', percent_off: 50, max_discount_amount: 3000, expires_at: new Date('2026-12-31T00:00:00.000Z') });
      const v2 = await grantVoucher(user.id, { code: 'GRATIS', amount_off: 5000 });
      await grantVoucher(user.id, { code: 'LAMA', amount_off: 5000, expires_at: new Date('2026-11-01T00:00:00.000Z') });
      const other = await fundedUser(0);
      await grantVoucher(other.id, { code: 'BUKAN' });
      // Free (cap 0): no voucher is spent on a zero fee.
      const free = await createWithdrawal({ user, amount: 50_000 });
      expect(free.withdrawal).to.include({ fee_amount: 0, voucher_redemption_id: null });
      const res = await client.get('/v1/withdrawals/config').set(bearer(key));
      expect(res.body.data).to.deep.include({
        withdraw_min_idr: 10_000,
        withdraw_max_idr: 5_000_000,
        withdraw_step_idr: 500,
        withdraw_fee_type: 'percentage',
        withdraw_fee_value: 0.5,
        withdraw_fee_min_idr: 1000,
        withdraw_fee_max_idr: 0,
        withdraw_fee_loyalty_discount_percent: 20,
      });
      expect(res.body.data.withdraw_fee_vouchers).to.deep.equal([
        { redemption_id: v1.redemptionId, voucher_id: v1.voucherId, code: 'HEMAT50', percent_off: 50, amount_off: null, max_discount_amount: 3000, expires_at: '2026-12-31T00:00:00.000Z' },
        { redemption_id: v2.redemptionId, voucher_id: v2.voucherId, code: 'GRATIS', percent_off: null, amount_off: 5000, max_discount_amount: null, expires_at: null },
      ]);
    });
  });
});
