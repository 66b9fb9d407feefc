/**
 * Signed file links: `<PUBLIC_BASE_URL>/v1/upload/files/<stored name>?exp=<unix s>&u=<user id>&sig=<hex>`
 * with sig = HMAC-SHA256(UPLOAD_LINK_SECRET, "<stored name>.<exp>.<u>"). A link is issued
 * to one user for a short time (UPLOAD_LINK_TTL_SECONDS); the file route checks the
 * signature, the expiry and that the caller is `u`. Answers that carry stored links
 * re-sign them for their reader (`freshLinks`).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { UUID_V4 } from '../ids.js';
import { uploadError } from './errors.js';

export const FILE_PATH = '/v1/upload/files/';
export const STORED_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.(?:jpg|png|webp|pdf)$/;

function mac(name: string, exp: number, userId: string): string {
  return createHmac('sha256', config.uploads.linkSecret).update(`${name}.${exp}.${userId}`).digest('hex');
}

export function signLink(name: string, userId: string, ttlSeconds = config.uploads.linkTtlSeconds): string {
  const exp = Math.floor(clock.nowMs() / 1000) + ttlSeconds;
  const q = new URLSearchParams({ exp: String(exp), u: userId, sig: mac(name, exp, userId) });
  return `${config.publicBaseUrl}${FILE_PATH}${name}?${q.toString()}`;
}

export interface LinkQuery {
  exp?: unknown;
  u?: unknown;
  sig?: unknown;
}

/**
 * Checks a link for the caller: 403 LINK_INVALID (missing or altered fields), 410
 * LINK_EXPIRED, 403 LINK_NOT_YOURS (issued to someone else). The signature is checked
 * first, so a changed `exp` or `u` is LINK_INVALID.
 */
export function verifyLink(name: string, query: LinkQuery, callerId: string): void {
  const { exp, u, sig } = query;
  if (typeof exp !== 'string' || typeof u !== 'string' || typeof sig !== 'string') throw uploadError('LINK_INVALID');
  if (!/^\d{1,12}$/.test(exp) || !UUID_V4.test(u) || !/^[0-9a-f]{64}$/.test(sig) || !STORED_NAME.test(name)) throw uploadError('LINK_INVALID');
  const expected = Buffer.from(mac(name, Number(exp), u), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) throw uploadError('LINK_INVALID');
  if (Number(exp) * 1000 <= clock.nowMs()) throw uploadError('LINK_EXPIRED');
  if (u !== callerId) throw uploadError('LINK_NOT_YOURS');
}

/** The stored name a link or bare upload id refers to; null when it is not one of ours. */
export function storedNameOf(ref: string): string | null {
  if (STORED_NAME.test(ref)) return ref;
  if (!URL.canParse(ref)) return null;
  const url = new URL(ref);
  const base = new URL(config.publicBaseUrl);
  if (url.origin !== base.origin || !url.pathname.startsWith(FILE_PATH)) return null;
  const name = url.pathname.slice(FILE_PATH.length);
  return STORED_NAME.test(name) ? name : null;
}

/**
 * True when the reference points at this service (any path of its origin, so a mangled
 * upload link is caught as UPLOAD_INVALID_REF rather than kept as an outside link).
 */
export function isOurLink(ref: string): boolean {
  if (STORED_NAME.test(ref)) return true;
  if (!URL.canParse(ref)) return false;
  return new URL(ref).origin === new URL(config.publicBaseUrl).origin;
}

/** Stored links re-signed for the reader (other links unchanged). */
export function freshLinks(refs: readonly string[], readerId: string): string[] {
  return refs.map((ref) => {
    const name = isOurLink(ref) ? storedNameOf(ref) : null;
    return name ? signLink(name, readerId) : ref;
  });
}
