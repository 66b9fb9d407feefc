/**
 * Enterprise reconciliation (enterprise spec 4.9 `GET /v1/enterprise/reconciliation`, shape
 * not shown; decision 0020 "Overview and reconciliation", "Figures kept per milestone"): the
 * ledger's figures for the workspace beside those its deals and payouts imply, per currency,
 * and every milestone where a pair differs. The nightly check over every workspace is
 * nightly.ts.
 *
 * Each milestone's two sides are kept in `reconciliation_figures`. A read first works out
 * again every milestone that a write marked since (triggers insert a mark for each milestone,
 * payout, deal or journal entry written: migration 20261210000100), then adds up what is kept;
 * the nightly pass (`full`) works out every milestone, so a change the triggers could not see
 * shows by the next morning at the latest.
 */
import { clock } from '../clock.js';
import { db } from '../db.js';
import type { WorkspaceActor } from '../enterprise/access.js';
import { FIGURES, type Figure, type Figures, type ReconRow } from './repo.js';
import * as repo from './repo.js';

export { FIGURES, type Figure, type Figures } from './repo.js';

export interface CurrencyFigures {
  currency: string;
  ledger: Figures;
  derived: Figures;
}

/** One figure of one milestone where the ledger and the deals disagree (`difference` = ledger - derived). */
export interface Difference {
  figure: Figure;
  currency: string;
  deal_id: string;
  deal_reference: string;
  milestone_id: string;
  sequence_no: number;
  is_test: boolean;
  ledger: number;
  derived: number;
  difference: number;
}

export interface Reconciliation {
  workspaceId: string;
  generatedAt: Date;
  currencies: CurrencyFigures[];
  differences: Difference[];
}

const pick = (r: ReconRow, side: 'l' | 'd'): Figures => Object.fromEntries(FIGURES.map((f) => [f, Number(r[`${side}_${f}`])])) as Figures;

/** Milestones worked out per statement, marks read per page. */
export const PASS_SIZES = { milestones: 2_000, marks: 10_000 } as const;

/** Works out the figures of `ids` again, in pages, each page under the workspace's lock in its own transaction. */
async function refresh(workspaceId: string, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += PASS_SIZES.milestones) {
    const page = ids.slice(i, i + PASS_SIZES.milestones);
    await db.transaction(async (trx) => {
      await repo.lockFigures(trx, workspaceId);
      await repo.storeFigures(trx, workspaceId, page, clock.now());
    });
  }
}

/**
 * Brings the kept figures of the workspace up to date: the milestones of every mark visible
 * now are worked out again (all of them with `full`), then those marks are deleted by id (a
 * mark committed meanwhile stays for the next pass).
 */
export async function catchUp(workspaceId: string, opts: { full?: boolean } = {}): Promise<{ marks: number; milestones: number }> {
  const markIds: string[] = [];
  const touched = new Set<string>();
  for (let after: string | null = null; ; ) {
    const page = await repo.marks(db, workspaceId, after, PASS_SIZES.marks);
    for (const m of page) {
      markIds.push(m.id);
      touched.add(m.milestone_id);
    }
    if (page.length < PASS_SIZES.marks) break;
    after = page[page.length - 1]!.id;
  }
  let milestones = 0;
  if (opts.full) {
    for (let after: string | null = null; ; ) {
      const page = await repo.milestoneIds(db, workspaceId, after, PASS_SIZES.milestones);
      await refresh(workspaceId, page);
      milestones += page.length;
      if (page.length < PASS_SIZES.milestones) break;
      after = page[page.length - 1]!;
    }
  } else {
    await refresh(workspaceId, [...touched]);
    milestones = touched.size;
  }
  for (let i = 0; i < markIds.length; i += PASS_SIZES.marks) await repo.deleteMarks(db, workspaceId, markIds.slice(i, i + PASS_SIZES.marks));
  return { marks: markIds.length, milestones };
}

/** The reconciliation of one workspace: its kept figures brought up to date (every milestone again with `full`), then read in one statement. */
export async function reconcile(workspaceId: string, opts: { full?: boolean } = {}): Promise<Reconciliation> {
  await catchUp(workspaceId, opts);
  const generatedAt = clock.now();
  const rows = await repo.storedRows(db, workspaceId);
  const currencies: CurrencyFigures[] = [];
  const differences: Difference[] = [];
  for (const r of rows) {
    if (r.row_kind === 'total') {
      currencies.push({ currency: r.currency, ledger: pick(r, 'l'), derived: pick(r, 'd') });
      continue;
    }
    const ledger = pick(r, 'l');
    const derived = pick(r, 'd');
    for (const figure of FIGURES) {
      if (ledger[figure] === derived[figure]) continue;
      differences.push({
        figure,
        currency: r.currency,
        deal_id: r.deal_id!,
        deal_reference: r.deal_reference!,
        milestone_id: r.milestone_id!,
        sequence_no: r.sequence_no!,
        is_test: r.is_test === true,
        ledger: ledger[figure],
        derived: derived[figure],
        difference: ledger[figure] - derived[figure],
      });
    }
  }
  return { workspaceId, generatedAt, currencies, differences };
}

/** GET /v1/enterprise/reconciliation (viewer): the caller's workspace. */
export function reconciliationFor(actor: WorkspaceActor): Promise<Reconciliation> {
  return reconcile(actor.workspaceId);
}
