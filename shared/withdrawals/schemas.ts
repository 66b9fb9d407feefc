/**
 * joi schemas of the balance and withdrawal routes. Checks with their own codes (amount,
 * method, destination: INVALID_AMOUNT, INVALID_METHOD, MISSING_DESTINATION) live in the
 * service, so any scalar passes here for those fields.
 */
import Joi from 'joi';
import { WITHDRAWAL_STATUSES } from './states.js';

export const create = Joi.object({
  amount: Joi.any(),
  method: Joi.any(),
  // Checked field by field in the service (MISSING_DESTINATION names what is missing).
  destination_details: Joi.any(),
  destination_ack: Joi.boolean().strict(),
});

const page = {
  page: Joi.number().integer().min(1).max(10_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
};

export const list = Joi.object({ status: Joi.string().valid(...WITHDRAWAL_STATUSES), ...page });

export const staffList = Joi.object({ status: Joi.string().valid(...WITHDRAWAL_STATUSES).default('pending'), ...page });

export const idParams = Joi.object({ id: Joi.string().required() });

/** Every staff body may carry a note (decision D10); reject requires it (MISSING_FIELDS, in the service). */
export const staffNote = Joi.object({ note: Joi.string().max(2000).allow('', null) });

export const staffMarkPaid = Joi.object({
  note: Joi.string().max(2000).allow('', null),
  // The transfer id of a payout made by hand (bank reference, transaction hash).
  reference: Joi.string().trim().max(200).allow('', null),
});
