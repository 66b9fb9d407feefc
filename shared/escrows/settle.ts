/**
 * Where the held money goes: the release posting (the buyer's release, the auto-release
 * timer, a staff ruling), the refund posting (a staff ruling), and the move to disputed.
 * Each posting has a per-escrow posting key, so it is made once.
 */
import { clock } from '../clock.js';
import type { Db } from '../db.js';
import { post, type PostingLine } from '../ledger/index.js';
import { noticeJobs } from '../notifications/service.js';
import { escrowFee, loadEscrowFeeRule } from './fees.js';
import * as repo from './repo.js';
import type { EscrowRow } from './repo.js';
import { TRANSITIONS } from './states.js';
import { allows, transition, type By } from './transition.js';

/**
 * The release posting, shared by the buyer's release, the auto-release timer and a staff
 * ruling: escrow held -> seller balance (amount - fee) and platform fees (fee).
 */
export async function settleRelease(
  trx: Db,
  e: EscrowRow,
  name: 'release' | 'autoRelease' | 'rulingRelease',
  by: By,
  extra?: Parameters<typeof repo.move>[4],
): Promise<EscrowRow> {
  const now = clock.now();
  const fee = escrowFee(e.amount, await loadEscrowFeeRule(trx));
  const released = await transition(trx, e, name, { released_at: now, fee_amount: fee, updated_at: now }, extra);
  const sellerAmount = released.amount - fee;
  const lines: PostingLine[] = [{ account: { escrowId: released.id }, amount: -released.amount }];
  if (sellerAmount > 0) lines.push({ account: { userId: released.seller_id }, amount: sellerAmount });
  if (fee > 0) lines.push({ account: { system: 'platformFees' }, amount: fee });
  await post(trx, { kind: 'escrow_release', refType: 'escrow', refId: released.id, postingKey: `escrow-release:${released.id}`, lines });
  await repo.recordEvent(
    trx,
    {
      escrowId: released.id,
      event: 'escrow.released',
      actorId: by.actorId,
      actorRole: by.actorRole,
      data: { escrow_amount: released.amount, platform_fee: fee, seller_amount: sellerAmount, by: name },
      at: now,
    },
    noticeJobs(trx, [
      { userId: released.buyer_id, type: 'escrow_completed_buyer', refs: { escrow_id: released.id } },
      { userId: released.seller_id, type: 'escrow_completed_seller', refs: { escrow_id: released.id } },
    ]),
  );
  return released;
}

/** A staff refund ruling: disputed -> refunded, escrow held -> the buyer's balance. */
export async function settleRefund(trx: Db, e: EscrowRow, by: By): Promise<EscrowRow> {
  const now = clock.now();
  const refunded = await transition(trx, e, 'rulingRefund', { refunded_at: now, updated_at: now });
  await post(trx, {
    kind: 'escrow_refund',
    refType: 'escrow',
    refId: refunded.id,
    postingKey: `escrow-refund:${refunded.id}`,
    lines: [
      { account: { escrowId: refunded.id }, amount: -refunded.amount },
      { account: { userId: refunded.buyer_id }, amount: refunded.amount },
    ],
  });
  await repo.recordEvent(
    trx,
    { escrowId: refunded.id, event: 'escrow.refunded', actorId: by.actorId, actorRole: by.actorRole, data: { amount: refunded.amount }, at: now },
    noticeJobs(trx, [
      { userId: refunded.buyer_id, type: 'escrow_refunded', refs: { escrow_id: refunded.id } },
      { userId: refunded.seller_id, type: 'escrow_refunded', refs: { escrow_id: refunded.id } },
    ]),
  );
  return refunded;
}

/**
 * A party's dispute: paid/sent/received -> disputed, only if the status is still the one
 * seen (a narrower compare-and-set than `transition`'s, so the dispute answers its own
 * ESCROW_MOVED). Undefined when it moved.
 */
export async function markDisputed(trx: Db, e: EscrowRow, by: By): Promise<EscrowRow | undefined> {
  if (!allows('dispute', e.status)) return undefined;
  const now = clock.now();
  const moved = await repo.move(trx, e.id, [e.status], { status: TRANSITIONS.dispute.to, disputed_at: now, updated_at: now });
  if (moved) await repo.recordEvent(trx, { escrowId: e.id, event: 'escrow.disputed', actorId: by.actorId, actorRole: by.actorRole, at: now });
  return moved;
}
