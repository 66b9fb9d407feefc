import Joi from 'joi';
import { DISPUTE_STATUSES, OUTCOMES, REASON_CATEGORIES } from './states.js';

export const open = Joi.object({
  reason_category: Joi.string().valid(...REASON_CATEGORIES).required(),
  description: Joi.string().min(1).max(3000).required(),
});

export const list = Joi.object({
  status: Joi.string().valid(...DISPUTE_STATUSES),
  page: Joi.number().integer().min(1).max(10_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
});

export const idParams = Joi.object({ id: Joi.string().max(64).required() });

/** Evidence: links as the upload endpoint returns them (http or https), at most 5 per message. */
export const message = Joi.object({
  message: Joi.string().trim().min(1).max(3000).required(),
  evidence_urls: Joi.array().items(Joi.string().uri({ scheme: ['http', 'https'] }).max(2048)).max(5).default([]),
});

export const resolve = Joi.object({
  outcome: Joi.string().valid(...OUTCOMES).required(),
  note: Joi.string().max(2000).allow('', null),
});
