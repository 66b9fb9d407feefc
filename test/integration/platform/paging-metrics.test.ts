/**
 * Issue 47, "Figures that wake someone" (first part): the gauges an operator is paged for,
 * read at scrape time: the oldest due outbox row, the oldest waiting job of each queue, the
 * oldest payout being sent (deal payouts and withdrawals), disabled webhook endpoints, the
 * latest nightly reconciliation's workspaces with differences and the latest ledger check.
 * Each moves with what it measures and reads 0 when nothing waits (-1 for what never ran).
 */
import { expect } from 'chai';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { lastLedgerCheck, recordLedgerCheck } from '../../../shared/ledger/check-record.js';
import { registry } from '../../../shared/metrics.js';
import { enqueue } from '../../../shared/outbox.js';
import { getQueue } from '../../../shared/queues.js';
import { createWorkspace } from '../../factories/enterprise.js';
import { actorOf, makeEndpoint } from '../../factories/webhooks.js';
import { createWithdrawal } from '../../factories/withdrawals.js';

const T0 = new Date('2026-12-07T08:00:00.000Z');

/** The value of `name` (with `labels` when given) at a scrape now. */
async function gauge(name: string, labels = ''): Promise<number> {
  const text = await registry.getSingleMetricAsString(name);
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  if (!line) throw new Error(`no ${name}{${labels}} in:\n${text}`);
  return Number(line.split(' ').pop());
}

