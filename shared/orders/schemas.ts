/** joi schemas of the payment-service order routes (consumer spec 4.8 and section 8 limits). */
import Joi from 'joi';
import { ORDER_STATUSES } from './states.js';

export const idParams = Joi.object({ id: Joi.string().required() });

// Price bounds (INVALID_BODY below the minimum, AMOUNT_TOO_LARGE above the maximum) are the service's: they come from live configuration.
const price = Joi.number().strict().integer().min(0).unsafe();

export const quote = Joi.object({ item_price: price.required() });

export const create = Joi.object({
  target_url: Joi.string().trim().min(1).max(2048).required(),
  target_label: Joi.string()
    .max(255)
    .pattern(/^[^<>]*$/)
    .message('target_label must not contain < or >')
    .allow('', null),
  item_price: price.required(),
  notes: Joi.string().max(3000).allow('', null),
  // A client's fee is ignored: the server re-quotes from live configuration.
  service_fee: Joi.any().strip(),
  total: Joi.any().strip(),
});

export const list = Joi.object({
  status: Joi.string().valid(...ORDER_STATUSES),
  page: Joi.number().integer().min(1).max(10_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
});

export const empty = Joi.object({});

/** MISSING_METHOD and UNSUPPORTED_METHOD are the service's codes, so any string passes here. */
export const pay = Joi.object({
  method: Joi.string().allow('').max(64),
  provider: Joi.string().max(64),
});

export const claim = Joi.object({ reference: Joi.string().trim().max(200).allow('') });

export const staffNote = Joi.object({ note: Joi.string().max(2000).allow('', null) });

export const deliver = Joi.object({
  credentials: Joi.string().max(10_000).allow('', null),
  delivery_note: Joi.string().max(3000).allow('', null),
  note: Joi.string().max(2000).allow('', null),
}).or('credentials', 'delivery_note');

export const refund = Joi.object({
  reason: Joi.string().trim().max(2000).allow('', null),
  note: Joi.string().max(2000).allow('', null),
});
