/** joi schemas of the enterprise workspace routes (enterprise spec 4.1, 4.9, 4.10; decision D7). */
import Joi from 'joi';
import { ENTITY_TYPES, ROLES } from './states.js';

const country = Joi.string().trim().uppercase().pattern(/^[A-Z]{2}$/).messages({ 'string.pattern.base': 'must be a two-letter ISO country code' });
const uuid = Joi.string().guid({ version: ['uuidv4', 'uuidv1', 'uuidv5', 'uuidv3'] });

export const register = Joi.object({
  legal_name: Joi.string().trim().min(2).max(180).required(),
  display_name: Joi.string().trim().min(2).max(120).required(),
  entity_type: Joi.string().valid(...ENTITY_TYPES).required(),
  nib: Joi.when('entity_type', {
    is: 'foreign',
    // The spec sets only the length (3 to 40 chars): home registries use many formats, so
    // any printable text is taken; control characters are refused.
    then: Joi.string().trim().min(3).max(40).pattern(/^[^\p{Cc}\p{Cf}]+$/u).messages({
      'string.pattern.base': 'must be the home registration number (3 to 40 printable characters)',
    }),
    otherwise: Joi.string().trim().pattern(/^\d{13}$/).messages({ 'string.pattern.base': 'must be the 13-digit NIB' }),
  }).required(),
  country_code: Joi.when('entity_type', {
    is: 'foreign',
    then: country.invalid('ID').required().messages({ 'any.invalid': 'a foreign entity is registered outside Indonesia' }),
    otherwise: country.valid('ID').default('ID').messages({ 'any.only': 'an Indonesian entity must have country_code ID' }),
  }),
  turnstile_token: Joi.string().max(4096),
});

export const page = Joi.object({
  page: Joi.number().integer().min(1).max(100_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
});

export const idParams = Joi.object({ id: Joi.string().required() });
export const memberIdParams = Joi.object({ memberId: Joi.string().required() });

export const empty = Joi.object({});

export const invite = Joi.object({
  email: Joi.string().trim().lowercase().email({ tlds: false }).max(254).required(),
  role: Joi.string().valid(...ROLES).required(),
});

export const roleChange = Joi.object({ role: Joi.string().valid(...ROLES).required() });

export const preferences = Joi.object({
  email: Joi.boolean().strict(),
  approvals: Joi.boolean().strict(),
  money: Joi.boolean().strict(),
  reminders: Joi.boolean().strict(),
}).min(1);

export const settings = Joi.object({
  four_eyes_threshold: Joi.number().strict().integer().min(0).max(50_000_000_000),
  dispute_sla_hours: Joi.number().strict().integer().min(1).max(720),
  watchlist: Joi.array().items(Joi.string().trim().min(1).max(120)).max(100).unique(),
}).min(1);

export const notificationsRead = Joi.object({ ids: Joi.array().items(uuid).min(1).max(100).unique() });

export const counterpartyCreate = Joi.object({
  name: Joi.string().trim().min(2).max(180).required(),
  country_code: country.default('ID'),
  relationship: Joi.string().valid('seller', 'buyer').default('seller'),
  email: Joi.string().trim().lowercase().email({ tlds: false }).max(254),
});

export const counterpartyUpdate = Joi.object({
  name: Joi.string().trim().min(2).max(180),
  country_code: country,
  relationship: Joi.string().valid('seller', 'buyer'),
  email: Joi.string().trim().lowercase().email({ tlds: false }).max(254).allow(null),
}).min(1);

export const keyCreate = Joi.object({
  label: Joi.string().trim().min(2).max(60).required(),
  scopes: Joi.array()
    .items(Joi.string().valid('read', 'write'))
    .required()
    .custom((value: string[], helpers) => {
      const sorted = [...value].sort().join(',');
      if (sorted !== 'read' && sorted !== 'read,write') return helpers.error('any.invalid');
      return sorted === 'read' ? ['read'] : ['read', 'write'];
    })
    .messages({ 'any.invalid': "must be ['read'] or ['read', 'write']" }),
});

export const events = Joi.object({
  after: Joi.number().integer().min(0).default(0),
  order: Joi.string().valid('asc', 'desc').default('asc'),
  before: Joi.number().integer().min(1).when('order', { is: 'desc', otherwise: Joi.forbidden() }),
  limit: Joi.number().integer().min(1).max(100).default(50),
  deal_id: uuid,
  event: Joi.string().trim().min(1).max(80).pattern(/^[a-z_]+(\.[a-z_]+)+$/),
});

export const auditExport = Joi.object({
  from: Joi.string().pattern(/^\d{4}-\d{2}-\d{2}$/),
  to: Joi.string().pattern(/^\d{4}-\d{2}-\d{2}$/),
  export_id: Joi.string().max(64),
});
