/**
 * The status poller: a lost callback never loses a payment. Links still pending past their
 * expected time are asked about; what the gateway says is stored as a `poll` delivery and
 * reconciled like a callback.
 */
import { clock } from '../clock.js';
import { db } from '../db.js';
import { processCallback, storeCallback } from './callbacks.js';
import { adapterFor, type GatewayStatus } from './gateways/index.js';
import * as repo from './repo.js';

const MINUTE = 60_000;
export const POLL_BACKOFF_MS = 5 * MINUTE;
/** A link the gateway still calls pending this long after it expired is expired here. */
export const EXPIRE_GRACE_MS = 30 * MINUTE;

/** Asks the gateways about links still pending past their expected time; reconciles what they say. */
export async function pollPending(batch = 100): Promise<{ asked: number; settled: number }> {
  const now = clock.now();
  const due = await repo.duePolls(db, now, batch);
  let settled = 0;
  for (const p of due) {
    const adapter = adapterFor(p.provider);
    if (!adapter) {
      // Not loaded on this server: put it off like a failed query, so it does not hold the batch.
      await repo.setNextPoll(db, p.id, new Date(now.getTime() + POLL_BACKOFF_MS));
      continue;
    }
    let answer: { status: GatewayStatus; amount: number | null };
    try {
      answer = await adapter.queryStatus(p.gateway_order_id);
    } catch {
      await repo.setNextPoll(db, p.id, new Date(now.getTime() + POLL_BACKOFF_MS));
      continue;
    }
    let status = answer.status;
    // Still pending well past its expiry: the link is over here (a late paid report still pays).
    if (status === 'pending' && p.expires_at && p.expires_at.getTime() + EXPIRE_GRACE_MS <= now.getTime()) status = 'expired';
    if (status === 'pending') {
      await repo.setNextPoll(db, p.id, new Date(now.getTime() + POLL_BACKOFF_MS));
      continue;
    }
    const stored = await storeCallback(db, {
      provider: p.provider,
      source: 'poll',
      gatewayOrderId: p.gateway_order_id,
      status,
      amount: answer.amount,
      dedupeKey: `poll:${p.gateway_order_id}:${status}`,
      rawBody: JSON.stringify(answer),
      headers: {},
    });
    const { outcome } = await processCallback(stored.id);
    if (outcome === 'paid' || outcome === 'credited_to_buyer') settled += 1;
  }
  return { asked: due.length, settled };
}
