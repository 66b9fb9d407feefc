/**
 * Enterprise reconciliation (enterprise spec 4.9 `GET /v1/enterprise/reconciliation`, shape
 * not shown; decision 0020 "Overview and reconciliation"): the ledger's figures for the
 * workspace beside those its deals and payouts imply, per currency, and every milestone
 * where a pair differs. The nightly check over every workspace is nightly.ts.
 */
import { clock } from '../clock.js';
import { db, type Db } from '../db.js';
import type { WorkspaceActor } from '../enterprise/access.js';
import { FIGURES, reconcileRows, type Figure, type Figures, type ReconRow } from './repo.js';

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

/** The reconciliation of one workspace, read in one statement (one snapshot). */
export async function reconcile(trx: Db, workspaceId: string): Promise<Reconciliation> {
  const generatedAt = clock.now();
  const rows = await reconcileRows(trx, workspaceId);
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
  return reconcile(db, actor.workspaceId);
}
