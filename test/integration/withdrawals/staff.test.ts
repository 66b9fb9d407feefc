/**
 * Staff moves on withdrawals (decisions D2, D10): the pending list, approve (queues the
 * payout job through the outbox), mark paid (payouts in flight -> payouts sent and
 * platform fees), reject with a note (amount back, voucher restored). Every move is a
 * compare-and-set, recorded in staff_audit, refused to anyone but staff.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { createWithdrawal, fundedUser, freshBank, grantVoucher, staffUser, systemBooks, userBalance } from '../../factories/withdrawals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import type { UserRow } from '../../../shared/users/repo.js';
import type { WithdrawalRow } from '../../../shared/withdrawals/repo.js';

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

async function row(id: string): Promise<WithdrawalRow> {
  return (await db('withdrawals').where({ id }).first()) as WithdrawalRow;
}

async function postings(id: string): Promise<string[]> {
  const rows = (await db('journal_entries').select('kind').where({ ref_type: 'withdrawal', ref_id: id }).orderBy('id')) as { kind: string }[];
  return rows.map((r) => r.kind);
}

async function audit(id: string): Promise<{ action: string; actor_id: string; note: string | null }[]> {
  return (await db('staff_audit').select('action', 'actor_id', 'note').where({ target_type: 'withdrawal', target_id: id }).orderBy('id')) as {
    action: string;
    actor_id: string;
    note: string | null;
  }[];
}

describe('withdrawals: staff moves', () => {
  let client: ReturnType<typeof api>;
  let admin: UserRow;
  let adminKey: string;
  let user: UserRow;
  let userKey: string;

  beforeEach(async () => {
    clock.set(new Date('2026-12-01T03:00:00.000Z'));
    client = api();
    admin = await staffUser();
    adminKey = await issueKey(admin.id);
    user = await fundedUser(500_000);
    userKey = await issueKey(user.id);
  });

  const staffPost = (id: string, move: string, body: Record<string, unknown> = {}, key = adminKey) =>
    client.post(`/v1/admin/withdrawals/${id}/${move}`).set(bearer(key)).send(body);

  it('lists pending withdrawals oldest first with the requester; other statuses on request', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      clock.advance(60_000);
      ids.push((await createWithdrawal({ user, amount: 50_000 })).withdrawal.id);
    }
    await staffPost(ids[1]!, 'approve').expect(200);
    const res = await client.get('/v1/admin/withdrawals').set(bearer(adminKey));
    expect(res.status).to.equal(200);
    expect((res.body.data as { id: string }[]).map((w) => w.id)).to.deep.equal([ids[0], ids[2]]);
    expect(res.body.data[0].user).to.deep.equal({ id: user.id, username: user.username, email: user.email, full_name: user.full_name });
    expect(res.body.data[0]).to.include({ status: 'pending', amount: '50000', payout_attempts: 0, payout_error: null });
    expect(res.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 2, total_pages: 1 });
    const approved = await client.get('/v1/admin/withdrawals?status=approved').set(bearer(adminKey));
    expect((approved.body.data as { id: string }[]).map((w) => w.id)).to.deep.equal([ids[1]]);
    const plain = await client.get('/v1/admin/withdrawals').set(bearer(userKey));
    expect(plain.status).to.equal(403);
    expect(plain.body.error.code).to.equal('FORBIDDEN');
    expect((await client.get('/v1/admin/withdrawals')).status).to.equal(401);
  });

  it('approve: pending -> approved, the payout job queued; the worker pays it (ledger: in flight -> sent + fees)', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 100_000 });
    const before = await systemBooks();
    const res = await staffPost(withdrawal.id, 'approve', { note: 'checked' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.withdrawal).to.include({ id: withdrawal.id, status: 'approved', processed_by: admin.id, admin_note: 'checked', approved_at: '2026-12-01T03:00:00.000Z' });
    expect(await postings(withdrawal.id)).to.deep.equal(['withdrawal']);
    const outbox = await db('outbox').where({ job: 'payouts.send' }).select<{ queue: string; payload: unknown }[]>('queue', 'payload');
    expect(outbox).to.deep.equal([{ queue: 'payouts', payload: { withdrawal_id: withdrawal.id } }]);
    expect(await audit(withdrawal.id)).to.deep.equal([{ action: 'withdrawal.approve', actor_id: admin.id, note: 'checked' }]);

    const ran = await runJobs(['payouts']);
    expect(ran.map((j) => [j.name, j.error ?? null, j.result])).to.deep.equal([
      ['payouts.send', null, { outcome: 'paid', withdrawal_id: withdrawal.id, reference: `sandbox-wd_${withdrawal.id}` }],
    ]);
    const paid = await row(withdrawal.id);
    expect(paid).to.include({ status: 'paid', payout_reference: `sandbox-wd_${withdrawal.id}`, payout_attempts: 1, processed_by: null, payout_lease_until: null });
    expect(await postings(withdrawal.id)).to.deep.equal(['withdrawal', 'withdrawal_payout']);
    const after = await systemBooks();
    expect(after.inFlight - before.inFlight).to.equal(-100_000);
    expect(after.sent - before.sent).to.equal(95_000);
    expect(after.fees - before.fees).to.equal(5000);
    expect(await userBalance(user.id)).to.equal(400_000);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a withdrawal held for review needs a note to be approved', async () => {
    const shared = freshBank();
    const other = await fundedUser(500_000);
    await createWithdrawal({ user: other, amount: 100_000, destination: shared });
    const { withdrawal } = await createWithdrawal({ user, amount: 100_000, destination: shared });
    expect(withdrawal).to.include({ risk_action: 'review' });
    expect(withdrawal.risk_flags).to.include('shared_destination');
    for (const body of [{}, { note: '' }, { note: '   ' }, { note: null }]) {
      const res = await staffPost(withdrawal.id, 'approve', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error.code).to.equal('MISSING_FIELDS');
      expect(res.body.error.risk).to.deep.equal({ action: 'review', flags: withdrawal.risk_flags });
    }
    expect((await row(withdrawal.id)).status).to.equal('pending');
    const ok = await staffPost(withdrawal.id, 'approve', { note: 'Called the user: family account' });
    expect(ok.status).to.equal(200);
    expect(ok.body.data.withdrawal).to.include({ status: 'approved', admin_note: 'Called the user: family account' });
  });

  it('mark paid: approved -> paid with the reference; once', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 200_000, status: 'approved', staff: admin });
    const before = await systemBooks();
    const res = await staffPost(withdrawal.id, 'mark-paid', { reference: 'BCA-TRX-991', note: 'paid by hand' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.withdrawal).to.include({ status: 'paid', payout_reference: 'BCA-TRX-991', admin_note: 'paid by hand', processed_by: admin.id, paid_at: '2026-12-01T03:00:00.000Z' });
    const after = await systemBooks();
    expect([after.inFlight - before.inFlight, after.sent - before.sent, after.fees - before.fees]).to.deep.equal([-200_000, 195_000, 5000]);
    const again = await staffPost(withdrawal.id, 'mark-paid');
    expect(again.status).to.equal(409);
    expect(again.body.error).to.deep.include({ code: 'INVALID_STATE', status: 'paid' });
    // The queued payout job finds it paid and does nothing.
    const ran = await runJobs(['payouts']);
    expect(ran.map((j) => j.result)).to.deep.equal([{ outcome: 'skipped', withdrawal_id: withdrawal.id, status: 'paid' }]);
    expect(await postings(withdrawal.id)).to.deep.equal(['withdrawal', 'withdrawal_payout']);
    expect((await audit(withdrawal.id)).map((a) => a.action)).to.deep.equal(['withdrawal.approve', 'withdrawal.mark_paid']);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('mark paid needs an approval first; a free withdrawal posts no fee line', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 100_000 });
    const res = await staffPost(withdrawal.id, 'mark-paid');
    expect(res.status).to.equal(409);
    expect(res.body.error).to.deep.include({ code: 'INVALID_STATE', status: 'pending' });
    expect(res.body.error.message).to.match(/approved or processing/);
    await db('settings').insert({ key: 'withdraw_fee', value: JSON.stringify({ type: 'fixed', value: 0, min_idr: 0, max_idr: 0 }), updated_at: clock.now() });
    const free = await createWithdrawal({ user, amount: 100_000, status: 'paid', staff: admin });
    const lines = (await db('journal_lines as l')
      .join('journal_entries as e', 'e.id', 'l.entry_id')
      .join('ledger_accounts as a', 'a.id', 'l.account_id')
      .where({ 'e.ref_id': free.withdrawal.id, 'e.kind': 'withdrawal_payout' })
      .select('a.code', 'l.amount')
      .orderBy('l.id')) as { code: string; amount: number }[];
    expect(lines).to.deep.equal([
      { code: 'payouts:in_flight', amount: -100_000 },
      { code: 'payouts:sent', amount: 100_000 },
    ]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('reject from pending: the note is required, the amount comes back, the voucher is restored', async () => {
    const voucher = await grantVoucher(user.id, { percent_off: 100 });
    const { withdrawal } = await createWithdrawal({ user, amount: 100_000 });
    expect(withdrawal).to.include({ fee_amount: 0, voucher_redemption_id: voucher.redemptionId });
    expect(await userBalance(user.id)).to.equal(400_000);
    for (const body of [{}, { note: ' ' }]) {
      const res = await staffPost(withdrawal.id, 'reject', body);
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('MISSING_FIELDS');
    }
    const long = await staffPost(withdrawal.id, 'reject', { note: 'x'.repeat(2001) });
    expect(long.status).to.equal(400);
    expect(long.body.error.code).to.equal('INVALID_BODY');
    const before = await systemBooks();
    const res = await staffPost(withdrawal.id, 'reject', { note: 'Account name does not match' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.withdrawal).to.include({ status: 'rejected', admin_note: 'Account name does not match', processed_by: admin.id, rejected_at: '2026-12-01T03:00:00.000Z' });
    expect(await userBalance(user.id)).to.equal(500_000);
    expect((await systemBooks()).inFlight - before.inFlight).to.equal(-100_000);
    expect(await postings(withdrawal.id)).to.deep.equal(['withdrawal', 'withdrawal_refund']);
    const redemption = await db('withdrawal_fee_voucher_redemptions').where({ id: voucher.redemptionId }).first();
    expect(redemption).to.include({ status: 'available', withdrawal_id: null, used_at: null });
    // The withdrawal still says which voucher it had; the next one uses it again.
    expect((await row(withdrawal.id)).voucher_redemption_id).to.equal(voucher.redemptionId);
    const next = await createWithdrawal({ user, amount: 100_000 });
    expect(next.withdrawal).to.include({ fee_amount: 0, voucher_redemption_id: voucher.redemptionId });
    const again = await staffPost(withdrawal.id, 'reject', { note: 'twice' });
    expect(again.status).to.equal(409);
    expect(again.body.error).to.deep.include({ code: 'INVALID_STATE', status: 'rejected' });
    expect(await audit(withdrawal.id)).to.deep.equal([{ action: 'withdrawal.reject', actor_id: admin.id, note: 'Account name does not match' }]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('reject from approved: the queued payout job then does nothing', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 100_000, status: 'approved', staff: admin });
    expect((await staffPost(withdrawal.id, 'reject', { note: 'fraud report' })).status).to.equal(200);
    const ran = await runJobs(['payouts']);
    expect(ran.map((j) => j.result)).to.deep.equal([{ outcome: 'skipped', withdrawal_id: withdrawal.id, status: 'rejected' }]);
    expect(await postings(withdrawal.id)).to.deep.equal(['withdrawal', 'withdrawal_refund']);
    expect(await userBalance(user.id)).to.equal(500_000);
    const paid = await createWithdrawal({ user, amount: 100_000, status: 'paid', staff: admin });
    const late = await staffPost(paid.withdrawal.id, 'reject', { note: 'too late' });
    expect(late.status).to.equal(409);
    expect(late.body.error).to.deep.include({ code: 'INVALID_STATE', status: 'paid' });
    expect(await userBalance(user.id)).to.equal(400_000);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('404 for an unknown or malformed id; 409 for a second approval', async () => {
    for (const id of [randomUUID(), 'abc', '1']) {
      for (const move of ['approve', 'mark-paid', 'reject']) {
        const res = await staffPost(id, move, { note: 'n' });
        expect(res.status, `${move} ${id}`).to.equal(404);
        expect(res.body.error.code).to.equal('NOT_FOUND');
      }
    }
    const { withdrawal } = await createWithdrawal({ user, amount: 100_000 });
    await staffPost(withdrawal.id, 'approve').expect(200);
    const again = await staffPost(withdrawal.id, 'approve');
    expect(again.status).to.equal(409);
    expect(again.body.error).to.deep.include({ code: 'INVALID_STATE', status: 'approved' });
  });

  it('a user (even the owner) cannot move a withdrawal; nothing changes', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 100_000 });
    const stranger = await fundedUser(0);
    for (const key of [userKey, await issueKey(stranger.id)]) {
      for (const move of ['approve', 'mark-paid', 'reject']) {
        const res = await staffPost(withdrawal.id, move, { note: 'mine' }, key);
        expect(res.status, move).to.equal(403);
        expect(res.body.error.code).to.equal('FORBIDDEN');
      }
    }
    expect((await client.post(`/v1/admin/withdrawals/${withdrawal.id}/approve`).send({})).status).to.equal(401);
    expect((await row(withdrawal.id)).status).to.equal('pending');
    expect(await postings(withdrawal.id)).to.deep.equal(['withdrawal']);
    expect(await db('staff_audit').count<{ n: number }[]>('* as n')).to.deep.equal([{ n: 0 }]);
  });

  it('staff moves accept an Idempotency-Key: a replay moves nothing twice', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 100_000, status: 'approved', staff: admin });
    const idem = randomUUID();
    const first = await client.post(`/v1/admin/withdrawals/${withdrawal.id}/mark-paid`).set(bearer(adminKey)).set('Idempotency-Key', idem).send({ reference: 'R1' });
    expect(first.status).to.equal(200);
    const again = await client.post(`/v1/admin/withdrawals/${withdrawal.id}/mark-paid`).set(bearer(adminKey)).set('Idempotency-Key', idem).send({ reference: 'R1' });
    expect(again.status).to.equal(200);
    expect(again.headers['idempotent-replay']).to.equal('true');
    expect(await postings(withdrawal.id)).to.deep.equal(['withdrawal', 'withdrawal_payout']);
    expect(await checkLedger(db)).to.deep.equal([]);
  });
});
