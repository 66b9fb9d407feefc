/** joi schemas of the escrow routes. Domain checks with their own codes (amount, link, category) live in the service. */
import Joi from 'joi';
import { ESCROW_STATUSES } from './states.js';

const partnerValue = Joi.alternatives(Joi.string().max(4096).allow(''), Joi.number());

export const fromLink = Joi.object({
  link: Joi.string().max(8192),
  // Checked by the service (400 INVALID_AMOUNT), so any scalar passes here.
  amount: Joi.alternatives(Joi.number().strict(), Joi.string().max(64)).required(),
  seller: partnerValue,
  item: partnerValue,
  category: partnerValue,
  desc: partnerValue,
  expires: partnerValue,
  ref: partnerValue,
  v: partnerValue,
  sig: partnerValue,
  buyer: partnerValue,
})
  .or('link', 'seller', 'item', 'ref', 'sig', 'expires', 'v', 'category', 'desc', 'buyer')
  .oxor('link', 'seller')
  .oxor('link', 'sig');

export const createDirect = Joi.object({
  role: Joi.string().valid('buyer', 'seller').required(),
  counterparty_username: Joi.string().trim().min(1).max(64).required(),
  item_name: Joi.string().trim().min(1).max(1000).required(),
  description: Joi.string().max(2000).allow(''),
  amount: Joi.alternatives(Joi.number().strict(), Joi.string().max(64)).required(),
  category: Joi.string().max(32),
});

export const idParams = Joi.object({ id: Joi.string().required() });

export const list = Joi.object({
  status: Joi.string().valid(...ESCROW_STATUSES),
  role: Joi.string().valid('buyer', 'seller'),
  page: Joi.number().integer().min(1).max(10_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
});

export const send = Joi.object({
  courier: Joi.string().trim().max(32).allow(''),
  tracking_number: Joi.string()
    .trim()
    .max(64)
    .pattern(/^[A-Za-z0-9-]{4,64}$/)
    .allow('')
    .messages({ 'string.pattern.base': 'tracking_number must be 4 to 64 letters, digits or dashes' }),
});

export const empty = Joi.object({});

export const cancel = Joi.object({ reason: Joi.string().trim().max(500).allow('') });

export const staffCancel = Joi.object({
  // Checked by the service: MISSING_FIELDS, REASON_TOO_LONG.
  reason: Joi.string().allow('').max(100_000),
  note: Joi.string().allow('').max(2000),
});

export const fastForward = Joi.object({ timer: Joi.string().valid('auto_release', 'expiry').required() });

export const linkSecretRotate = Joi.object({});
