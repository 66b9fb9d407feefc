/** The tracking answer (consumer spec 4.2, "Tracking"): what is attached, the snapshot, the courier list. */
import type { EscrowRow } from '../escrows/repo.js';
import { serializeTracking } from '../escrows/serialize.js';
import type { Snapshot } from './adapter.js';
import { COURIERS } from './couriers.js';

export const courierList = () => COURIERS.map((c) => ({ slug: c.slug, name: c.name }));

export function serializeTrackingAnswer(e: EscrowRow, snapshot: Snapshot | null) {
  return { tracking: serializeTracking(e), snapshot, couriers: courierList() };
}
