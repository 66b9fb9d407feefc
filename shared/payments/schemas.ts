import Joi from 'joi';
import { ATTENTION_REASONS } from './repo.js';

/** MISSING_METHOD and UNSUPPORTED_METHOD are the service's codes, so any string passes here. */
export const pay = Joi.object({
  method: Joi.string().allow('').max(64),
  provider: Joi.string().max(64),
});

export const claim = Joi.object({ reference: Joi.string().trim().max(200).allow('') });

export const idParams = Joi.object({ id: Joi.string().required() });

export const orderParams = Joi.object({ gateway_order_id: Joi.string().max(128).required() });

export const simulate = Joi.object({ status: Joi.string().valid('paid', 'expired', 'failed').required() });

export const staffNote = Joi.object({ note: Joi.string().max(2000).allow('', null) });

/** mark-returned: the note is required (where the money went: bank, reference). */
export const staffNoteRequired = Joi.object({ note: Joi.string().trim().min(1).max(2000).required() });

export const staffList = Joi.object({
  /** 1: only payments waiting for staff (amount mismatches, claims, late claims), oldest first. */
  attention: Joi.number().integer().valid(0, 1).default(0),
  reason: Joi.string().valid(...ATTENTION_REASONS),
  page: Joi.number().integer().min(1).max(10_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
});
