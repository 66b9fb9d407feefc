/**
 * What every escrow move shares: who the caller is to the escrow, and `transition()`, the one
 * compare-and-set of the transition table in states.ts (ARCHITECTURE rule 3).
 */
import type { Actor } from '../actors.js';
import { clock } from '../clock.js';
import type { Db } from '../db.js';
import { isUuid } from '../ids.js';
import { escrowErrors } from './errors.js';
import * as repo from './repo.js';
import type { EscrowRow } from './repo.js';
import { TRANSITIONS, type EscrowStatus, type TransitionName } from './states.js';

/** Who is acting: a signed-in user (or admin); the system (timers) acts through `By`. */
export type { Actor } from '../actors.js';

export type Party = 'buyer' | 'seller';

/** Who a move is recorded against on the escrow's event log. */
export interface By {
  actorId: string | null;
  actorRole: 'buyer' | 'seller' | 'admin' | 'system';
}

export function partyOf(e: Pick<EscrowRow, 'buyer_id' | 'seller_id'>, userId: string): Party | null {
  if (e.buyer_id === userId) return 'buyer';
  if (e.seller_id === userId) return 'seller';
  return null;
}

/** True when the table allows the named move from the escrow's status. */
export function allows(name: TransitionName, status: EscrowStatus): boolean {
  return (TRANSITIONS[name].from as readonly EscrowStatus[]).includes(status);
}

/** INVALID_STATE naming the status found and what the move needs. */
export function invalidState(status: EscrowStatus, name: TransitionName) {
  return escrowErrors.invalidState(status, TRANSITIONS[name].from);
}

/** Reads the escrow for one of its parties (or staff when `staff` is true); else ESCROW_NOT_FOUND / FORBIDDEN. */
export async function loadForParty(trx: Db, id: string, actor: Actor, options: { staff?: boolean; lock?: boolean } = {}): Promise<EscrowRow> {
  if (!isUuid(id)) throw escrowErrors.notFound();
  const e = await repo.findById(trx, id, { lock: options.lock });
  if (!e) throw escrowErrors.notFound();
  if (!partyOf(e, actor.userId) && !(options.staff && actor.role === 'admin')) throw escrowErrors.notParty();
  return e;
}

/** NOT_BUYER / NOT_SELLER for the other party, FORBIDDEN for anyone else. */
export function requireRole(e: EscrowRow, actor: Actor, role: Party): void {
  const party = partyOf(e, actor.userId);
  if (party === role) return;
  if (party === null) throw escrowErrors.notParty();
  throw role === 'buyer' ? escrowErrors.notBuyer() : escrowErrors.notSeller();
}

/** The compare-and-set of a named transition; a lost race answers INVALID_STATE naming the state it found. */
export async function transition(
  trx: Db,
  e: EscrowRow,
  name: TransitionName,
  changes: Partial<EscrowRow>,
  extra?: Parameters<typeof repo.move>[4],
): Promise<EscrowRow> {
  const t = TRANSITIONS[name];
  if (!allows(name, e.status)) throw invalidState(e.status, name);
  const moved = await repo.move(trx, e.id, t.from, { ...changes, status: t.to, updated_at: changes.updated_at ?? clock.now() }, extra);
  if (moved) return moved;
  const now = await repo.findById(trx, e.id);
  throw invalidState(now?.status ?? e.status, name);
}
