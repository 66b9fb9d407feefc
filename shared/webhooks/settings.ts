/**
 * Outbound webhook delivery settings (decision 0020 "Webhooks"). Read from the environment
 * once; tests replace fields (a short timeout for a hanging receiver).
 */
import Joi from 'joi';

const schema = Joi.object({
  WEBHOOK_TIMEOUT_MS: Joi.number().integer().min(100).max(60_000).default(10_000),
}).unknown(true);

const { value: v, error } = schema.validate(process.env, { convert: true }) as { value: { WEBHOOK_TIMEOUT_MS: number }; error?: Error };
if (error) throw new Error(`Invalid configuration: ${error.message}`);

export const webhookSettings = {
  /** One attempt, from connecting to the last byte read, ends after this long (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: v.WEBHOOK_TIMEOUT_MS,
  /** A receiver's answer is read up to this many bytes; the rest is never read. */
  responseCapBytes: 4096,
  /** The start of the answer kept on the delivery record. */
  excerptChars: 1000,
  /** A delivery's lease on its endpoint outlives its attempt by this much (a dead worker's lease then runs out). */
  leaseMarginMs: 15_000,
  /** One job delivers at most this many events of an endpoint, or for this long, then hands over to a new job. */
  runEvents: 100,
  runMs: 30_000,
  /** Endpoints per workspace. */
  endpointsPerWorkspace: 20,
  /** Delivery records are kept this long. */
  retentionMs: 30 * 24 * 3600_000,
};
