/**
 * What every withdrawal move shares: loading it, and `transition()`, the one compare-and-set
 * of the transition table in states.ts (ARCHITECTURE rule 3).
 */
import type { Knex } from 'knex';
import { clock } from '../clock.js';
import type { Db } from '../db.js';
import type { AppError } from '../errors.js';
import { isUuid } from '../ids.js';
import { withdrawalErrors } from './errors.js';
import * as repo from './repo.js';
import type { WithdrawalRow } from './repo.js';
import { TRANSITIONS, type TransitionName, type WithdrawalStatus } from './states.js';

/** True when the table allows the named move from the withdrawal's status. */
export function allows(name: TransitionName, status: WithdrawalStatus): boolean {
  return (TRANSITIONS[name].from as readonly WithdrawalStatus[]).includes(status);
}

/** INVALID_STATE naming the status found and what the move needs. */
export function invalidState(status: WithdrawalStatus, name: TransitionName): AppError {
  return withdrawalErrors.invalidState(status, TRANSITIONS[name].from);
}

export async function load(trx: Db, id: string): Promise<WithdrawalRow> {
  const w = isUuid(id) ? await repo.findById(trx, id) : undefined;
  if (!w) throw withdrawalErrors.notFound();
  return w;
}

/**
 * The compare-and-set of a named transition; a lost race answers INVALID_STATE naming the
 * state it found. `extra` adds conditions to the UPDATE (checked in the same statement).
 */
export async function transition(
  trx: Db,
  w: WithdrawalRow,
  name: TransitionName,
  changes: Partial<WithdrawalRow>,
  extra?: { where: (q: Knex.QueryBuilder) => void; refused: (found: WithdrawalRow) => AppError | null },
): Promise<WithdrawalRow> {
  const t = TRANSITIONS[name];
  if (!allows(name, w.status)) throw invalidState(w.status, name);
  const moved = await repo.move(trx, w.id, t.from, { ...changes, status: t.to, updated_at: changes.updated_at ?? clock.now() }, extra?.where);
  if (moved) return moved;
  const now = await repo.findById(trx, w.id);
  if (now && extra && allows(name, now.status)) throw extra.refused(now) ?? invalidState(now.status, name);
  throw invalidState(now?.status ?? w.status, name);
}
