/**
 * The overview answer (enterprise spec 4.9): `greeting_name`, `generated_at`, `stats`,
 * `series_24h`, `trends_7d`, `outcomes_90d`, `counterparty_performance`, `needs_you`,
 * `alerts`, `recent`. The money figures of `stats` and the sparks are rupiah, of IDR deals
 * only: amounts of two currencies are never added (decision 0023). Percentages are whole percent rounded down, null when there is
 * nothing to measure; hours have one decimal, minutes are whole (decision 0020).
 */
import { serializeItem } from '../approvals/serialize.js';
import type { ApprovalItemRow, Paged } from '../approvals/repo.js';
import type { EventRow } from '../enterprise/events-repo.js';
import { serializeEvent } from '../enterprise/serialize.js';
import type { Alert } from './alerts.js';
import type { CounterpartyRow, DayReleases, HourRow, OutcomesRow, StatsRow } from './repo.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** What compute() gathers (service.ts). */
export interface OverviewData {
  greetingName: string;
  now: Date;
  stats: StatsRow;
  seriesStart: Date;
  hours: HourRow[];
  trendFrom: Date;
  trendDays: number;
  releases: DayReleases[];
  revisions: { day: string; revisions: number }[];
  outcomes: OutcomesRow;
  counterparties: CounterpartyRow[];
  spark: { counterparty_id: string; day: string; amount: number }[];
  needsYou: Paged<ApprovalItemRow>;
  alerts: Alert[];
  recent: EventRow[];
}

/** Whole percent of `part` in `whole`, rounded down; null when `whole` is 0. */
export const pct = (part: number, whole: number): number | null => (whole === 0 ? null : Math.floor((part * 100) / whole));

const oneDecimal = (n: number | null): number | null => (n === null ? null : Math.round(Number(n) * 10) / 10);
const whole = (n: number | null): number | null => (n === null ? null : Math.round(Number(n)));

export function serializeOverview(o: OverviewData) {
  const days = Array.from({ length: o.trendDays }, (_, i) => new Date(o.trendFrom.getTime() + i * DAY).toISOString().slice(0, 10));
  const releases = new Map(o.releases.map((r) => [r.day, r]));
  const revisions = new Map(o.revisions.map((r) => [r.day, r.revisions]));
  const hours = new Map(o.hours.map((h) => [h.bucket, h]));
  const spark = new Map<string, number>();
  for (const s of o.spark) spark.set(`${s.counterparty_id}:${s.day}`, s.amount);
  const out = o.outcomes;
  return {
    greeting_name: o.greetingName,
    generated_at: o.now.toISOString(),
    stats: {
      active_deal_value: o.stats.active_deal_value,
      deals_active: o.stats.deals_active,
      transactions_secured: o.stats.transactions_secured,
      released_24h: o.stats.released_24h,
      need_you: o.needsYou.total,
      median_approval_hours: oneDecimal(o.stats.median_approval_hours),
      avg_settlement_minutes: whole(o.stats.avg_settlement_minutes),
    },
    series_24h: Array.from({ length: 24 }, (_, i) => {
      const h = hours.get(i);
      return { hour: new Date(o.seriesStart.getTime() + i * HOUR).toISOString(), funded: h?.funded ?? 0, approved: h?.approved ?? 0, released: h?.released ?? 0, disputed: h?.disputed ?? 0 };
    }),
    trends_7d: {
      days,
      automation_pct: days.map((d) => {
        const r = releases.get(d);
        return r ? pct(r.straight, r.released) : null;
      }),
      revisions: days.map((d) => revisions.get(d) ?? 0),
    },
    outcomes_90d: {
      released: out.released,
      open: out.open,
      disputed: out.disputed,
      cancelled: out.cancelled,
      revision_rate_pct: pct(out.revised, out.reviewed),
      automation_rate_pct: pct(out.straight, out.released),
    },
    counterparty_performance: o.counterparties.map((c) => ({
      id: c.id,
      name: c.name,
      deals: c.deals,
      on_time_pct: pct(c.on_time, c.due),
      dispute_pct: pct(c.disputed, c.funded),
      spark: days.map((d) => spark.get(`${c.id}:${d}`) ?? 0),
    })),
    needs_you: o.needsYou.rows.map(serializeItem),
    alerts: o.alerts.map((a) => ({ kind: a.kind, severity: a.severity, title: a.title, detail: a.detail, deal_id: a.deal_id, milestone_id: a.milestone_id })),
    recent: o.recent.map(serializeEvent),
  };
}

export type OverviewAnswer = ReturnType<typeof serializeOverview>;
