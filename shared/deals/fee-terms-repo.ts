/**
 * SQL of a workspace's fee terms (enterprise spec 2 "Fee terms", 4.5): the platform's
 * pricing settings, the released volume the tiers are chosen from, and the workspace's
 * default allocation. Callers pass the connection or transaction.
 */
import type { Db } from '../db.js';
import type { Allocation } from './fees.js';

/** The operator settings holding the platform's rate (basis points) and minimum fee (rupiah). */
export const PLATFORM_RATE_SETTING = 'enterprise_fee_rate_bp';
export const PLATFORM_MIN_SETTING = 'enterprise_fee_min';

/** The JSON values of the two platform pricing settings (undefined when unset): one query. */
export async function platformPricingSettings(trx: Db): Promise<{ rateBp: unknown; minFee: unknown }> {
  const rows = (await trx('settings').select('key', 'value').whereIn('key', [PLATFORM_RATE_SETTING, PLATFORM_MIN_SETTING])) as { key: string; value: unknown }[];
  const byKey = new Map(rows.map((r) => [r.key, r.value]));
  return { rateBp: byKey.get(PLATFORM_RATE_SETTING), minFee: byKey.get(PLATFORM_MIN_SETTING) };
}

/**
 * Released volume of a workspace: the sum of `deal_milestones.amount` released (less what a
 * split ruling refunded to the workspace: that part was never released) at or after
 * `since` and not after `until`, on the workspace's IDR deals whose `is_test` is `isTest`.
 * Answers the sum as Postgres gives it (numeric: a string).
 */
export async function releasedVolume(trx: Db, workspaceId: string, isTest: boolean, since: Date, until: Date): Promise<string> {
  const { rows } = await trx.raw<{ rows: { volume: string }[] }>(
    `SELECT COALESCE(SUM(m.amount - m.refunded_amount), 0)::text AS volume
       FROM deal_milestones m JOIN deals d ON d.id = m.deal_id
      WHERE m.workspace_id = ? AND m.status = 'released' AND m.released_at >= ? AND m.released_at <= ?
        AND d.workspace_id = ? AND d.is_test = ? AND upper(d.currency) = 'IDR'`,
    [workspaceId, since, until, workspaceId, isTest],
  );
  return rows[0]?.volume ?? '0';
}

/** Sets the workspace's default allocation (the caller holds the workspace row lock). */
export async function setDefaultAllocation(trx: Db, workspaceId: string, allocation: Allocation, buyerPercent: number, now: Date): Promise<void> {
  await trx('workspaces').where({ id: workspaceId }).update({ fee_default_allocation: allocation, fee_default_buyer_percent: buyerPercent, updated_at: now });
}


/** The operator's pricing of one workspace (null rate or minimum: the platform's). */
export async function setPricing(
  trx: Db,
  workspaceId: string,
  pricing: { rateBp: number | null; minFee: number | null; tiers: { min_volume: number; rate_bp: number }[]; setBy: string },
  now: Date,
): Promise<boolean> {
  const n = await trx('workspaces')
    .where({ id: workspaceId })
    .update({ fee_rate_bp: pricing.rateBp, fee_min: pricing.minFee, fee_tiers: JSON.stringify(pricing.tiers), fee_pricing_set_by: pricing.setBy, updated_at: now });
  return n === 1;
}
