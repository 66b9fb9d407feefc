/**
 * The daily ledger check (job `maintenance.check-ledger`, timers queue, scheduled in
 * workers/registry.ts; issue 47, decision 0028):
 *
 * 1. verifies every ledger invariant and every hash chain (checkLedger), and records the
 *    result where /metrics reads it (check-record.ts: ledger_check_last_ok);
 * 2. records a checkpoint in the staff audit, as the system (action `system.chain_heads_recorded`,
 *    target `ledger` / the UTC day): the head of every ledger account chain that moved since
 *    the previous checkpoint, the head of every staff audit chain, and a root digest over all
 *    heads. Later checks compare those heads with the rows at their positions (chains.ts
 *    checkAnchors), so a chain rewritten after a checkpoint, hashes and all, is still caught;
 *    the roots also go to the log, a copy outside the database;
 * 3. when the check found anything, e-mails every active platform admin (through the outbox,
 *    in the transaction that records the checkpoint).
 *
 * Once per UTC day: a second run that day (a retried job, two worker copies) finds the day's
 * checkpoint under the same advisory lock and records and sends nothing more.
 */
import { createHash } from 'node:crypto';
import { clock } from '../clock.js';
import { db, type Db } from '../db.js';
import { logger } from '../logger.js';
import { queueMail } from '../mail/service.js';
import { recordStaffAction } from '../staff/audit.js';
import { activeStaff } from '../staff/members.js';
import { checkLedger, type LedgerViolation } from './check.js';
import { recordLedgerCheck } from './check-record.js';
import { CHECKPOINT_ACTION } from './chains.js';

export const STAFF_TEMPLATE = 'staff.ledger-check';
/** At most this many violations are written out in the staff e-mail. */
export const MAIL_VIOLATIONS = 20;
/** The advisory lock key of the daily checkpoint (any fixed number no other lock uses). */
const CHECKPOINT_LOCK = 4_711_047;

type Heads = Record<string, [number, string]>;

interface ChainSummary {
  chains: number;
  /** sha256 over every head, one `<chain>:<seq>:<hash hex>\n` line each in chain order. */
  root: string;
  heads: Heads;
}

export interface LedgerCheckpointResult {
  day: string;
  ok: boolean;
  violations: number;
  /** Null when the day's checkpoint had already been recorded by an earlier run. */
  checkpoint_id: number | null;
  staff_alerted: number | null;
  ledger_root: string | null;
  audit_root: string | null;
}

function root(lines: readonly { chain: string; seq: number; hash: Buffer }[]): string {
  const h = createHash('sha256');
  for (const l of lines) h.update(`${l.chain}:${l.seq}:${l.hash.toString('hex')}\n`);
  return h.digest('hex');
}

async function ledgerHeads(trx: Db, sinceLine: string): Promise<ChainSummary & { last_line_id: string }> {
  const all = (await trx.raw<{ rows: { chain: string; seq: string; hash: Buffer }[] }>(
    `SELECT id::text AS chain, chain_seq::text AS seq, chain_hash AS hash FROM ledger_accounts WHERE chain_seq > 0 ORDER BY id`,
  )).rows.map((r) => ({ chain: r.chain, seq: Number(r.seq), hash: r.hash }));
  // The chains that moved since the previous checkpoint: their newest line (any line recorded is an anchor).
  const moved = (await trx.raw<{ rows: { chain: string; seq: string; hash: Buffer; last: string }[] }>(
    `SELECT DISTINCT ON (account_id) account_id::text AS chain, chain_seq::text AS seq, chain_hash AS hash, max(id) OVER ()::text AS last
       FROM journal_lines WHERE id > ?::bigint AND chain_seq IS NOT NULL ORDER BY account_id, chain_seq DESC`,
    [sinceLine],
  )).rows;
  const heads: Heads = {};
  for (const m of moved) heads[m.chain] = [Number(m.seq), m.hash.toString('hex')];
  return { chains: all.length, root: root(all), heads, last_line_id: moved[0]?.last ?? sinceLine };
}

async function auditHeads(trx: Db): Promise<ChainSummary> {
  const all = (await trx.raw<{ rows: { chain: string; seq: string; hash: Buffer }[] }>(`SELECT chain, seq::text, hash FROM audit_chain_heads ORDER BY chain`)).rows.map((r) => ({
    chain: r.chain,
    seq: Number(r.seq),
    hash: r.hash,
  }));
  const heads: Heads = {};
  for (const a of all) heads[a.chain] = [a.seq, a.hash.toString('hex')];
  return { chains: all.length, root: root(all), heads };
}

export async function runDailyLedgerCheck(): Promise<LedgerCheckpointResult> {
  const day = clock.now().toISOString().slice(0, 10);
  const violations = await checkLedger(db);
  await recordLedgerCheck(violations);
  const result: LedgerCheckpointResult = { day, ok: violations.length === 0, violations: violations.length, checkpoint_id: null, staff_alerted: null, ledger_root: null, audit_root: null };
  await db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(?)', [CHECKPOINT_LOCK]);
    const previous = await trx('staff_audit')
      .where({ action: CHECKPOINT_ACTION })
      .orderBy('id', 'desc')
      .first<{ target_id: string; details: { ledger?: { last_line_id?: string } } } | undefined>('target_id', 'details');
    if (previous?.target_id === day) return;
    const ledger = await ledgerHeads(trx, previous?.details.ledger?.last_line_id ?? '0');
    const audit = await auditHeads(trx);
    result.checkpoint_id = await recordStaffAction(trx, {
      actorId: null,
      action: CHECKPOINT_ACTION,
      targetType: 'ledger',
      targetId: day,
      note: violations.length === 0 ? 'ledger check passed' : `ledger check found ${violations.length} violation(s)`,
      details: { ok: violations.length === 0, violations: violations.length, ledger, audit },
    });
    result.ledger_root = ledger.root;
    result.audit_root = audit.root;
    result.staff_alerted = 0;
    if (violations.length > 0) {
      const staff = await activeStaff(trx);
      const mail = staffMail(day, violations);
      for (const s of staff) await queueMail(trx, { to: s.email, userId: s.id, template: STAFF_TEMPLATE, subject: mail.subject, text: mail.text });
      result.staff_alerted = staff.length;
    }
  });
  // A copy of the roots outside the database: a rewrite of the audit itself still differs from the log.
  logger.info({ day, ok: result.ok, violations: result.violations, checkpoint_id: result.checkpoint_id, ledger_root: result.ledger_root, audit_root: result.audit_root }, 'ledger check and chain heads recorded');
  return result;
}

/** The staff e-mail of a failed check: its first violations and where to look. */
export function staffMail(day: string, violations: readonly LedgerViolation[]): { subject: string; text: string } {
  const lines = [`The ledger check of ${day} found ${violations.length} violation(s). The books or the staff audit may have been changed outside the service.`, ''];
  for (const v of violations.slice(0, MAIL_VIOLATIONS)) lines.push(`- [${v.rule}] ${v.detail}`);
  if (violations.length > MAIL_VIOLATIONS) lines.push(`- and ${violations.length - MAIL_VIOLATIONS} more`);
  lines.push('', 'Run npm run ledger:check for the whole list; docs/operations.md "LedgerCheckFailed" says what to do.');
  return { subject: `Ledger check ${day}: ${violations.length} violation(s)`, text: lines.join('\n') };
}
