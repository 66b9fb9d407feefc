/** joi schemas of the notification routes (consumer spec 4.6). */
import Joi from 'joi';
import { NOTIFICATION_TYPES } from './types.js';

export const list = Joi.object({
  unread_only: Joi.boolean().truthy('1').falsy('0').default(false),
  page: Joi.number().integer().min(1).max(10_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
});

/** A notification id is a UUID (v4 or v7); anything else is refused before the service looks. */
export const byId = Joi.object({ id: Joi.string().guid({ version: ['uuidv4', 'uuidv7'] }).required() });

const preference = Joi.object({ in_app: Joi.boolean(), email: Joi.boolean() }).min(1);

export const preferences = Joi.object({
  preferences: Joi.object(Object.fromEntries(NOTIFICATION_TYPES.map((t) => [t, preference]))).required(),
});
