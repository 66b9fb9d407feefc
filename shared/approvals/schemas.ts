/** joi schemas of the approval routes (enterprise spec 4.6; D7 Decide). */
import Joi from 'joi';

export const DECISIONS = ['approve', 'reject', 'revision'] as const;
export type Decision = (typeof DECISIONS)[number];

/** GET /approvals: no `status` is the open queue; `decided` the decisions of the last 30 days (anything else 400 INVALID_QUERY). */
export const list = Joi.object({
  status: Joi.string().valid('decided'),
  page: Joi.number().integer().min(1).max(100_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
});

export interface ListQuery {
  status?: 'decided';
  page: number;
  limit: number;
}

export const params = Joi.object({ milestoneId: Joi.string().required() });

export const decide = Joi.object({
  decision: Joi.string().valid(...DECISIONS).required(),
  note: Joi.string().trim().max(2000).allow(null, ''),
});

export interface DecideInput {
  decision: Decision;
  note?: string | null;
}