describe('metrics an operator is paged for (issue 47)', () => {
  afterEach(() => clock.reset());

  it('outbox_oldest_due_age_seconds: the age of the oldest due row not relayed; 0 when none', async () => {
    clock.set(T0);
    expect(await gauge('outbox_oldest_due_age_seconds')).to.equal(0);
    await db.transaction((trx) => enqueue(trx, 'maintenance.purge-idempotency-keys', {}));
    clock.set(new Date(T0.getTime() + 30_000));
    await db.transaction((trx) => enqueue(trx, 'maintenance.purge-idempotency-keys', {}));
    // Not yet due: left out.
    await db.transaction((trx) => enqueue(trx, 'maintenance.purge-idempotency-keys', {}, { runAt: new Date(T0.getTime() + 600_000) }));
    clock.set(new Date(T0.getTime() + 90_000));
    expect(await gauge('outbox_oldest_due_age_seconds')).to.equal(90);
    await db('outbox').update({ relayed_at: clock.now() });
    expect(await gauge('outbox_oldest_due_age_seconds')).to.equal(0);
  });

  it('queue_oldest_waiting_age_seconds: per queue, the age of its oldest waiting job; 0 for an empty queue', async () => {
    clock.set(T0);
    const q = getQueue('mail');
    await q.obliterate({ force: true });
    expect(await gauge('queue_oldest_waiting_age_seconds', 'queue="mail"')).to.equal(0);
    await q.add('mail.send', { emailId: '00000000-0000-4000-8000-00000000000a' }, { timestamp: T0.getTime() - 300_000 });
    await q.add('mail.send', { emailId: '00000000-0000-4000-8000-00000000000b' }, { timestamp: T0.getTime() - 60_000 });
    expect(await gauge('queue_oldest_waiting_age_seconds', 'queue="mail"')).to.equal(300);
    await q.obliterate({ force: true });
  });

  it('payout_oldest_processing_age_seconds: the oldest withdrawal and deal payout being sent, apart', async () => {
    clock.set(T0);
    expect(await gauge('payout_oldest_processing_age_seconds', 'kind="withdrawal"')).to.equal(0);
    expect(await gauge('payout_oldest_processing_age_seconds', 'kind="deal_payout"')).to.equal(0);
    const { withdrawal } = await createWithdrawal({ status: 'approved' });
    await db('withdrawals')
      .where({ id: withdrawal.id })
      .update({ status: 'processing', approved_at: new Date(T0.getTime() - 120_000), payout_lease_until: new Date(T0.getTime() + 60_000), payout_attempts: 1, updated_at: T0 });
    expect(await gauge('payout_oldest_processing_age_seconds', 'kind="withdrawal"')).to.equal(120);
    expect(await gauge('payout_oldest_processing_age_seconds', 'kind="deal_payout"')).to.equal(0);
    await db('withdrawals').where({ id: withdrawal.id }).update({ status: 'approved', payout_lease_until: null });
  });

  it('webhook_endpoints_disabled counts disabled endpoints; reconciliation_workspaces_with_differences reads the latest nightly run (-1 before any)', async () => {
    const { workspace, owner, ownerMember } = await createWorkspace();
    const { endpoint } = await makeEndpoint(actorOf(workspace.id, { member: ownerMember, user: owner }), { url: 'https://hooks.example.com/a' });
    expect(await gauge('webhook_endpoints_disabled')).to.equal(0);
    await db('webhook_endpoints').where({ id: endpoint.id }).update({ status: 'disabled', disabled_at: new Date(), disabled_reason: 'failing' });
    expect(await gauge('webhook_endpoints_disabled')).to.equal(1);

    expect(await gauge('reconciliation_workspaces_with_differences')).to.equal(-1);
    const run = (day: string, n: number) => ({ run_on: day, workspaces_checked: 10, workspaces_with_differences: n, differences: n, created_at: new Date() });
    await db('enterprise_reconciliation_runs').insert([run('2026-12-05', 3), run('2026-12-06', 2)]);
    expect(await gauge('reconciliation_workspaces_with_differences')).to.equal(2);
  });

  it('payment_callback_to_paid_seconds: median and p99 from callback to paid over the last 15 minutes of paying callbacks', async () => {
    clock.set(T0);
    expect(await gauge('payment_callback_to_paid_seconds', 'quantile="0.99"')).to.equal(0);
    let n = 0;
    const callback = (outcome: string, waited: number, processedAgo: number) => {
      n += 1;
      const processed = new Date(T0.getTime() - processedAgo * 1000);
      return {
        provider: 'sandbox', source: 'callback', gateway_order_id: `ORD-${n}`, status: 'paid', amount: 100_000, dedupe_key: `metrics-${n}`, raw_body: '{}',
        received_at: new Date(processed.getTime() - waited * 1000), processed_at: processed, outcome,
      };
    };
    await db('payment_callbacks').insert([
      callback('paid', 500, 20 * 60), // processed before the window: left out
      callback('paid', 2, 60),
      callback('paid', 4, 30),
      callback('duplicate_paid', 100, 10), // did not pay anything: left out
      callback('paid', 60, 5),
    ]);
    expect(await gauge('payment_callback_to_paid_seconds', 'quantile="0.5"')).to.equal(4);
    expect(await gauge('payment_callback_to_paid_seconds', 'quantile="0.99"')).to.be.closeTo(58.88, 0.001);
  });

  it('ledger_check_last_ok and ledger_check_last_run_age_seconds read the latest recorded ledger check (-1 before any)', async () => {
    clock.set(T0);
    expect(await gauge('ledger_check_last_ok')).to.equal(-1);
    expect(await gauge('ledger_check_last_run_age_seconds')).to.equal(-1);
    clock.set(new Date(T0.getTime() - 7_200_000));
    await recordLedgerCheck([]);
    clock.set(T0);
    expect(await gauge('ledger_check_last_ok')).to.equal(1);
    expect(await gauge('ledger_check_last_run_age_seconds')).to.equal(7200);
    clock.set(new Date(T0.getTime() - 60_000));
    await recordLedgerCheck([{ rule: 'entry-balances', detail: 'x' }, { rule: 'user-projection', detail: 'y' }]);
    clock.set(T0);
    expect(await gauge('ledger_check_last_ok')).to.equal(0);
    expect(await gauge('ledger_check_last_run_age_seconds')).to.equal(60);
    const last = await lastLedgerCheck();
    expect([last?.violations, last?.first_violations.map((v) => v.rule)]).to.deep.equal([2, ['entry-balances', 'user-projection']]);
  });
});
