/**
 * Courier tracking upstream (a Binderbyte-style API: `GET {base}/v1/track?api_key&courier&awb`).
 * Read from the environment once; tests replace fields (the fake upstream's address).
 */
import Joi from 'joi';

const schema = Joi.object({
  TRACKING_BASE_URL: Joi.string().uri({ scheme: ['http', 'https'] }).default('https://api.binderbyte.com'),
  TRACKING_API_KEY: Joi.string().allow('').default(''),
  TRACKING_TIMEOUT_MS: Joi.number().integer().min(100).max(30_000).default(5000),
}).unknown(true);

const { value: v, error } = schema.validate(process.env, { convert: true }) as {
  value: { TRACKING_BASE_URL: string; TRACKING_API_KEY: string; TRACKING_TIMEOUT_MS: number };
  error?: Error;
};
if (error) throw new Error(`Invalid configuration: ${error.message}`);

export const trackingSettings = {
  baseUrl: v.TRACKING_BASE_URL.replace(/\/+$/, ''),
  apiKey: v.TRACKING_API_KEY,
  /** Upstream slower than this: `found: false`. */
  timeoutMs: v.TRACKING_TIMEOUT_MS,
  /** A snapshot is served from the cache this long. */
  cacheSeconds: 600,
  /** One forced refresh per escrow in this window. */
  refreshSeconds: 300,
};
