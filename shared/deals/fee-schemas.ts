/** joi schemas of the platform fee routes (enterprise spec 4.5 "Preview body"; section 8 milestone limits). */
import Joi from 'joi';
import { ALLOCATIONS } from './fees.js';

/** Milestone amount limits (section 8): whole rupiah 10,000 to 50,000,000,000. */
export const MILESTONE_AMOUNT_MIN = 10_000;
export const MILESTONE_AMOUNT_MAX = 50_000_000_000;
/** Milestones per deal (section 8). */
export const MILESTONES_MAX = 20;

const allocation = Joi.string().valid(...ALLOCATIONS);
const buyerPercent = Joi.number().strict().integer().min(0).max(100);

/**
 * POST /v1/enterprise/fees/preview. Whether `fee_allocation` and `fee_buyer_percent` agree
 * (and the workspace default when both are absent) is the service's `resolveAllocation`.
 */
export const preview = Joi.object({
  milestones: Joi.array()
    .items(Joi.object({ amount: Joi.number().strict().integer().min(MILESTONE_AMOUNT_MIN).max(MILESTONE_AMOUNT_MAX).required() }).required())
    .min(1)
    .max(MILESTONES_MAX)
    .required(),
  fee_allocation: allocation,
  fee_buyer_percent: buyerPercent,
  currency: Joi.string().trim().uppercase().pattern(/^[A-Z]{3}$/).default('IDR').messages({ 'string.pattern.base': 'must be a three-letter currency code' }),
});

/** PUT /v1/enterprise/fees/default-allocation: the percent is required with split and must agree (service). */
export const defaultAllocation = Joi.object({
  fee_allocation: allocation.required(),
  fee_buyer_percent: buyerPercent,
});
