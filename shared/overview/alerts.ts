/**
 * The overview's alerts (enterprise spec 4.9: kinds dispute_sla, overdue_milestone,
 * high_value_pending, payout_velocity, watchlist_hit, kyb_gap; decision 0020 "Overview and
 * reconciliation"). Each rule reads the workspace settings as they are now (dispute SLA hours,
 * four-eyes threshold, watchlist, the workspace's KYB status), at most ALERT_LIMITS.perKind
 * alerts per rule; the list is ordered by severity (critical, warning, info), then by the
 * spec's order of kinds, then oldest condition first.
 */
import type { Db } from '../db.js';
import type { WorkspaceRow } from '../enterprise/repo.js';
import * as repo from './repo.js';

export const ALERT_KINDS = ['dispute_sla', 'overdue_milestone', 'high_value_pending', 'payout_velocity', 'watchlist_hit', 'kyb_gap'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];
export const SEVERITIES = ['critical', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface Alert {
  kind: AlertKind;
  severity: Severity;
  title: string;
  detail: string;
  deal_id: string | null;
  milestone_id: string | null;
}

/** The thresholds the settings do not carry (payout_velocity), fixed here. */
export const ALERT_LIMITS = {
  perKind: 10,
  /** A payout queued or processing longer than this is stuck. */
  stuckPayoutMinutes: 120,
  /** Payouts created in the last 24 hours above this multiple of the daily mean of the 7 days before are unusual. */
  volumeFactor: 3,
} as const;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Whole units with thousands grouped: Rp1.500.000 for IDR, otherwise "USD 1,500". */
export function formatAmount(amount: number, currency: string): string {
  const digits = String(Math.abs(Math.trunc(amount)));
  const sep = currency === 'IDR' ? '.' : ',';
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, sep);
  const sign = amount < 0 ? '-' : '';
  return currency === 'IDR' ? `${sign}Rp${grouped}` : `${sign}${currency} ${grouped}`;
}

const where = (m: repo.AlertMilestoneRow) => `milestone ${m.sequence_no} of deal ${m.reference}`;
const hoursSince = (at: Date, now: Date) => Math.floor((now.getTime() - new Date(at).getTime()) / HOUR);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
/** How late: in hours up to two days, then in days. */
const late = (due: Date, now: Date) => {
  const hours = hoursSince(due, now);
  return hours < 48 ? plural(hours, 'hour') : plural(Math.floor(hours / 24), 'day');
};

async function disputeSla(trx: Db, w: WorkspaceRow, now: Date): Promise<Alert[]> {
  const cutoff = new Date(now.getTime() - w.dispute_sla_hours * HOUR);
  return (await repo.disputesPastSla(trx, w.id, cutoff, ALERT_LIMITS.perKind)).map((m) => ({
    kind: 'dispute_sla',
    severity: 'critical',
    title: 'Dispute past its SLA',
    detail: `${where(m)} (${formatAmount(m.amount, m.currency)}) has been disputed for ${plural(hoursSince(m.since, now), 'hour')}; the workspace's dispute SLA is ${plural(w.dispute_sla_hours, 'hour')}.`,
    deal_id: m.deal_id,
    milestone_id: m.milestone_id,
  }));
}

async function overdueMilestones(trx: Db, w: WorkspaceRow, now: Date): Promise<Alert[]> {
  return (await repo.overdue(trx, w.id, now, ALERT_LIMITS.perKind)).map((m) => ({
    kind: 'overdue_milestone',
    severity: 'warning',
    title: 'Milestone overdue',
    detail: `${where(m)} (${formatAmount(m.amount, m.currency)}) was due ${new Date(m.since).toISOString().slice(0, 10)} and is not released (${late(m.since, now)} late).`,
    deal_id: m.deal_id,
    milestone_id: m.milestone_id,
  }));
}

async function highValuePending(trx: Db, w: WorkspaceRow, now: Date): Promise<Alert[]> {
  const threshold = Number(w.four_eyes_threshold);
  return (await repo.highValuePending(trx, w.id, threshold, ALERT_LIMITS.perKind)).map((m) => ({
    kind: 'high_value_pending',
    severity: 'warning',
    title: 'High-value milestone waiting for approval',
    detail:
      m.currency === 'IDR'
        ? `${where(m)} (${formatAmount(m.amount, m.currency)}, at or above the four-eyes threshold of ${formatAmount(threshold, 'IDR')}) has waited ${plural(hoursSince(m.since, now), 'hour')} for approval.`
        : `${where(m)} (${formatAmount(m.amount, m.currency)}, not in rupiah: always four-eyes) has waited ${plural(hoursSince(m.since, now), 'hour')} for approval.`,
    deal_id: m.deal_id,
    milestone_id: m.milestone_id,
  }));
}

/**
 * payout_velocity: money back from failed payouts that nobody released again (critical), payouts
 * queued or processing for over ALERT_LIMITS.stuckPayoutMinutes (warning), and payouts created in
 * the last 24 hours above ALERT_LIMITS.volumeFactor times the daily mean of the 7 days before (warning).
 */
