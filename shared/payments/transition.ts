/**
 * `transition()`: the one compare-and-set of a payment's status move, from the table in
 * states.ts (ARCHITECTURE rule 3). A lost race answers INVALID_STATE naming the status found.
 */
import { clock } from '../clock.js';
import type { Db } from '../db.js';
import { paymentErrors } from './errors.js';
import * as repo from './repo.js';
import type { PaymentRow } from './repo.js';
import { allows, PAYMENT_TRANSITIONS, type PaymentStatus, type PaymentTransitionName } from './states.js';

export function invalidState(status: PaymentStatus, name: PaymentTransitionName) {
  return paymentErrors.invalidState(status, PAYMENT_TRANSITIONS[name].needs);
}

export interface TransitionGuard {
  /** Also require the payment's flag to be this (null: no flag). */
  flag?: string | null;
}

export async function transition(trx: Db, p: PaymentRow, name: PaymentTransitionName, changes: Partial<PaymentRow>, guard: TransitionGuard = {}): Promise<PaymentRow> {
  const t = PAYMENT_TRANSITIONS[name];
  if (!allows(name, p.status)) throw invalidState(p.status, name);
  const moved = await repo.movePayment(trx, p.id, t.from, { ...changes, status: t.to, updated_at: changes.updated_at ?? clock.now() }, guard);
  if (moved) return moved;
  const now = await repo.findById(trx, p.id);
  throw invalidState(now?.status ?? p.status, name);
}
