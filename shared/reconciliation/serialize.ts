/** The reconciliation answer (enterprise spec 4.9, shape "not shown"; decision 0020). */
import type { Reconciliation } from './service.js';

export function serializeReconciliation(r: Reconciliation) {
  return {
    generated_at: r.generatedAt.toISOString(),
    balanced: r.differences.length === 0,
    currencies: r.currencies.map((c) => ({ currency: c.currency, ledger: c.ledger, derived: c.derived })),
    differences: r.differences.map((d) => ({
      figure: d.figure,
      currency: d.currency,
      deal_id: d.deal_id,
      deal_reference: d.deal_reference,
      milestone_id: d.milestone_id,
      sequence_no: d.sequence_no,
      is_test: d.is_test,
      ledger: d.ledger,
      derived: d.derived,
      difference: d.difference,
    })),
  };
}
