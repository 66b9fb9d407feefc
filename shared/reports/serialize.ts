/** The summary answer of enterprise spec 4.8 (decision 0020 "Reports"). */
import type { Summary } from './service.js';

export function serializeSummary(s: Summary) {
  return {
    range: { from: s.range.from, to: s.range.to },
    deals: { created: s.deals.created, by_status: { ...s.deals.byStatus } },
    // In the query's currency (IDR by default): amounts of two currencies are never added (decision 0023).
    money: { funded: s.money.funded, released: s.money.released, queued: s.money.queued },
    approvals: { median_hours: s.approvals.medianHours, decided: s.approvals.decided, revisions: s.approvals.revisions },
    disputes: { opened: s.disputes.opened, resolved: s.disputes.resolved, rate_pct: s.disputes.ratePct },
    top_counterparties: s.topCounterparties.map((c) => ({ id: c.id, name: c.name, deals: c.deals, released: c.released })),
    monthly: s.monthly.map((m) => ({ month: m.month, created: m.created, funded: m.funded, released: m.released, disputed: m.disputed })),
  };
}
