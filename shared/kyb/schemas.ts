/** joi schemas of the KYB routes (enterprise spec 4.2; decisions D10, 0017). */
import Joi from 'joi';
import { ENTITY_TYPES } from '../enterprise/states.js';
import { DOC_TYPES, ID_TYPES, MAX_PEOPLE, MONTHLY_VOLUMES, PERSON_ROLES } from './slots.js';
import { RISK_TIERS } from './states.js';

const country = Joi.string().trim().uppercase().pattern(/^[A-Z]{2}$/).messages({ 'string.pattern.base': 'must be a two-letter ISO country code' });
const uuid = Joi.string().guid({ version: ['uuidv4'] });
const printable = (min: number, max: number) =>
  Joi.string()
    .trim()
    .min(min)
    .max(max)
    .pattern(/^[^\p{Cc}\p{Cf}]+$/u)
    .messages({ 'string.pattern.base': 'must not hold control characters' });

/**
 * The draft body (workspace PATCH and invite PATCH): any of three sections. `company` and
 * `bank` merge into the draft field by field; `people` replaces the list (a person sent
 * with the `id` of a listed one keeps it, its documents and, when `id_number` is left out,
 * its sealed number). Rules that need the whole draft (NIB format for the entity type,
 * country, ownership total) are checked by the service after the merge.
 */
export const draft = Joi.object({
  company: Joi.object({
    legal_name: printable(2, 180),
    entity_type: Joi.string().valid(...ENTITY_TYPES),
    nib: printable(3, 40),
    npwp: Joi.string().trim().pattern(/^\d{15,16}$/).allow(null).messages({ 'string.pattern.base': 'must be the 15- or 16-digit NPWP' }),
    country_code: country,
    address: printable(5, 500).allow(null),
    industry: printable(2, 120).allow(null),
    monthly_volume: Joi.string().valid(...MONTHLY_VOLUMES).allow(null),
    website: Joi.string().trim().max(200).uri({ scheme: ['http', 'https'] }).allow(null),
  }).min(1),
  people: Joi.array()
    .items(
      Joi.object({
        id: uuid,
        full_name: printable(2, 120).required(),
        position: printable(2, 120).required(),
        roles: Joi.array().items(Joi.string().valid(...PERSON_ROLES)).min(1).unique().required(),
        id_type: Joi.string().valid(...ID_TYPES).required(),
        id_number: Joi.string().trim().pattern(/^[A-Za-z0-9]{6,20}$/).messages({ 'string.pattern.base': 'must be 6 to 20 letters or digits' }),
        nationality: country.required(),
        ownership_pct: Joi.number().min(0).max(100).precision(2).allow(null),
      }),
    )
    .max(MAX_PEOPLE)
    .unique((a: { id?: string }, b: { id?: string }) => a.id !== undefined && a.id === b.id),
  bank: Joi.object({
    bank_name: printable(2, 100),
    bank_account_holder: printable(2, 120),
    account_number: Joi.string().trim().pattern(/^\d{6,20}$/).messages({ 'string.pattern.base': 'must be 6 to 20 digits' }),
  }).min(1),
})
  .or('company', 'people', 'bank')
  .messages({ 'object.missing': 'send at least one of company, people, bank' });

export const attach = Joi.object({
  upload_id: uuid.required(),
  doc_type: Joi.string().valid(...DOC_TYPES).required(),
  person_id: Joi.when('doc_type', { is: Joi.valid('ktp', 'passport'), then: uuid.required(), otherwise: Joi.forbidden() }),
});

export const empty = Joi.object({});
/** POST .../kyb-invite (issue 42): `fresh_start` true gives the next claimant an application without the holder's data. */
export const invite = Joi.object({ fresh_start: Joi.boolean().strict().default(false) });
export const idParams = Joi.object({ id: Joi.string().required() });
export const tokenParams = Joi.object({ token: Joi.string().max(200).required() });
export const tokenDocParams = Joi.object({ token: Joi.string().max(200).required(), id: Joi.string().required() });
export const applicationParams = Joi.object({ applicationId: Joi.string().required() });

const staffNote = Joi.string().trim().max(2000).allow('');

export const requestChanges = Joi.object({
  change_requests: Joi.array()
    .items(Joi.object({ field: Joi.string().trim().min(1).max(120).required(), note: Joi.string().trim().min(1).max(1000).required() }))
    .min(1)
    .max(50)
    .required(),
  note: staffNote,
});

export const approve = Joi.object({ risk_tier: Joi.string().valid(...RISK_TIERS).required(), note: staffNote });
export const reject = Joi.object({ reason: Joi.string().trim().min(2).max(2000).required(), note: staffNote });
export const staffNoteOnly = Joi.object({ note: staffNote });
