import { pino } from 'pino';
import { config } from './config.js';

/**
 * Structured JSON logs, `time` in epoch milliseconds on every line (pino's default, and
 * the access log's). Secrets never reach a log line: request bodies and headers are not
 * logged, and the paths below are redacted if an object carrying them is.
 */
export const logger = pino({
  level: config.logLevel,
  base: { service: 'escrow' },
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
 * The access log: one JSON line per request with fixed, non-secret fields. The line is
 * formatted here rather than through pino's serialiser: this is the one log call on every
 * request, and bench/ showed pino's generic path (redaction, bindings, serialisers) costing
 * about 15% of the cheapest route's throughput. Lines are gathered here (`accessLog`) and
 * handed to pino's destination (SonicBoom, asynchronous writes) in batches.
 */
export const accessStream = pino.destination({ dest: 1, sync: false, minLength: 0, maxWrite: 65_536 });

export interface AccessLine {
  requestId: string;
  method: string;
  path: string;
  route: string;
  status: number;
  ms: number;
  ip: string;
  userId: string | undefined;
}

/**
 * A KYB verification link's token is a bearer secret (shared/kyb/invites.ts): whoever holds
 * it may claim the counterparty's application. It rides in the path (the API's
 * /v1/kyb/invite/:token/... and the dashboard's /kyb/invite/:token), so the access line
 * replaces that one segment with `:token` and keeps the rest of the route's shape
 * (review R6). Matched case-insensitively and with a percent-encoded slash too, as a
 * router may still route those.
 */
const KYB_TOKEN_IN_PATH = /(\/kyb(?:\/|%2f)invite(?:\/|%2f))[^/]+/gi;

export function redactPath(path: string): string {
  // The common request has no "invite" in its path: skip the regular expression.
  return /invite/i.test(path) ? path.replace(KYB_TOKEN_IN_PATH, '$1:token') : path;
}

/**
 * One access line as JSON text. Caller-supplied values (the path, and the address, which
 * comes from X-Forwarded-For behind a proxy) are escaped with JSON.stringify, so no
 * request can break the line or forge fields; the rest are safe by construction (an HTTP
 * method token, a route template of ours, a request id matching [A-Za-z0-9._:-], a UUID).
 */
export function formatAccessLine(a: AccessLine, time = Date.now()): string {
  return (
    `{"level":30,"time":${time},"service":"escrow","log":"access","request_id":"${a.requestId}",` +
    `"method":${JSON.stringify(a.method)},"path":${JSON.stringify(redactPath(a.path))},"route":${JSON.stringify(a.route)},` +
    `"status":${a.status},"ms":${a.ms},"ip":${JSON.stringify(a.ip)}${a.userId ? `,"user_id":"${a.userId}"` : ''},"msg":"request"}\n`
  );
}

/**
 * Pending access lines go out together when 64 KiB have gathered or 100 ms after the
 * first of them, whichever comes first, and before the process exits (`flushLogs`). Each
 * write is a hand-off to libuv's thread pool, which on a busy core cost more than the
 * lines themselves: one write per line, or per 8 KiB as SonicBoom's `minLength` batched
 * them, took 5-10% of the cheapest route's throughput (bench/auth-read, the frame figure),
 * and SonicBoom's `minLength` alone never writes a quiet server's last lines.
 */
export const accessBatch = { chars: 65_536, ms: 100 };
let pendingAccessLines: string[] = [];
let pendingAccessChars = 0;
let accessTimer: NodeJS.Timeout | undefined;

/** Hands the pending access lines to the stream now. */
export function flushAccessLines(): void {
  if (accessTimer) {
    clearTimeout(accessTimer);
    accessTimer = undefined;
  }
  if (pendingAccessLines.length === 0) return;
  const text = pendingAccessLines.join('');
  pendingAccessLines = [];
  pendingAccessChars = 0;
  accessStream.write(text);
}

/** Writes one access line (batched: see above). */
export function accessLog(a: AccessLine): void {
  if (!logger.isLevelEnabled('info')) return;
  const line = formatAccessLine(a);
  pendingAccessLines.push(line);
  pendingAccessChars += line.length;
  if (pendingAccessChars >= accessBatch.chars) flushAccessLines();
  else accessTimer ??= setTimeout(flushAccessLines, accessBatch.ms).unref();
}

export function flushLogs(): Promise<void> {
  flushAccessLines();
  return new Promise((resolve) => {
    accessStream.flush((err) => {
      void err;
      resolve();
    });
  });
}
