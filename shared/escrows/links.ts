/**
 * Signed partner links (consumer spec 5.5, decision D3): the sellers' link-signing
 * secrets, the version-1 canonical string, and the checks a link passes before it may
 * become an escrow. Every refusal is the spec's code.
 */
import { createHmac } from 'node:crypto';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { decryptSecret, encryptSecret, randomToken, safeEqual } from '../crypto.js';
import type { Db } from '../db.js';
import { linkErrors } from './errors.js';
import * as repo from './repo.js';
import { UUID_V4 } from '../ids.js';
import { CATEGORIES, type Category } from './states.js';

export const SIGNED_FIELDS = ['buyer', 'category', 'desc', 'expires', 'item', 'ref', 'seller', 'v'] as const;
export type SignedField = (typeof SIGNED_FIELDS)[number];
/** The partner parameters a link may carry: the signed fields and the signature. */
export const PARTNER_PARAMS = [...SIGNED_FIELDS, 'sig'] as const;
export type LinkParams = Partial<Record<(typeof PARTNER_PARAMS)[number], string>>;

export const SUPPORTED_SIG_VERSIONS = ['1'] as const;
/** A link may expire at most this far ahead (spec section 8). */
export const MAX_LINK_LIFETIME_SECONDS = 30 * 24 * 3600;
export const MAX_ITEM_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 2000;


/** Version 1: the present signed fields, sorted by name, `name=encodeURIComponent(value)`, joined by `&`. */
export function canonicalString(params: LinkParams): string {
  return [...SIGNED_FIELDS]
    .sort()
    .filter((name) => params[name] !== undefined)
    .map((name) => `${name}=${encodeURIComponent(params[name]!)}`)
    .join('&');
}

/** Lowercase hex HMAC-SHA256 of the canonical string with the seller's secret. */
export function signLink(secret: string, params: LinkParams): string {
  return createHmac('sha256', secret).update(canonicalString(params), 'utf8').digest('hex');
}

/** Reads the partner parameters of a built link; the host must be one of PUBLIC_LINK_HOSTS. */
export function paramsFromLink(link: string, allowedHosts: readonly string[] = config.publicLinkHosts): LinkParams {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw linkErrors.invalidUrl();
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw linkErrors.invalidUrl();
  const host = url.host.toLowerCase();
  const hostname = url.hostname.toLowerCase();
  if (!allowedHosts.includes(host) && !allowedHosts.includes(hostname)) {
    throw linkErrors.hostNotAllowed(allowedHosts, host);
  }
  const params: LinkParams = {};
  for (const name of PARTNER_PARAMS) {
    const values = url.searchParams.getAll(name);
    if (values.length > 1) throw linkErrors.repeatedParam(name);
    if (values.length === 1) params[name] = values[0];
  }
  return params;
}

export interface VerifiedLinkFields {
  sellerId: string;
  buyerId: string | null;
  item: string;
  description: string;
  category: Category;
  ref: string;
  version: number;
  expires: Date;
}

/**
 * Every check a link passes before its signature is compared, in the order the errors
 * are reported: signature present, version, required fields, expiry, seller id.
 */
export function checkLinkShape(params: LinkParams, now = clock.now()): Omit<VerifiedLinkFields, 'item' | 'category' | 'description' | 'buyerId'> {
  const anyPartnerParam = SIGNED_FIELDS.some((f) => params[f] !== undefined);
  if (params.sig === undefined || params.sig === '') {
    throw anyPartnerParam ? linkErrors.unsignedPartnerParams() : linkErrors.signatureRequired();
  }
  if (params.v !== undefined && !(SUPPORTED_SIG_VERSIONS as readonly string[]).includes(params.v)) {
    throw linkErrors.unsupportedVersion(params.v);
  }
  const missing = (['ref', 'expires', 'v'] as const).filter((f) => params[f] === undefined || params[f] === '');
  if (missing.length > 0) throw linkErrors.incomplete(missing);
  if (!/^[0-9]{1,12}$/.test(params.expires!)) throw linkErrors.invalidExpires();
  const expiresSeconds = Number(params.expires);
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (expiresSeconds <= nowSeconds) throw linkErrors.expired();
  if (expiresSeconds - nowSeconds > MAX_LINK_LIFETIME_SECONDS) throw linkErrors.expiresTooFar();
  if (params.seller === undefined || !UUID_V4.test(params.seller)) throw linkErrors.invalidSeller();
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (params.ref!.length > 128 || /[\u0000-\u001f\u007f]/.test(params.ref!)) {
    throw linkErrors.invalidRef();
  }
  return { sellerId: params.seller.toLowerCase(), ref: params.ref!, version: Number(params.v), expires: new Date(expiresSeconds * 1000) };
}

/** Constant-time comparison of the link's signature with the one the seller's secret gives. */
export function signatureMatches(secret: string, params: LinkParams): boolean {
  const given = (params.sig ?? '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(given)) return false;
  let expected: string;
  try {
    expected = signLink(secret, params);
  } catch (err) {
    // A value that is not well-formed UTF-16 (a lone surrogate) cannot be encoded: it cannot match.
    if (err instanceof URIError) return false;
    throw err;
  }
  return safeEqual(given, expected);
}

/** The checks that follow a matching signature: buyer, category, item. */
export function checkLinkContent(params: LinkParams, buyerId: string): Pick<VerifiedLinkFields, 'item' | 'category' | 'description' | 'buyerId'> {
  const category = params.category ?? 'goods';
  if (!(CATEGORIES as readonly string[]).includes(category)) throw linkErrors.invalidCategory();
  const item = (params.item ?? '').trim();
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (item.length === 0 || item.length > MAX_ITEM_LENGTH || /[\u0000-\u001f\u007f]/.test(item)) {
    throw linkErrors.invalidItem(MAX_ITEM_LENGTH);
  }
  const description = params.desc ?? '';
  // eslint-disable-next-line no-control-regex -- tab, CR and LF are allowed in a description
  if (description.length > MAX_DESCRIPTION_LENGTH || /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(description)) {
    throw linkErrors.invalidDescription(MAX_DESCRIPTION_LENGTH);
  }
  if (params.buyer !== undefined && params.buyer.toLowerCase() !== buyerId.toLowerCase()) {
    throw linkErrors.buyerMismatch();
  }
  return { item, description, category: category as Category, buyerId: params.buyer ?? null };
}

// ---- The sellers' secrets -------------------------------------------------------------

export const SECRET_PREFIX = 'rls_';

function preview(secret: string): string {
  return `${secret.slice(0, SECRET_PREFIX.length + 4)}…${secret.slice(-4)}`;
}

/** Makes a new secret for the seller (the old one stops verifying at once); returns it once. */
export async function rotateLinkSecret(trx: Db, userId: string): Promise<{ secret: string; created_at: Date }> {
  const secret = `${SECRET_PREFIX}${randomToken(32)}`;
  const now = clock.now();
  await repo.saveLinkSecret(trx, { user_id: userId, secret_sealed: encryptSecret(secret), preview: preview(secret), created_at: now });
  return { secret, created_at: now };
}

export async function linkSecretPreview(trx: Db, userId: string): Promise<{ secret: string | null; created_at: Date | null }> {
  const row = await repo.linkSecretRow(trx, userId);
  return { secret: row?.preview ?? null, created_at: row?.created_at ?? null };
}

/** The seller's secret in clear, for verification only; never logged, never returned. */
export async function sellerSecret(trx: Db, userId: string): Promise<string | null> {
  const row = await repo.linkSecretRow(trx, userId);
  return row ? decryptSecret(row.secret_sealed) : null;
}
