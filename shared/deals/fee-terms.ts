/**
 * A workspace's fee terms (enterprise spec 2 "Fee terms", 4.5; issue 26): the pricing in
 * force for its new deals, the trailing volume its tiers are chosen from, the fee preview,
 * and the owner's default allocation. The figures themselves come from the pure engine
 * (./fees.ts); this module brings it the pricing and the volume.
 *
 * Pricing: the workspace's `fee_rate_bp` / `fee_min` (set by staff only; NULL means the
 * platform's), its `fee_tiers`, and the platform's rate and minimum from the operator
 * settings `enterprise_fee_rate_bp` and `enterprise_fee_min` (2% and Rp5.000 when unset or
 * invalid). Volume: milestone amounts released over the trailing VOLUME_WINDOW_DAYS days by
 * `clock` (a release exactly that long ago still counts), on the workspace's IDR deals of
 * the same kind (sandbox volume counts only toward sandbox deals, live only toward live).
 *
 * The default allocation applies to deals created afterwards (and previews without one);
 * existing deals keep the split they were created with (rule 6).
 */
import { clock } from '../clock.js';
import { inTransaction, type Db } from '../db.js';
import { byOf, type Credential, type WorkspaceActor } from '../enterprise/access.js';
import { enterpriseErrors } from '../enterprise/errors.js';
import { appendEvent } from '../enterprise/events.js';
import { lockWorkspace, workspaceById, type WorkspaceRow } from '../enterprise/repo.js';
import type { Role } from '../enterprise/states.js';
import { feeErrors } from './fee-errors.js';
import * as repo from './fee-terms-repo.js';
import {
  DEFAULT_PRICING,
  VOLUME_WINDOW_DAYS,
  dealFee,
  rateInForce,
  resolveAllocation,
  type Allocation,
  type DealFee,
  type Pricing,
  type PricingTier,
} from './fees.js';

const DAY_MS = 86_400_000;
const MAX_BP = 10_000;

const isCount = (v: unknown, max = Number.MAX_SAFE_INTEGER): v is number => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= max;

// ---- Pricing --------------------------------------------------------------------------------

/**
 * The platform's rate and minimum: the operator settings `enterprise_fee_rate_bp` (whole
 * basis points 0 to 10,000) and `enterprise_fee_min` (whole rupiah, 0 or more), each
 * falling back to DEFAULT_PRICING (2%, Rp5.000) when unset or invalid.
 */
export async function platformPricing(trx: Db): Promise<{ rateBp: number; minFee: number }> {
  const s = await repo.platformPricingSettings(trx);
  return {
    rateBp: isCount(s.rateBp, MAX_BP) ? s.rateBp : DEFAULT_PRICING.rateBp,
    minFee: isCount(s.minFee) ? s.minFee : DEFAULT_PRICING.minFee,
  };
}

/** The workspace's volume tiers, ascending by min_volume (entries that are not whole numbers in range are left out). */
function tiersOf(workspace: WorkspaceRow): PricingTier[] {
  const raw: unknown = workspace.fee_tiers;
  if (!Array.isArray(raw)) return [];
  const tiers: PricingTier[] = [];
  for (const t of raw as unknown[]) {
    if (typeof t !== 'object' || t === null) continue;
    const minVolume = Number((t as Record<string, unknown>).min_volume);
    const rateBp = Number((t as Record<string, unknown>).rate_bp);
    if (isCount(minVolume) && isCount(rateBp, MAX_BP)) tiers.push({ minVolume, rateBp });
  }
  return tiers.sort((a, b) => a.minVolume - b.minVolume || a.rateBp - b.rateBp);
}

/** The workspace's pricing over the platform's: its own rate and minimum where set (bigint columns may arrive as strings). */
function pricingOf(workspace: WorkspaceRow, platform: { rateBp: number; minFee: number }): Pricing {
  return {
    rateBp: workspace.fee_rate_bp ?? platform.rateBp,
    minFee: workspace.fee_min === null || workspace.fee_min === undefined ? platform.minFee : Number(workspace.fee_min),
    tiers: tiersOf(workspace),
  };
}

const usesPlatformRate = (w: WorkspaceRow): boolean => w.fee_rate_bp === null || w.fee_rate_bp === undefined;
const usesPlatformMin = (w: WorkspaceRow): boolean => w.fee_min === null || w.fee_min === undefined;

/**
 * Released IDR volume of the workspace over the trailing VOLUME_WINDOW_DAYS days by `clock`
 * (released_at from exactly that long ago up to now), on its deals whose `is_test` equals
 * `isTest`.
 */
export async function trailingVolume(trx: Db, workspaceId: string, isTest: boolean): Promise<number> {
  const now = clock.now();
  const since = new Date(now.getTime() - VOLUME_WINDOW_DAYS * DAY_MS);
  return Math.min(Number(await repo.releasedVolume(trx, workspaceId, isTest, since, now)), Number.MAX_SAFE_INTEGER);
}

/**
 * The pricing a new deal of the workspace takes and the trailing volume its tier is chosen
 * from (sandbox volume for sandbox deals: `isTest`). Pass both to `dealFee`.
 */
export async function pricingFor(trx: Db, workspace: WorkspaceRow, isTest: boolean): Promise<{ pricing: Pricing; trailingVolume: number }> {
  const platform = usesPlatformRate(workspace) || usesPlatformMin(workspace) ? await platformPricing(trx) : DEFAULT_PRICING;
  return { pricing: pricingOf(workspace, platform), trailingVolume: await trailingVolume(trx, workspace.id, isTest) };
}

