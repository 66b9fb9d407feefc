import Joi from 'joi';

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
