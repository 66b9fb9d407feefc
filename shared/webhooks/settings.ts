/**
 * Outbound webhook delivery settings (decision 0020 "Webhooks"). Read from the environment
 * once; tests replace fields (a short timeout for a hanging receiver).
 */
import Joi from 'joi';

const schema = Joi.object({
  WEBHOOK_TIMEOUT_MS: Joi.number().integer().min(100).max(60_000).default(10_000),
  WEBHOOK_CONNECT_TIMEOUT_MS: Joi.number().integer().min(100).max(60_000).default(3_000),
  WEBHOOK_RETRY_SCALE: Joi.number().min(0.0001).max(1).default(1),
}).unknown(true);

const { value: v, error } = schema.validate(process.env, { convert: true }) as { value: { WEBHOOK_TIMEOUT_MS: number; WEBHOOK_CONNECT_TIMEOUT_MS: number; WEBHOOK_RETRY_SCALE: number }; error?: Error };
if (error) throw new Error(`Invalid configuration: ${error.message}`);

export const webhookSettings = {
  /** One attempt, from connecting to the last byte read, ends after this long (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: v.WEBHOOK_TIMEOUT_MS,
  /**
   * Resolving and connecting (TCP, and TLS for https) end after this long
   * (WEBHOOK_CONNECT_TIMEOUT_MS, default 3 s; never more than the whole attempt's): a
   * receiver whose address drops packets frees the worker slot sooner (review R2).
   */
  connectTimeoutMs: Math.min(v.WEBHOOK_CONNECT_TIMEOUT_MS, v.WEBHOOK_TIMEOUT_MS),
  /**
   * Tests and redeliveries of one workspace sent at the same time, at most (review R2): a
   * flood of them to a receiver that never answers holds this many worker slots, not all;
   * the others wait `oneOffWaitMs` (or a little more) and try again, still pending.
   */
  oneOffsPerWorkspace: 2,
  oneOffWaitMs: 5_000,
  /**
   * The retry schedule (states.ts RETRY_DELAYS_MS) is multiplied by this (WEBHOOK_RETRY_SCALE,
   * default 1, at least 0.0001): the webhook bench shortens it so a receiver failing half
   * its requests is drained within the run. Keep 1 in production.
   */
  retryScale: v.WEBHOOK_RETRY_SCALE,
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
  /** The sweep deletes expired delivery records this many per statement, until none is left. */
  purgeBatch: 5_000,
};