async function payoutVelocity(trx: Db, w: WorkspaceRow, now: Date): Promise<Alert[]> {
  const out: Alert[] = [];
  for (const m of await repo.failedPayouts(trx, w.id, ALERT_LIMITS.perKind)) {
    out.push({
      kind: 'payout_velocity',
      severity: 'critical',
      title: 'Payouts failed',
      detail: `${plural(m.failed, 'payout')} of ${where(m)} failed; ${formatAmount(m.returned_amount, m.currency)} is back in escrow and waits to be released again to a verified payout instruction.`,
      deal_id: m.deal_id,
      milestone_id: m.milestone_id,
    });
  }
  const cutoff = new Date(now.getTime() - ALERT_LIMITS.stuckPayoutMinutes * 60_000);
  for (const m of await repo.stuckPayouts(trx, w.id, cutoff, ALERT_LIMITS.perKind)) {
    out.push({
      kind: 'payout_velocity',
      severity: 'warning',
      title: 'Payouts queued too long',
      detail: `${plural(m.payouts, 'payout')} of ${where(m)} (${formatAmount(m.total, m.currency)}) ${m.payouts === 1 ? 'has' : 'have'} not settled after ${plural(hoursSince(m.since, now), 'hour')}.`,
      deal_id: m.deal_id,
      milestone_id: m.milestone_id,
    });
  }
  // Each currency against its own past (amounts of two currencies are never added).
  for (const v of await repo.payoutVolume(trx, w.id, now, new Date(now.getTime() - DAY), new Date(now.getTime() - 8 * DAY))) {
    const dailyMean = v.previous_7d / 7;
    if (v.previous_7d > 0 && v.last_24h > ALERT_LIMITS.volumeFactor * dailyMean) {
      out.push({
        kind: 'payout_velocity',
        severity: 'warning',
        title: 'Unusual payout volume',
        detail: `Payouts of ${formatAmount(v.last_24h, v.currency)} were created in the last 24 hours, more than ${ALERT_LIMITS.volumeFactor} times the daily mean of the 7 days before (${formatAmount(Math.round(dailyMean), v.currency)}).`,
        deal_id: null,
        milestone_id: null,
      });
    }
  }
  return out;
}

async function watchlist(trx: Db, w: WorkspaceRow): Promise<Alert[]> {
  const terms = Array.isArray(w.watchlist) ? w.watchlist.filter((t): t is string => typeof t === 'string') : [];
  return (await repo.watchlistHits(trx, w.id, terms, ALERT_LIMITS.perKind)).map((c) => ({
    kind: 'watchlist_hit',
    severity: c.open_deals > 0 ? 'critical' : 'warning',
    title: 'Counterparty on the watchlist',
    detail:
      c.open_deals > 0
        ? `Counterparty "${c.name}" matches watchlist entry "${c.term}" and has ${plural(c.open_deals, 'open deal')} (newest ${c.reference}).`
        : `Counterparty "${c.name}" matches watchlist entry "${c.term}" (no open deals).`,
    deal_id: c.deal_id,
    milestone_id: null,
  }));
}

async function kybGaps(trx: Db, w: WorkspaceRow): Promise<Alert[]> {
  const out: Alert[] = [];
  if (w.kyb_status !== 'verified') {
    out.push({
      kind: 'kyb_gap',
      severity: 'warning',
      title: 'Business verification incomplete',
      detail: `The workspace's KYB status is ${w.kyb_status}; it stays a sandbox (no real money moves) until its business verification is approved.`,
      deal_id: null,
      milestone_id: null,
    });
  }
  for (const c of await repo.unverifiedCounterparties(trx, w.id, ALERT_LIMITS.perKind - out.length)) {
    out.push({
      kind: 'kyb_gap',
      severity: w.is_sandbox ? 'info' : 'warning',
      title: 'Counterparty not verified',
      detail: `Counterparty "${c.name}" (KYB ${c.kyb_status}) has ${plural(c.open_deals, 'open deal')} (newest ${c.reference})${w.is_sandbox ? '' : '; live deals wait in terms review until it is verified'}.`,
      deal_id: c.deal_id,
      milestone_id: null,
    });
  }
  return out;
}

/** Every alert of the workspace at `now`, most severe first. */
export async function alertsFor(trx: Db, w: WorkspaceRow, now: Date): Promise<Alert[]> {
  const all = [
    ...(await disputeSla(trx, w, now)),
    ...(await overdueMilestones(trx, w, now)),
    ...(await highValuePending(trx, w, now)),
    ...(await payoutVelocity(trx, w, now)),
    ...(await watchlist(trx, w)),
    ...(await kybGaps(trx, w)),
  ];
  // A stable sort: within one severity and kind, each rule's own order (oldest first) stays.
  return all
    .map((a, i) => ({ a, i }))
    .sort((x, y) => SEVERITIES.indexOf(x.a.severity) - SEVERITIES.indexOf(y.a.severity) || ALERT_KINDS.indexOf(x.a.kind) - ALERT_KINDS.indexOf(y.a.kind) || x.i - y.i)
    .map((x) => x.a);
}
