/** joi schemas of the document and note routes (enterprise spec 4.7; section 8). */
import Joi from 'joi';
import { fileRefOf } from './files.js';

export const DOCUMENT_TYPES = ['contract', 'invoice', 'purchase_order', 'shipping', 'inspection', 'payout', 'other'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];
export const VISIBILITIES = ['account', 'counterparty'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

const uuid = Joi.string().guid();
const page = {
  page: Joi.number().integer().min(1).max(100_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
};

export const list = Joi.object({
  deal_id: uuid,
  milestone_id: uuid,
  document_type: Joi.string().valid(...DOCUMENT_TYPES),
  ...page,
});

export interface ListQuery {
  deal_id?: string;
  milestone_id?: string;
  document_type?: DocumentType;
  page: number;
  limit: number;
}

/** `file_url`: an https URL or an upload of this service (files.ts); the reason names what is wrong. */
const fileUrl = Joi.string()
  .trim()
  .max(1000)
  .custom((value: string, helpers) => {
    const ref = fileRefOf(value);
    return ref.kind === 'invalid' ? helpers.message({ custom: ref.reason }) : value;
  });

export const create = Joi.object({
  title: Joi.string().trim().min(2).max(180).required(),
  document_type: Joi.string().valid(...DOCUMENT_TYPES).required(),
  file_url: fileUrl.required(),
  checksum_sha256: Joi.string().pattern(/^[0-9a-f]{64}$/).messages({ 'string.pattern.base': 'must be 64 lowercase hex characters' }),
  deal_id: uuid,
  milestone_id: uuid,
  visibility: Joi.string().valid(...VISIBILITIES).default('account'),
});

export interface DocumentInput {
  title: string;
  document_type: DocumentType;
  file_url: string;
  checksum_sha256?: string;
  deal_id?: string;
  milestone_id?: string;
  visibility: Visibility;
}

export const idParams = Joi.object({ id: Joi.string().required() });
export const noteParams = Joi.object({ id: Joi.string().required(), nid: Joi.string().required() });
export const notesList = Joi.object(page);

/** Plain text, stored as given (not trimmed); a body of only spaces is empty. */
export const note = Joi.object({
  body: Joi.string()
    .min(1)
    .max(5000)
    .pattern(/\S/)
    .required()
    .messages({ 'string.pattern.base': 'must not be empty' }),
});

export interface NoteInput {
  body: string;
}
