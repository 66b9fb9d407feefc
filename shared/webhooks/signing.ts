/**
 * Standard Webhooks signing (D8; https://www.standardwebhooks.com): the secret is `whsec_` +
 * base64 of 32 random bytes; a message is signed as
 * `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` with the secret's
 * decoded bytes as the key, and sent with the headers `webhook-id`, `webhook-timestamp`
 * (seconds since the epoch, from the service clock) and `webhook-signature`.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

export function signature(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three Standard Webhooks headers of one attempt at `nowMs`. */
export function signedHeaders(secret: string, messageId: string, body: string, nowMs: number): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature(secret, messageId, timestamp, body),
  };
}
