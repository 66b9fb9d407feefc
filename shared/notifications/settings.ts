/**
 * Notification stream settings (consumer spec 6 and 8). Read from the environment once;
 * tests replace fields on the object (as with shared/config.ts) to drive the timers.
 * Times are measured on the service clock (shared/clock.ts): the stream's timer only
 * looks at the clock every `tickMs`, so a test moves the clock instead of sleeping.
 */
import Joi from 'joi';

const schema = Joi.object({
  NOTIFICATION_STREAM_MAX_OPEN: Joi.number().integer().min(1).default(2000),
  NOTIFICATION_STREAM_PER_USER: Joi.number().integer().min(1).default(5),
  NOTIFICATION_STREAM_PING_MS: Joi.number().integer().min(100).default(25_000),
  NOTIFICATION_STREAM_MAX_MS: Joi.number().integer().min(1000).default(10 * 60_000),
  NOTIFICATION_STREAM_TICK_MS: Joi.number().integer().min(10).default(1000),
  NOTIFICATION_STREAM_ATTEMPTS_PER_MINUTE: Joi.number().integer().min(1).default(30),
  NOTIFICATION_EMAILS: Joi.boolean().truthy('1', 'on', 'yes').falsy('0', 'off', 'no'),
}).unknown(true);

const { value: v, error } = schema.validate(process.env, { convert: true }) as { value: Record<string, number> & { NOTIFICATION_EMAILS?: boolean }; error?: Error };
if (error) throw new Error(`Invalid configuration: ${error.message}`);

export const streamSettings = {
  /** Open streams one API process holds at most; beyond: 503 STREAM_UNAVAILABLE. */
  maxOpen: v.NOTIFICATION_STREAM_MAX_OPEN!,
  /** Open streams per user per process; the oldest is evicted beyond it. */
  perUser: v.NOTIFICATION_STREAM_PER_USER!,
  pingMs: v.NOTIFICATION_STREAM_PING_MS!,
  maxMs: v.NOTIFICATION_STREAM_MAX_MS!,
  tickMs: v.NOTIFICATION_STREAM_TICK_MS!,
  attemptsPerMinute: v.NOTIFICATION_STREAM_ATTEMPTS_PER_MINUTE!,
};

export const noticeSettings = {
  /**
   * E-mail notices through the mail queue. On unless NOTIFICATION_EMAILS says otherwise.
   * `npm test` sets it to 0 (scripts/test.sh): the suite's other tests run every queued job
   * without an SMTP sink; the notification tests switch it on with one.
   */
  emails: v.NOTIFICATION_EMAILS ?? true,
};
