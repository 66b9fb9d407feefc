/**
 * joi schemas of the webhook routes (enterprise spec 4.11; D8). An endpoint is { url,
 * events, description }: `events` is a list of event names or `['*']` (every event); the
 * URL's rules that depend on the mode and on addresses are checked by the service
 * (address.ts urlProblem). PATCH takes any subset, with `status` active or paused.
 */
import Joi from 'joi';

export const URL_MAX = 2000;
export const DESCRIPTION_MAX = 500;
export const EVENTS_MAX = 100;

export interface EndpointInput {
  url: string;
  events: string[];
  description?: string | null;
}

export interface EndpointPatch {
  url?: string;
  events?: string[];
  description?: string | null;
  status?: 'active' | 'paused';
}

/** An event name as the feed writes them (`deal.created`, `milestone.funded`). */
const eventName = Joi.string()
  .trim()
  .max(100)
  .pattern(/^(\*|[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+)$/)
  .messages({ 'string.pattern.base': 'must be an event name such as deal.created, or *' });

const events = Joi.array()
  .items(eventName)
  .min(1)
  .max(EVENTS_MAX)
  .unique()
  .custom((value: string[], helpers) => (value.includes('*') && value.length > 1 ? helpers.message({ custom: '* stands alone: it already means every event' }) : value));

const url = Joi.string().trim().max(URL_MAX).uri({ scheme: ['https', 'http'] }).messages({ 'string.uri': 'must be an absolute https URL', 'string.uriCustomScheme': 'must be an https URL' });

const description = Joi.string().trim().max(DESCRIPTION_MAX).allow(null, '');

export const create = Joi.object({ url: url.required(), events: events.required(), description });

export const update = Joi.object({ url, events, description, status: Joi.string().valid('active', 'paused') }).min(1);

export const deliveryParams = Joi.object({ id: Joi.string().required(), did: Joi.string().required() });

export const deliveries = Joi.object({
  page: Joi.number().integer().min(1).max(100_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
  status: Joi.string().valid('pending', 'succeeded', 'failed'),
});
