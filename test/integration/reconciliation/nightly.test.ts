/**
 * The nightly reconciliation (job maintenance.reconcile-enterprise on the timers queue,
 * scheduled nightly; decision 0020 "Overview and reconciliation"): it reconciles every
 * workspace with deals, records the day's run, and e-mails every active platform admin once
 * that day when a difference is found (the run row is the once-a-day guard: a second run the
 * same day sends nothing; the next day sends again while the difference stays); a clean night
 * e-mails nobody. Run through the queue with the real processor.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { runJobs } from '../../helpers/jobs.js';
import { createUser } from '../../factories/users.js';
import { dealWorld } from '../../factories/deals.js';
import { clock } from '../../../shared/clock.js';
import { decryptSecret } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import { JOBS, getQueue } from '../../../shared/queues.js';
import { STAFF_TEMPLATE } from '../../../shared/reconciliation/nightly.js';
import { MAINTENANCE_SCHEDULES, RECONCILE_PATTERN, buildRegistry } from '../../../workers/registry.js';
import { liveBooks, moneyOf, sandboxDeal } from './support.js';
import { pinAt } from '../overview/support.js';

const JOB = 'maintenance.reconcile-enterprise';

interface MailRow {
  user_id: string;
  to_address: string;
  subject: string;
  body_sealed: string;
}
const staffMails = () => db('outbound_emails').where({ template: STAFF_TEMPLATE }).orderBy(['created_at', 'user_id']).select<MailRow[]>('user_id', 'to_address', 'subject', 'body_sealed');

describe('enterprise reconciliation: the nightly check', () => {
  const client = api();
  afterEach(() => clock.reset());

  /** Queues the job as the schedule does and runs the timers queue with the real processors; answers the job's result. */
  async function runNightly(): Promise<Record<string, unknown>> {
    await getQueue('timers').add(JOB, {}, { jobId: `nightly-${clock.nowMs()}-${Math.random()}` });
    const ran = (await runJobs(['timers'])).filter((j) => j.name === JOB);
    expect(ran, JSON.stringify(ran)).to.have.length(1);
    expect(ran[0]!.error).to.equal(undefined);
    return ran[0]!.result as Record<string, unknown>;
  }

  it('is a timers job with a processor and a nightly schedule', () => {
    expect(JOBS[JOB]).to.equal('timers');
    expect(buildRegistry().has(JOB)).to.equal(true);
    expect(MAINTENANCE_SCHEDULES.find((s) => s.job === JOB)).to.deep.equal({ id: 'reconcile-enterprise', job: JOB, pattern: RECONCILE_PATTERN });
    expect(RECONCILE_PATTERN).to.equal('0 19 * * *');
  });

  it('a difference in one workspace: every active admin is e-mailed once that day, again the next day while it stays; a clean night e-mails nobody', async () => {
    pinAt('2026-12-10T19:00:00.000Z');
    const clean = await liveBooks(client);
    const broken = await liveBooks(client, await dealWorld(client, 'Rusak'));
    const sandbox = await dealWorld(client, 'Pasir');
    await sandboxDeal(client, sandbox);
    await createUser({ role: 'admin', status: 'suspended', fullName: 'Staff Suspended' });
    await createUser({ fullName: 'Orang Biasa' });
    const m4 = (await moneyOf(broken.dealId))[3]!;
    await db('deal_milestones')
      .where({ id: m4.id })
      .update({ amount: m4.amount + 1000, funding_amount: m4.funding_amount + 1000, payout_amount: m4.payout_amount + 1000 });
    const staff = await db('users').where({ role: 'admin', status: 'active' }).orderBy('id').select<{ id: string; email: string }[]>('id', 'email');
    expect(staff.length).to.be.greaterThan(0);

    const first = await runNightly();
    expect(first).to.deep.equal({ run_on: '2026-12-10', workspaces_checked: 3, workspaces_with_differences: 1, differences: 2, staff_alerted: staff.length });
    const mails = await staffMails();
    expect(mails.map((m) => m.user_id).sort()).to.deep.equal(staff.map((s) => s.id).sort());
    expect(mails.map((m) => m.to_address).sort()).to.deep.equal(staff.map((s) => s.email).sort());
    expect(mails[0]!.subject).to.equal('Enterprise reconciliation 2026-12-10: 2 difference(s) in 1 workspace(s)');
    const text = decryptSecret(mails[0]!.body_sealed);
    expect(text).to.contain(`(${broken.w.workspace.id}): 2 difference(s)`);
    expect(text).to.contain(`funded (IDR), deal ${broken.reference} milestone 4 (${m4.id}): ledger ${m4.funding_amount}, deals and payouts ${m4.funding_amount + 1000}, difference -1000`);
    expect(text).to.contain(`held (IDR), deal ${broken.reference} milestone 4 (${m4.id}): ledger ${m4.amount}, deals and payouts ${m4.amount + 1000}, difference -1000`);
    expect(text).to.not.contain(clean.w.workspace.id);
    const [run] = await db('enterprise_reconciliation_runs').select('*');
    expect(run).to.deep.include({ workspaces_checked: 3, workspaces_with_differences: 1, differences: 2, staff_alerted: staff.length });
    expect(run.summary).to.deep.equal([{ workspace_id: broken.w.workspace.id, differences: 2 }]);

    // The job runs again the same night (a retry, a second worker): nothing more is sent.
    clock.advance(3_600_000);
    expect((await runNightly()).staff_alerted).to.equal(null);
    expect(await staffMails()).to.have.length(staff.length);

    // The next night the difference is still there: staff hear again.
    clock.advance(23 * 3_600_000);
    expect(await runNightly()).to.deep.include({ run_on: '2026-12-11', workspaces_with_differences: 1, staff_alerted: staff.length });
    expect(await staffMails()).to.have.length(2 * staff.length);

    // Mended: the night after is clean, recorded, and nobody is e-mailed.
    await db('deal_milestones').where({ id: m4.id }).update({ amount: m4.amount, funding_amount: m4.funding_amount, payout_amount: m4.payout_amount });
    clock.advance(24 * 3_600_000);
    expect(await runNightly()).to.deep.equal({ run_on: '2026-12-12', workspaces_checked: 3, workspaces_with_differences: 0, differences: 0, staff_alerted: 0 });
    expect(await staffMails()).to.have.length(2 * staff.length);
    expect(await db('enterprise_reconciliation_runs').orderBy('run_on').pluck('differences')).to.deep.equal([2, 2, 0]);
  });

  it('no workspace with deals: a clean run checks none and e-mails nobody', async () => {
    pinAt('2026-12-10T19:00:00.000Z');
    await dealWorld(client);
    expect(await runNightly()).to.deep.equal({ run_on: '2026-12-10', workspaces_checked: 0, workspaces_with_differences: 0, differences: 0, staff_alerted: 0 });
    expect(await staffMails()).to.deep.equal([]);
  });
});
