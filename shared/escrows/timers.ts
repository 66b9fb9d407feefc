/**
 * Escrow timers (consumer spec section 3, decision D6): the per-category windows, the
 * expiry and auto-release jobs (a delayed job per due time), the sweeper for lost jobs,
 * and the sandbox fast-forward. Every job re-reads the escrow and does nothing if its
 * time has not come or someone else moved it.
 */
import type { Actor } from '../actors.js';
import { clock } from '../clock.js';
import { db, type Db } from '../db.js';
import { AppError } from '../errors.js';
import { noticeJobs } from '../notifications/service.js';
import { enqueue } from '../outbox.js';
import * as repo from './repo.js';
import { settleRelease } from './settle.js';
import { CATEGORIES, DEFAULT_TIMERS, TRANSITIONS, type Category, type CategoryTimer } from './states.js';
import { allows, invalidState, loadForParty, transition } from './transition.js';

/** The timers from an `escrow_timers` settings value: the defaults of section 3, overridden per category. */
export function timersFrom(value: unknown): Record<Category, CategoryTimer> {
  const timers = { ...DEFAULT_TIMERS };
  if (typeof value !== 'object' || value === null) return timers;
  for (const category of CATEGORIES) {
    const o = (value as Record<string, unknown>)[category] as Record<string, unknown> | undefined;
    if (!o || typeof o !== 'object') continue;
    const hours = (v: unknown, fallback: number) => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : fallback);
    const autoReleaseHours = Math.max(1, hours(o.auto_release_hours, timers[category].autoReleaseHours));
    const maxHours = Math.max(autoReleaseHours, hours(o.max_hours, timers[category].maxHours));
    timers[category] = { autoReleaseHours, maxHours, extendStepHours: hours(o.extend_step_hours, timers[category].extendStepHours) };
  }
  return timers;
}

/** Timers per category: the defaults of section 3, overridable by the `escrow_timers` setting. */
export async function loadTimers(trx: Db): Promise<Record<Category, CategoryTimer>> {
  return timersFrom(await repo.setting(trx, 'escrow_timers'));
}

/** True for the INVALID_STATE of a compare-and-set someone else won. */
const lostRace = (err: unknown) => err instanceof AppError && err.code === 'INVALID_STATE';

/** The expiry timer: an unpaid escrow past its deadline is cancelled. Does nothing otherwise. */
export async function runExpiry(escrowId: string, options: { requeue?: boolean } = {}): Promise<{ expired: boolean }> {
  return db.transaction(async (trx) => {
    const e = await repo.findById(trx, escrowId);
    const now = clock.now();
    if (!e || e.status !== 'pending_payment' || e.expires_at > now) return { expired: false };
    await repo.lockRow(trx, escrowId);
    // A payment underway postpones the expiry until it has run its course (decision 0009).
    const live = await repo.livePayment(trx, escrowId, now);
    if (live) {
      // The timer job re-arms itself; the sweeper (every minute) does not add another each time.
      if (options.requeue !== false) await enqueue(trx, 'escrows.expire', { escrow_id: escrowId }, { runAt: live.until });
      return { expired: false };
    }
    let moved;
    try {
      moved = await transition(trx, e, 'expire', { cancelled_at: now, cancel_reason: 'expired', updated_at: now }, (q) => void q.where('expires_at', '<=', now));
    } catch (err) {
      if (lostRace(err)) return { expired: false };
      throw err;
    }
    await repo.recordEvent(
      trx,
      { escrowId, event: 'escrow.cancelled', actorId: null, actorRole: 'system', data: { reason: 'expired' }, at: now },
      noticeJobs(trx, [
        { userId: moved.buyer_id, type: 'escrow_expired', refs: { escrow_id: escrowId } },
        { userId: moved.seller_id, type: 'escrow_expired', refs: { escrow_id: escrowId } },
      ]),
    );
    return { expired: true };
  });
}

/** The auto-release timer: a sent (or received) escrow past its release time is released. */
export async function runAutoRelease(escrowId: string): Promise<{ released: boolean }> {
  return db.transaction(async (trx) => {
    const e = await repo.findById(trx, escrowId);
    const now = clock.now();
    const due = e && allows('autoRelease', e.status) && e.auto_release_at && e.auto_release_at <= now;
    if (!e || !due) return { released: false };
    try {
      await settleRelease(trx, e, 'autoRelease', { actorId: null, actorRole: 'system' }, (q) => void q.where('auto_release_at', '<=', now));
    } catch (err) {
      // Someone else moved it between the read and the compare-and-set (a release, a dispute, an extension).
      if (lostRace(err)) return { released: false };
      throw err;
    }
    return { released: true };
  });
}

/** The sweeper: fires every due timer whose delayed job was lost. Each escrow in its own transaction. */
export async function sweepTimers(batch = 200): Promise<{ released: number; expired: number }> {
  const now = clock.now();
  let released = 0;
  let expired = 0;
  for (const id of await repo.dueAutoReleases(db, now, batch)) if ((await runAutoRelease(id)).released) released += 1;
  for (const id of await repo.dueExpiries(db, now, batch)) if ((await runExpiry(id, { requeue: false })).expired) expired += 1;
  return { released, expired };
}

export type FastForwardTimer = 'auto_release' | 'expiry';

/**
 * Sandbox only: brings the escrow's due time to now and queues the real timer job, so a
 * partner sees the real path fire (the escrow moves when the worker runs the job).
 */
export async function fastForward(actor: Actor, id: string, timer: FastForwardTimer): Promise<{ escrow_id: string; timer: FastForwardTimer; due_at: Date }> {
  return db.transaction(async (trx) => {
    const e = await loadForParty(trx, id, actor, { staff: true, lock: true });
    const now = clock.now();
    if (timer === 'auto_release') {
      if (!allows('autoRelease', e.status)) throw invalidState(e.status, 'autoRelease');
      await repo.move(trx, id, TRANSITIONS.autoRelease.from, { auto_release_at: now, updated_at: now });
      await enqueue(trx, 'escrows.auto-release', { escrow_id: id }, { runAt: now });
    } else {
      if (!allows('expire', e.status)) throw invalidState(e.status, 'expire');
      await repo.move(trx, id, TRANSITIONS.expire.from, { expires_at: now, updated_at: now });
      await enqueue(trx, 'escrows.expire', { escrow_id: id }, { runAt: now });
    }
    return { escrow_id: id, timer, due_at: now };
  });
}