/** The workspace's default allocation (buyer is always 100%, seller 0%). */
export function defaultAllocation(workspace: WorkspaceRow): { allocation: Allocation; buyerPercent: number } {
  const allocation = workspace.fee_default_allocation;
  if (allocation === 'seller') return { allocation, buyerPercent: 0 };
  if (allocation === 'split') return { allocation, buyerPercent: workspace.fee_default_buyer_percent };
  return { allocation: 'buyer', buyerPercent: 100 };
}

// ---- Fee terms (GET /fees) ------------------------------------------------------------------

/** Who is looking: the default allocation is the owner's, from the dashboard. */
export interface FeeViewer {
  credential: Credential;
  role: Role | null;
}

export const canEditDefaultAllocation = (viewer: FeeViewer): boolean => viewer.credential === 'session' && viewer.role === 'owner';

export interface FeeTerms {
  /** The workspace's pricing (its own or the platform's), tiers ascending. */
  pricing: Pricing;
  usesPlatformRate: boolean;
  usesPlatformMin: boolean;
  pricingSetBy: string | null;
  allocation: Allocation;
  buyerPercent: number;
  /** Live volume for a live workspace, sandbox volume for a sandbox. */
  trailingVolume: number;
  inForce: { rateBp: number; tier: { minVolume: number } | null };
  canEditDefaultAllocation: boolean;
}

/** The fee terms of the workspace as `viewer` sees them (the volume of its current kind: sandbox or live). */
export async function feeTerms(trx: Db, workspace: WorkspaceRow, viewer: FeeViewer): Promise<FeeTerms> {
  const { pricing, trailingVolume: volume } = await pricingFor(trx, workspace, workspace.is_sandbox);
  const { allocation, buyerPercent } = defaultAllocation(workspace);
  return {
    pricing,
    usesPlatformRate: usesPlatformRate(workspace),
    usesPlatformMin: usesPlatformMin(workspace),
    pricingSetBy: workspace.fee_pricing_set_by ?? null,
    allocation,
    buyerPercent,
    trailingVolume: volume,
    inForce: rateInForce(pricing, volume),
    canEditDefaultAllocation: canEditDefaultAllocation(viewer),
  };
}

// ---- Preview (POST /fees/preview) -----------------------------------------------------------

/** The validated preview body (shared/deals/fee-schemas.ts `preview`). */
export interface PreviewInput {
  milestones: { amount: number }[];
  fee_allocation?: Allocation;
  fee_buyer_percent?: number;
  /** Three upper-case letters (default IDR). */
  currency: string;
}

export interface FeePreview extends DealFee {
  /** A sandbox workspace's deals are test deals. */
  isTest: boolean;
}

/**
 * The fee a deal with these milestones would take now, as creation would compute it (the
 * workspace's pricing, its trailing volume of its kind, the body's allocation or the
 * workspace default). Reads only; saves nothing.
 */
export async function previewFee(trx: Db, workspace: WorkspaceRow, input: PreviewInput): Promise<FeePreview> {
  const resolved = resolveAllocation({ allocation: input.fee_allocation, buyerPercent: input.fee_buyer_percent }, defaultAllocation(workspace));
  if (!resolved.ok) throw feeErrors.allocationDisagrees(resolved.reason);
  const isTest = workspace.is_sandbox;
  const { pricing, trailingVolume: volume } = await pricingFor(trx, workspace, isTest);
  const fee = dealFee({
    amounts: input.milestones.map((m) => m.amount),
    currency: input.currency,
    allocation: resolved.allocation,
    buyerPercent: resolved.buyerPercent,
    pricing,
    trailingVolume: volume,
  });
  return { ...fee, isTest };
}

// ---- Default allocation (PUT /fees/default-allocation) --------------------------------------

/** The validated body (shared/deals/fee-schemas.ts `defaultAllocation`). */
export interface DefaultAllocationInput {
  fee_allocation: Allocation;
  fee_buyer_percent?: number;
}

const allocationText = (allocation: Allocation, buyerPercent: number): string =>
  allocation === 'split' ? `split (workspace ${buyerPercent}%, counterparty ${100 - buyerPercent}%)` : allocation === 'buyer' ? 'buyer (the workspace pays)' : 'seller (the counterparty pays)';

/**
 * The owner sets the default allocation of new deals. Existing deals never change. Writes
 * event fees.default_allocation_changed (live in a live workspace, as every event) when the default
 * actually changes; setting the same default again answers the terms and writes nothing.
 * Answers the fee terms after the change.
 */
export async function setDefaultAllocation(trx: Db | undefined, actor: WorkspaceActor, viewer: FeeViewer, input: DefaultAllocationInput): Promise<FeeTerms> {
  if (actor.role !== 'owner') throw enterpriseErrors.roleTooLow('owner');
  // fee_allocation is required, so the fallback is never used.
  const resolved = resolveAllocation({ allocation: input.fee_allocation, buyerPercent: input.fee_buyer_percent }, { allocation: 'buyer', buyerPercent: 100 });
  if (!resolved.ok) throw feeErrors.allocationDisagrees(resolved.reason);
  return inTransaction(trx, async (t) => {
    const ws = await lockWorkspace(t, actor.workspaceId);
    if (!ws) throw enterpriseErrors.noWorkspace();
    const before = defaultAllocation(ws);
    if (resolved.allocation !== before.allocation || resolved.buyerPercent !== before.buyerPercent) {
      await repo.setDefaultAllocation(t, ws.id, resolved.allocation, resolved.buyerPercent, clock.now());
      await appendEvent(t, ws.id, {
        event: 'fees.default_allocation_changed',
        entityType: 'account',
        entityId: ws.id,
        actor: byOf(actor),
        summary: `Default fee allocation changed from ${allocationText(before.allocation, before.buyerPercent)} to ${allocationText(resolved.allocation, resolved.buyerPercent)}`,
      });
    }
    return feeTerms(t, (await workspaceById(t, ws.id))!, viewer);
  });
}
