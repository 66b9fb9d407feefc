/** joi schemas of the deal routes (enterprise spec 4.4; D7; section 8 limits). */
import Joi from 'joi';
import { ALLOCATIONS } from './fees.js';
import { DEAL_STATUSES } from './states.js';

export const AMOUNT = { min: 10_000, max: 50_000_000_000 } as const;
const amount = Joi.number().strict().integer().min(AMOUNT.min).max(AMOUNT.max);
const text = (min: number, max: number) => Joi.string().trim().min(min).max(max);

const milestone = Joi.object({
  title: text(2, 180).required(),
  amount: amount.required(),
  required_evidence: Joi.string().trim().max(300).allow(null, ''),
  due_offset_days: Joi.number().strict().integer().min(0).max(365).allow(null),
});

const allocation = {
  fee_allocation: Joi.string().valid(...ALLOCATIONS),
  fee_buyer_percent: Joi.number().strict().integer().min(0).max(100),
};

export const create = Joi.object({
  title: text(2, 180).required(),
  description: Joi.string().trim().max(2000).allow(null, ''),
  counterparty_id: Joi.string().guid().required(),
  external_ref: Joi.string().trim().max(120).allow(null, ''),
  currency: Joi.string().trim().uppercase().pattern(/^[A-Z]{3}$/).default('IDR').messages({ 'string.pattern.base': 'must be a three-letter currency code' }),
  template_id: Joi.string().guid(),
  total_amount: Joi.number().strict().integer().min(AMOUNT.min).max(AMOUNT.max * 20).when('template_id', { is: Joi.exist(), then: Joi.required(), otherwise: Joi.forbidden() }),
  milestones: Joi.array().items(milestone).min(1).max(20),
  ...allocation,
})
  .xor('template_id', 'milestones')
  .messages({ 'object.xor': 'send either template_id with total_amount, or milestones', 'object.missing': 'send either template_id with total_amount, or milestones' });

export const update = Joi.object({
  title: text(2, 180),
  description: Joi.string().trim().max(2000).allow(null, ''),
  external_ref: Joi.string().trim().max(120).allow(null, ''),
  ...allocation,
}).min(1);

export const addMilestone = milestone;

export const updateMilestone = Joi.object({
  title: text(2, 180),
  amount,
  required_evidence: Joi.string().trim().max(300).allow(null, ''),
  due_offset_days: Joi.number().strict().integer().min(0).max(365).allow(null),
}).min(1);

export const list = Joi.object({
  status: Joi.string().valid(...DEAL_STATUSES),
  q: Joi.string().trim().max(100).allow(''),
  page: Joi.number().integer().min(1).max(100_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
});

export const fund = Joi.object({
  method: Joi.string().valid('qris', 'va', 'ewallet', 'wire', 'sandbox').required(),
  reference: Joi.string().trim().min(1).max(120),
});

export const evidence = Joi.object({
  summary: text(1, 2000).required(),
  document_ids: Joi.array().items(Joi.string().guid()).max(20).unique(),
});

export const dispute = Joi.object({ reason: text(1, 2000).required() });

export const empty = Joi.object({});
export const dealParams = Joi.object({ id: Joi.string().required() });
export const milestoneParams = Joi.object({ id: Joi.string().required(), mid: Joi.string().required() });

const staffNote = Joi.string().trim().max(2000).allow('');
export const confirmFunding = Joi.object({ note: staffNote });
export const feeOverride = Joi.object({
  ...allocation,
  reason: text(2, 2000).required(),
  note: staffNote,
}).or('fee_allocation', 'fee_buyer_percent');
export const resolveDispute = Joi.object({
  outcome: Joi.string().valid('release', 'refund', 'split').required(),
  release_amount: Joi.when('outcome', {
    is: 'split',
    then: Joi.number().integer().min(1).max(50_000_000_000).required(),
    otherwise: Joi.forbidden(),
  }),
  note: staffNote,
});
