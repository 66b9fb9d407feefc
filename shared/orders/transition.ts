/**
 * `transition()`: the one compare-and-set of an order's status move, from the table in
 * states.ts (ARCHITECTURE rule 3). A lost race answers INVALID_STATE naming the status found.
 */
import { clock } from '../clock.js';
import type { Db } from '../db.js';
import { orderErrors } from './errors.js';
import * as repo from './repo.js';
import type { OrderRow } from './repo.js';
import { canMove, ORDER_TRANSITIONS, type OrderStatus, type OrderTransitionName } from './states.js';

/** INVALID_STATE naming the status found and what the move needs. */
export const invalidState = (status: OrderStatus, move: OrderTransitionName) => orderErrors.invalidState(status, move, ORDER_TRANSITIONS[move].from);

export async function transition(
  trx: Db,
  o: OrderRow,
  move: OrderTransitionName,
  changes: Partial<OrderRow>,
  extra?: Parameters<typeof repo.move>[4],
): Promise<OrderRow> {
  const t = ORDER_TRANSITIONS[move];
  if (!canMove(move, o.status)) throw invalidState(o.status, move);
  const moved = await repo.move(trx, o.id, t.from, { ...changes, status: t.to, updated_at: changes.updated_at ?? clock.now() }, extra);
  if (moved) return moved;
  throw invalidState((await repo.findById(trx, o.id))?.status ?? o.status, move);
}
