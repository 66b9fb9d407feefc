/**
 * joi schemas of the deal template routes (enterprise spec 2 "Template", 4.3, 8). A
 * template milestone has `amount_pct` (integer 1 to 100) or `amount` (whole rupiah 10,000
 * to 50,000,000,000), never both; either every milestone has amount_pct and they sum to
 * exactly 100, or every milestone has amount. Refusals are joi field errors (400
 * INVALID_BODY with `details.fieldErrors`), the cross-milestone ones on `milestones`.
 */
import Joi from 'joi';

export const TEMPLATE_NAME = { min: 2, max: 120 } as const;
export const TEMPLATE_DESCRIPTION_MAX = 500;
export const TEMPLATE_MILESTONES = { min: 1, max: 20 } as const;
export const MILESTONE_AMOUNT = { min: 10_000, max: 50_000_000_000 } as const;

/** A milestone of a template as the body gives it (after validation). */
export interface TemplateMilestoneInput {
  title: string;
  amount_pct?: number;
  amount?: number;
  required_evidence?: string | null;
  due_offset_days?: number | null;
}

export interface TemplateInput {
  name: string;
  description?: string | null;
  milestones: TemplateMilestoneInput[];
}

export type TemplatePatch = Partial<TemplateInput>;

const milestone = Joi.object({
  title: Joi.string().trim().min(2).max(180).required(),
  amount_pct: Joi.number().strict().integer().min(1).max(100),
  amount: Joi.number().strict().integer().min(MILESTONE_AMOUNT.min).max(MILESTONE_AMOUNT.max),
  required_evidence: Joi.string().trim().max(300).allow(null, ''),
  due_offset_days: Joi.number().strict().integer().min(0).max(365).allow(null),
})
  .xor('amount_pct', 'amount')
  .messages({
    'object.missing': 'needs amount_pct or amount',
    'object.xor': 'has both amount_pct and amount; give one of them',
  });

/** Every milestone of one kind; percentages summing to exactly 100. */
function oneKind(value: TemplateMilestoneInput[], helpers: Joi.CustomHelpers): TemplateMilestoneInput[] | Joi.ErrorReport {
  // A milestone with neither or both already has its own error: only the others count here.
  const pcts = value.filter((m) => m.amount_pct !== undefined && m.amount === undefined);
  const amounts = value.filter((m) => m.amount !== undefined && m.amount_pct === undefined);
  if (pcts.length > 0 && amounts.length > 0) return helpers.error('template.mixed');
  if (pcts.length > 0 && pcts.length === value.length) {
    const sum = pcts.reduce((s, m) => s + m.amount_pct!, 0);
    if (sum !== 100) return helpers.error('template.pctSum', { sum });
  }
  return value;
}

const milestones = Joi.array()
  .items(milestone)
  .min(TEMPLATE_MILESTONES.min)
  .max(TEMPLATE_MILESTONES.max)
  .custom(oneKind)
  .messages({
    'template.mixed': 'either every milestone has amount_pct or every milestone has amount, not a mix',
    'template.pctSum': 'the amount_pct values must add up to exactly 100 (they add up to {{#sum}})',
  });

const name = Joi.string().trim().min(TEMPLATE_NAME.min).max(TEMPLATE_NAME.max);
const description = Joi.string().trim().max(TEMPLATE_DESCRIPTION_MAX).allow(null, '');

export const templateCreate = Joi.object({
  name: name.required(),
  description,
  milestones: milestones.required(),
});

/** Any subset of the create fields; `milestones` replaces the template's milestones whole. */
export const templateUpdate = Joi.object({ name, description, milestones }).min(1);
