/**
 * Escrow tracking (consumer spec 4.2 tracking endpoints, "Tracking"): the attached courier
 * and number, a best-effort snapshot from the courier upstream cached about 10 minutes in
 * Redis, and the seller's courier list. GET never calls the upstream itself: the tracking
 * worker (job `tracking.refresh`) fetches the first snapshot when the seller ships with a
 * number, and a missing or expired one when a party looks; the forced refresh (one per
 * escrow per 5 minutes) fetches at once.
 */
import type { Redis } from 'ioredis';
import type { Actor } from '../actors.js';
import { config } from '../config.js';
import { db } from '../db.js';
import * as escrows from '../escrows/repo.js';
import type { EscrowRow } from '../escrows/repo.js';
import { isUuid } from '../ids.js';
import { enqueue } from '../outbox.js';
import { redis as sharedRedis } from '../redis.js';
import { fetchSnapshot, notFound, type Snapshot } from './adapter.js';
import { trackingErrors } from './errors.js';
import { serializeTrackingAnswer as answer } from './serialize.js';
import { trackingSettings } from './settings.js';

export { courierList } from './serialize.js';
/** Who looks at an escrow's tracking (the shared Actor; the earlier name is kept). */
export type Viewer = Actor;

const snapshotKey = (escrowId: string) => `${config.queuePrefix}:tracking:snapshot:${escrowId}`;
const queuedKey = (escrowId: string) => `${config.queuePrefix}:tracking:queued:${escrowId}`;
const refreshKey = (escrowId: string) => `${config.queuePrefix}:tracking:refresh:${escrowId}`;

async function load(id: string, viewer: Actor): Promise<EscrowRow> {
  if (!isUuid(id)) throw trackingErrors.escrowNotFound();
  const e = await escrows.findById(db, id);
  if (!e) throw trackingErrors.escrowNotFound();
  if (e.buyer_id !== viewer.userId && e.seller_id !== viewer.userId && viewer.role !== 'admin') throw trackingErrors.notParty();
  return e;
}

/** The cached snapshot of this escrow's current courier and number, if any. */
async function cachedSnapshot(redis: Redis, e: EscrowRow): Promise<Snapshot | null> {
  const raw = await redis.get(snapshotKey(e.id));
  if (!raw) return null;
  const s = JSON.parse(raw) as Snapshot;
  // A snapshot of a number since replaced is not this escrow's tracking any more.
  return s.courier === e.courier && s.awb === e.tracking_number ? s : null;
}

async function store(redis: Redis, escrowId: string, s: Snapshot): Promise<void> {
  await redis.set(snapshotKey(escrowId), JSON.stringify(s), 'EX', trackingSettings.cacheSeconds);
}

/** GET: what is cached; a missing snapshot is queued for the worker (once a minute at most). */
export async function trackingOf(viewer: Actor, id: string, redis: Redis = sharedRedis) {
  const e = await load(id, viewer);
  if (!e.courier || !e.tracking_number) return answer(e, null);
  // No upstream configured: it is unavailable, which the answer says at once (spec: found false).
  if (!trackingSettings.apiKey) return answer(e, notFound(e.courier, e.tracking_number));
  const snapshot = await cachedSnapshot(redis, e);
  if (!snapshot && (await redis.set(queuedKey(e.id), '1', 'EX', 60, 'NX')) === 'OK') {
    await enqueue(db, 'tracking.refresh', { escrow_id: e.id });
  }
  return answer(e, snapshot);
}

/** POST refresh: a fresh upstream check now (400 NO_TRACKING; 429 within 5 minutes of the last). */
export async function refreshTracking(viewer: Actor, id: string, redis: Redis = sharedRedis) {
  const e = await load(id, viewer);
  if (!e.courier || !e.tracking_number) throw trackingErrors.noTracking();
  if ((await redis.set(refreshKey(e.id), '1', 'EX', trackingSettings.refreshSeconds, 'NX')) !== 'OK') {
    const ttl = await redis.ttl(refreshKey(e.id));
    const wait = ttl > 0 ? ttl : trackingSettings.refreshSeconds;
    throw trackingErrors.refreshedRecently(wait);
  }
  const snapshot = await fetchSnapshot(e.courier, e.tracking_number);
  await store(redis, e.id, snapshot);
  return answer(e, snapshot);
}

/** The worker's job: fetch and cache the snapshot of the escrow's current tracking. */
export async function refreshFromWorker(escrowId: string, redis: Redis = sharedRedis): Promise<{ found: boolean } | { skipped: string }> {
  if (!isUuid(escrowId)) return { skipped: 'bad id' };
  const e = await escrows.findById(db, escrowId);
  if (!e) return { skipped: 'missing' };
  if (!e.courier || !e.tracking_number) return { skipped: 'no tracking' };
  // Queued twice (at shipping and by a look before that job ran): one fetch per cache period.
  if (await cachedSnapshot(redis, e)) {
    await redis.del(queuedKey(e.id));
    return { skipped: 'fresh' };
  }
  const snapshot = await fetchSnapshot(e.courier, e.tracking_number);
  await store(redis, e.id, snapshot);
  await redis.del(queuedKey(e.id));
  return { found: snapshot.found };
}
