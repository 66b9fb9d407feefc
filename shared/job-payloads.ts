/**
 * What each job carries (ARCHITECTURE "Jobs": ids only, no personal data, no secrets;
 * Redis stores it in clear text). One map from job name to its payload type, and one
 * schema per job checked at both ends: when a job is written to the outbox or added to a
 * queue (a wrong payload is refused there, in the caller's transaction), and when a
 * processor runs (workers/registry.ts: a malformed payload fails the job for good).
 *
 * The periodic jobs carry nothing; an operator may add a `reason` when running one by hand.
 */
import Joi from 'joi';
import { NOTIFICATION_TYPES, type NotificationJob } from './notifications/types.js';
import type { JobName } from './queues.js';

/** A job of the periodic schedules: nothing to carry. */
export type NoPayload = { reason?: string };

export type JobPayloads = {
  'mail.send': { emailId: string };
  'notifications.create': NotificationJob;
  'notifications.create-batch': { notices: NotificationJob[] };
  'tracking.refresh': { escrow_id: string };
  'escrows.expire': { escrow_id: string };
  'escrows.auto-release': { escrow_id: string };
  'escrows.sweep-timers': NoPayload;
  'orders.sla-refund': { order_id: string };
  'orders.sweep-sla': NoPayload;
  'payouts.send': { withdrawal_id: string };
  'payouts.sweep-stuck': NoPayload;
  'payouts.disburse': { disbursement_id: string };
  'payouts.sweep-disbursements': NoPayload;
  'payments.process-callback': { callback_id: number };
  'payments.poll-pending': NoPayload;
  'maintenance.purge-idempotency-keys': NoPayload;
  'maintenance.sweep-outbox': NoPayload;
  'maintenance.reconcile-enterprise': NoPayload;
  'maintenance.check-ledger': NoPayload;
  'exports.audit-csv': { export_id: string };
  'exports.report-csv': { export_id: string };
  'exports.purge-expired': NoPayload;
  /** The declared type of the file (as the client named it) is checked by the sanitiser, not here. */
  'uploads.sanitise': { upload_id: string; purpose: string; declared_mime: string; declared_ext: string };
  'uploads.purge-unbound': NoPayload;
  /** Outbound webhooks (decision 0020): a workspace whose events committed, an endpoint's line of events, one queued delivery. */
  'webhooks.dispatch': { workspace_id: string };
  'webhooks.deliver': { endpoint_id: string };
  'webhooks.send-once': { delivery_id: string };
  'webhooks.sweep': NoPayload;
};

export type JobPayload<N extends JobName> = JobPayloads[N];

const id = Joi.string().min(1).max(100);
const noPayload = Joi.object({ reason: Joi.string().max(200) });

const notice = Joi.object({
  user_id: id.required(),
  type: Joi.string()
    .valid(...NOTIFICATION_TYPES)
    .required(),
  escrow_id: id.allow(null).required(),
  // Only a withdrawal's notice carries it (escrow notices keep the shape they always had).
  withdrawal_id: id.allow(null),
  dispute_id: id.allow(null).required(),
  outcome: Joi.string().max(20).allow(null).required(),
}).custom((value: NotificationJob, helpers) => (value.escrow_id || value.withdrawal_id ? value : helpers.message({ custom: 'a notice needs an escrow_id or a withdrawal_id' })));

const SCHEMAS: Record<JobName, Joi.ObjectSchema> = {
  'mail.send': Joi.object({ emailId: id.required() }),
  'notifications.create': notice,
  'notifications.create-batch': Joi.object({ notices: Joi.array().items(notice).min(1).required() }),
  'tracking.refresh': Joi.object({ escrow_id: id.required() }),
  'escrows.expire': Joi.object({ escrow_id: id.required() }),
  'escrows.auto-release': Joi.object({ escrow_id: id.required() }),
  'escrows.sweep-timers': noPayload,
  'orders.sla-refund': Joi.object({ order_id: id.required() }),
  'orders.sweep-sla': noPayload,
  'payouts.send': Joi.object({ withdrawal_id: id.required() }),
  'payouts.sweep-stuck': noPayload,
  'payouts.disburse': Joi.object({ disbursement_id: id.required() }),
  'payouts.sweep-disbursements': noPayload,
  'payments.process-callback': Joi.object({ callback_id: Joi.number().integer().min(1).required() }),
  'payments.poll-pending': noPayload,
  'maintenance.purge-idempotency-keys': noPayload,
  'maintenance.sweep-outbox': noPayload,
  'maintenance.reconcile-enterprise': noPayload,
  'maintenance.check-ledger': noPayload,
  'exports.audit-csv': Joi.object({ export_id: id.required() }),
  'exports.report-csv': Joi.object({ export_id: id.required() }),
  'exports.purge-expired': noPayload,
  'uploads.sanitise': Joi.object({
    upload_id: id.required(),
    purpose: Joi.string().required(),
    declared_mime: Joi.string().allow('').required(),
    declared_ext: Joi.string().allow('').required(),
  }),
  'uploads.purge-unbound': noPayload,
  'webhooks.dispatch': Joi.object({ workspace_id: id.required() }),
  'webhooks.deliver': Joi.object({ endpoint_id: id.required() }),
  'webhooks.send-once': Joi.object({ delivery_id: id.required() }),
  'webhooks.sweep': noPayload,
};

/** A payload that does not match its job's schema (a programming error where it is written). */
export class JobPayloadError extends Error {
  constructor(
    readonly job: string,
    readonly problem: string,
  ) {
    super(`job ${job}: malformed payload: ${problem}`);
    this.name = 'JobPayloadError';
  }
}

/** The problem with `data` as the payload of `job`, or null when it matches (no conversion: what is stored is what runs). */
export function payloadProblem(job: JobName, data: unknown): string | null {
  const { error } = SCHEMAS[job].validate(data, { convert: false, abortEarly: true });
  return error ? error.message : null;
}

/** Returns `data` as the payload of `job`, or throws JobPayloadError. */
export function checkPayload<N extends JobName>(job: N, data: unknown): JobPayloads[N] {
  const problem = payloadProblem(job, data);
  if (problem !== null) throw new JobPayloadError(job, problem);
  return data as JobPayloads[N];
}
