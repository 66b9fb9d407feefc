/**
 * joi schemas of the payout instruction routes (enterprise spec 4.6, 8; D7, D10). The
 * account number is taken with spaces and dashes (as people copy it) and kept as its
 * digits only: 6 to 34 of them (34 is the longest IBAN).
 */
import Joi from 'joi';

/** `declined` (review R4): staff refused the destination with a reason; never payable; an edit sends it back to pending_verification. */
export const INSTRUCTION_STATUSES = ['pending_verification', 'verified', 'declined'] as const;
export type InstructionStatus = (typeof INSTRUCTION_STATUSES)[number];

export const LABEL = { min: 1, max: 120 } as const;
export const BANK_NAME = { min: 2, max: 100 } as const;
export const ACCOUNT_HOLDER = { min: 2, max: 180 } as const;
export const ACCOUNT_NUMBER = { min: 6, max: 34 } as const;

export interface InstructionInput {
  label: string;
  counterparty_id: string;
  bank_name: string;
  /** Digits only (validation removed spaces and dashes). */
  account_number: string;
  account_holder: string;
}

export type InstructionPatch = Partial<Omit<InstructionInput, 'counterparty_id'>>;

export interface InstructionQuery {
  counterparty_id?: string;
  status?: InstructionStatus;
  page: number;
  limit: number;
}

const text = (min: number, max: number) => Joi.string().trim().min(min).max(max);

const accountNumber = Joi.string()
  .trim()
  .replace(/[\s-]+/g, '')
  .pattern(new RegExp(`^\\d{${ACCOUNT_NUMBER.min},${ACCOUNT_NUMBER.max}}$`))
  .messages({
    'string.pattern.base': `must be ${ACCOUNT_NUMBER.min} to ${ACCOUNT_NUMBER.max} digits (spaces and dashes are ignored)`,
    'string.empty': `must be ${ACCOUNT_NUMBER.min} to ${ACCOUNT_NUMBER.max} digits (spaces and dashes are ignored)`,
  });

const fields = {
  label: text(LABEL.min, LABEL.max),
  bank_name: text(BANK_NAME.min, BANK_NAME.max),
  account_number: accountNumber,
  account_holder: text(ACCOUNT_HOLDER.min, ACCOUNT_HOLDER.max),
};

export const create = Joi.object({
  label: fields.label.required(),
  counterparty_id: Joi.string().guid().required(),
  bank_name: fields.bank_name.required(),
  account_number: fields.account_number.required(),
  account_holder: fields.account_holder.required(),
});

/** Any subset of label, bank_name, account_number, account_holder (the counterparty stays). */
export const update = Joi.object(fields).min(1).messages({ 'object.min': 'send at least one of label, bank_name, account_number, account_holder' });

export const list = Joi.object({
  counterparty_id: Joi.string().guid(),
  status: Joi.string().valid(...INSTRUCTION_STATUSES),
  page: Joi.number().integer().min(1).max(100_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
});

export const params = Joi.object({ id: Joi.string().required() });

/**
 * Staff verification (D10; issue 42): the `destination_version` staff were shown (the reveal
 * answers it), required: a verify that names nothing is refused (400 INVALID_BODY); the body
 * may carry a note.
 */
export const verify = Joi.object({
  destination_version: Joi.number().integer().min(1).max(2_147_483_647).strict().required(),
  note: Joi.string().trim().max(2000).allow(''),
});

/** Staff reveal (D10 style): the body may carry a note (why), kept in the staff audit. */
export const reveal = Joi.object({ note: Joi.string().trim().max(2000).allow('') });

/** The reason staff give when they decline (review R4): the workspace sees it. */
export const DECLINE_REASON = { min: 1, max: 1000 } as const;

/** Staff decline (review R4): the `destination_version` shown (as verify) and the reason, both required; an optional note. */
export const decline = Joi.object({
  destination_version: Joi.number().integer().min(1).max(2_147_483_647).strict().required(),
  reason: Joi.string().trim().min(DECLINE_REASON.min).max(DECLINE_REASON.max).required(),
  note: Joi.string().trim().max(2000).allow(''),
});

/** The staff queue of instructions awaiting verification (review R4): live workspaces first, oldest first, keyset pages. */
export const staffQueue = Joi.object({
  cursor: Joi.string().max(500),
  limit: Joi.number().integer().min(1).max(100).default(50),
});
