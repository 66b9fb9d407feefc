/**
 * The nightly enterprise reconciliation (job `maintenance.reconcile-enterprise`, timers
 * queue, scheduled in workers/registry.ts; decision 0020 "Overview and reconciliation"):
 * reconciles every workspace that has deals and records the day's run in
 * `enterprise_reconciliation_runs` (one row per UTC day). When any difference is found, every
 * active platform admin is e-mailed (shared/mail/service.ts queueMail, through the outbox)
 * in the transaction that records the run, so the mails go out once per day even if the job
 * runs twice (a second run that day finds the day's row and sends nothing).
 */
import { clock } from '../clock.js';
import { db } from '../db.js';
import { queueMail } from '../mail/service.js';
import { activeStaff } from '../staff/members.js';
import * as repo from './repo.js';
import { reconcile, type Difference } from './service.js';

const PAGE = 200;
/** At most this many workspaces, and differences of each, are written out in the staff e-mail. */
export const MAIL_LIMITS = { workspaces: 20, differencesEach: 5 } as const;
export const STAFF_TEMPLATE = 'staff.enterprise-reconciliation';

interface Found {
  workspaceId: string;
  name: string;
  differences: Difference[];
}

export interface NightlyResult {
  run_on: string;
  workspaces_checked: number;
  workspaces_with_differences: number;
  differences: number;
  /** Staff e-mailed by this run; null when the day had already been recorded by an earlier run. */
  staff_alerted: number | null;
}

export async function runNightlyReconciliation(): Promise<NightlyResult> {
  const runOn = clock.now().toISOString().slice(0, 10);
  const found: Found[] = [];
  let checked = 0;
  let after: string | null = null;
  for (;;) {
    const page = await repo.workspacesWithDeals(db, after, PAGE);
    for (const w of page) {
      const r = await reconcile(w.id, { full: true });
      checked += 1;
      if (r.differences.length > 0) found.push({ workspaceId: w.id, name: w.display_name, differences: r.differences });
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.id;
  }
  const differences = found.reduce((s, f) => s + f.differences.length, 0);
  const result: NightlyResult = { run_on: runOn, workspaces_checked: checked, workspaces_with_differences: found.length, differences, staff_alerted: null };
  await db.transaction(async (trx) => {
    const run = await repo.insertRun(trx, {
      run_on: runOn,
      workspaces_checked: checked,
      workspaces_with_differences: found.length,
      differences,
      summary: JSON.stringify(found.map((f) => ({ workspace_id: f.workspaceId, differences: f.differences.length }))),
      created_at: clock.now(),
    });
    if (!run) return;
    result.staff_alerted = 0;
    if (found.length === 0) return;
    const staff = await activeStaff(trx);
    const mail = staffMail(runOn, checked, found, differences);
    for (const s of staff) await queueMail(trx, { to: s.email, userId: s.id, template: STAFF_TEMPLATE, subject: mail.subject, text: mail.text });
    await repo.markAlerted(trx, run.id, staff.length);
    result.staff_alerted = staff.length;
  });
  return result;
}

/** The staff e-mail: which workspaces differ and the first differences of each. */
export function staffMail(runOn: string, checked: number, found: Found[], differences: number): { subject: string; text: string } {
  const lines = [
    `The enterprise reconciliation of ${runOn} found ${differences} difference(s) between the ledger and the deals in ${found.length} of ${checked} workspace(s).`,
    '',
  ];
  for (const f of found.slice(0, MAIL_LIMITS.workspaces)) {
    lines.push(`Workspace ${f.name.replace(/\s+/g, ' ')} (${f.workspaceId}): ${f.differences.length} difference(s)`);
    for (const d of f.differences.slice(0, MAIL_LIMITS.differencesEach)) {
      lines.push(
        `  - ${d.figure} (${d.currency}), deal ${d.deal_reference} milestone ${d.sequence_no} (${d.milestone_id}): ledger ${d.ledger}, deals and payouts ${d.derived}, difference ${d.difference}`,
      );
    }
    if (f.differences.length > MAIL_LIMITS.differencesEach) lines.push(`  - and ${f.differences.length - MAIL_LIMITS.differencesEach} more`);
  }
  if (found.length > MAIL_LIMITS.workspaces) lines.push('', `And ${found.length - MAIL_LIMITS.workspaces} more workspace(s).`);
  lines.push('', 'The full list of each workspace: GET /v1/enterprise/reconciliation; the whole ledger: npm run ledger:check.');
  return { subject: `Enterprise reconciliation ${runOn}: ${differences} difference(s) in ${found.length} workspace(s)`, text: lines.join('\n') };
}
