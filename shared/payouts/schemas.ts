/** joi schemas of releases and payouts (D7 "Release", D10 settle/fail; section 8: 1 to 5 splits). */
import Joi from 'joi';
import { DISBURSEMENT_STATUSES } from './states.js';

const uuid = Joi.string().guid();
const note = Joi.string().trim().max(2000).allow('', null);

export const MAX_SPLITS = 5;

export const release = Joi.object({
  splits: Joi.array()
    .items(
      Joi.object({
        payout_instruction_id: Joi.string().guid().required(),
        amount: Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER).required(),
      }),
    )
    .min(1)
    .max(MAX_SPLITS)
    .required(),
});

export const list = Joi.object({
  status: Joi.string().valid(...DISBURSEMENT_STATUSES),
  deal_id: uuid,
  milestone_id: uuid,
  page: Joi.number().integer().min(1).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
});

export const params = Joi.object({ id: Joi.string().required() });
export const settle = Joi.object({ note });
export const fail = Joi.object({ reason: Joi.string().trim().min(1).max(1000).required(), note });
