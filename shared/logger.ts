import { pino } from 'pino';
import { config } from './config.js';

/**
 * Structured JSON logs. Secrets never reach a log line: request bodies and headers are
 * not logged, and the paths below are redacted if an object carrying them is.
 */
export const logger = pino({
  level: config.logLevel,
  base: { service: 'escrow' },
  timestamp: pino.stdTimeFunctions.isoTime,
  redact: {
    paths: [
      'password', '*.password', 'new_password', '*.new_password', 'current_password', '*.current_password',
      'token', '*.token', 'api_key', '*.api_key', 'code_hash', '*.code_hash', 'secret', '*.secret',
      'authorization', '*.authorization', 'cookie', '*.cookie', 'headers.authorization', 'headers.cookie',
      'req.headers.authorization', 'req.headers.cookie', 'csrf_token', '*.csrf_token',
    ],
    censor: '[redacted]',
  },
});

export type Logger = typeof logger;

/**
 * The access log: one line per request with fixed, non-secret fields only, so it needs
 * no redaction (redaction on every request was the largest cost in bench/).
 */
export const accessLogger = pino({
  level: config.logLevel,
  base: { service: 'escrow', log: 'access' },
  timestamp: pino.stdTimeFunctions.isoTime,
});
