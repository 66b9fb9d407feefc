/**
 * Cloudflare Turnstile verification (siteverify at TURNSTILE_VERIFY_URL with
 * TURNSTILE_SECRET_KEY). The check is on when a secret is configured.
 */
import { config } from '../config.js';
import { logger } from '../logger.js';

export function turnstileEnabled(): boolean {
  return config.turnstileSecretKey !== '';
}

/** True when siteverify accepts the token; false on refusal, timeout or network failure (fail closed). */
export async function verifyTurnstile(token: string, remoteIp: string): Promise<boolean> {
  const body = new URLSearchParams({ secret: config.turnstileSecretKey, response: token, remoteip: remoteIp });
  try {
    const res = await fetch(config.turnstileVerifyUrl, {
      method: 'POST',
      body,
      signal: AbortSignal.timeout(5000),
    });
    if (!res.ok) return false;
    const json = (await res.json()) as { success?: unknown };
    return json.success === true;
  } catch (err) {
    logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'turnstile siteverify unreachable');
    return false;
  }
}
