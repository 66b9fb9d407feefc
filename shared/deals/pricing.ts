/**
 * Operator pricing of a workspace (spec 4.5: "Pricing is set by the operator and cannot be
 * changed through the API"): the rate, the minimum and the volume tiers, set from the
 * operator CLI (`npm run cli -- set-pricing`). Existing deals keep the rate they were
 * created with (rule 6); the change is recorded in the workspace's feed with the operator
 * label.
 */
import { clock } from '../clock.js';
import { inTransaction, type Db } from '../db.js';
import { appendEvent, operatorLabel } from '../enterprise/events.js';
import { lockWorkspace } from '../enterprise/repo.js';
import * as repo from './fee-terms-repo.js';

export interface PricingInput {
  /** Basis points 0..10,000, or null for the platform's rate. */
  rateBp: number | null;
  /** Whole rupiah, or null for the platform's minimum. */
  minFee: number | null;
  tiers: { minVolume: number; rateBp: number }[];
  /** Who set it, as Fee terms' `pricing_set_by` shows it (e.g. "Operator: agreement 2026-11"). */
  setBy: string;
}

/** Refuses impossible pricing with a RangeError naming the field (the CLI prints it). */
export function checkPricing(p: PricingInput): void {
  const bp = (v: number, what: string) => {
    if (!Number.isSafeInteger(v) || v < 0 || v > 10_000) throw new RangeError(`${what} must be whole basis points from 0 to 10000`);
  };
  if (p.rateBp !== null) bp(p.rateBp, 'rate');
  if (p.minFee !== null && (!Number.isSafeInteger(p.minFee) || p.minFee < 0)) throw new RangeError('minimum must be whole rupiah, at least 0');
  for (const t of p.tiers) {
    bp(t.rateBp, 'a tier rate');
    if (!Number.isSafeInteger(t.minVolume) || t.minVolume < 1) throw new RangeError('a tier volume must be whole rupiah, at least 1');
  }
  if (new Set(p.tiers.map((t) => t.minVolume)).size !== p.tiers.length) throw new RangeError('two tiers start at the same volume');
  if (p.setBy.trim().length < 2 || p.setBy.length > 120) throw new RangeError('set-by must be 2 to 120 characters');
}

export async function setPricing(trx: Db | undefined, workspaceId: string, input: PricingInput): Promise<void> {
  checkPricing(input);
  await inTransaction(trx, async (t) => {
    if (!(await lockWorkspace(t, workspaceId))) throw new RangeError(`no workspace ${workspaceId}`);
    const tiers = [...input.tiers].sort((a, b) => a.minVolume - b.minVolume).map((x) => ({ min_volume: x.minVolume, rate_bp: x.rateBp }));
    await repo.setPricing(t, workspaceId, { rateBp: input.rateBp, minFee: input.minFee, tiers, setBy: input.setBy.trim() }, clock.now());
    await appendEvent(t, workspaceId, {
      event: 'fees.pricing_changed',
      entityType: 'workspace',
      entityId: workspaceId,
      actorLabel: await operatorLabel(t),
      summary: `Pricing set: rate ${input.rateBp === null ? 'platform' : `${input.rateBp} bp`}, minimum ${input.minFee === null ? 'platform' : input.minFee}, ${tiers.length} tier(s)`,
    });
  });
}
