/**
 * The latest ledger check's result (issue 47): `npm run ledger:check` records when it ran,
 * whether every invariant held and its first violations; /metrics reports it
 * (`ledger_check_last_ok`, `ledger_check_last_run_age_seconds`). Kept in Redis, one key: it
 * is operating state, not books. A Redis that lost it reads as "never ran", which the
 * LedgerCheckNotRun alert reports until the next run.
 */
import { clock } from '../clock.js';
import { config } from '../config.js';
import { redis } from '../redis.js';
import type { LedgerViolation } from './check.js';

export interface LedgerCheckRecord {
  ran_at: string;
  ok: boolean;
  violations: number;
  /** The first 20 violations, for the operator the alert wakes. */
  first_violations: LedgerViolation[];
}

const KEY = (): string => `${config.queuePrefix}:ledger-check:last`;

export async function recordLedgerCheck(violations: readonly LedgerViolation[]): Promise<void> {
  const record: LedgerCheckRecord = { ran_at: clock.now().toISOString(), ok: violations.length === 0, violations: violations.length, first_violations: violations.slice(0, 20) };
  await redis.set(KEY(), JSON.stringify(record));
}

/** The latest recorded check; undefined before any (or after Redis lost it). */
export async function lastLedgerCheck(): Promise<LedgerCheckRecord | undefined> {
  const raw = await redis.get(KEY());
  return raw === null ? undefined : (JSON.parse(raw) as LedgerCheckRecord);
}
