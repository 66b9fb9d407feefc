/**
 * The server-rendered pages (hosted checkout, operator console): one escaping helper
 * (`html` tagged templates escape every interpolated value unless it is already `Html`),
 * the page frame, page headers (CSP without inline scripts), form bodies, the page
 * session and its CSRF check, and the static files under api/pages/static/.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { config } from '../../shared/config.js';
import { safeEqual } from '../../shared/crypto.js';
import { AppError } from '../../shared/errors.js';
import { loadSessionPrincipal } from '../../shared/auth/principal.js';
import { assertAccountActive } from '../../shared/auth/service.js';
import { pageErrors } from '../../shared/checkout/errors.js';
import type { Ctx, Middleware } from '../context.js';
import { clearSessionCookie } from '../middleware/auth.js';
import { setHtmlSecurityHeaders } from '../middleware/security-headers.js';

// ---- Escaping -------------------------------------------------------------------------

/** Markup that is already safe (made by `html` or `raw`). */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** The one escaping helper: text for element content and quoted attribute values. */
export function escapeHtml(value: string | number | boolean | null | undefined): string {
  return String(value ?? '').replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

type Piece = Html | string | number | boolean | null | undefined | readonly Piece[];

function render(value: Piece): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (typeof value === 'object') return value.map(render).join('');
  return escapeHtml(value);
}

/** Tagged template: every `${value}` is escaped unless it is `Html` (arrays are joined). */
export function html(strings: TemplateStringsArray, ...values: Piece[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new Html(out);
}

// ---- Language -------------------------------------------------------------------------

export type Lang = 'id' | 'en';

export function langOf(ctx: Ctx): Lang {
  const q = ctx.query.lang;
  return q === 'en' ? 'en' : 'id';
}

/** A path with the language kept (Indonesian is the default and needs no parameter). */
export function withLang(pathname: string, lang: Lang): string {
  if (lang === 'id') return pathname;
  return `${pathname}${pathname.includes('?') ? '&' : '?'}lang=en`;
}

export function rupiah(amount: number): string {
  return `Rp${Math.trunc(amount).toLocaleString('id-ID')}`;
}

// ---- Headers and the frame ------------------------------------------------------------

export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Every page is personal or state-bearing: never cached, never framed, scripts from us only. */
export function setPageHeaders(ctx: Ctx): void {
  setHtmlSecurityHeaders(ctx);
  ctx.res.setHeader('Content-Security-Policy', PAGE_CSP);
  ctx.res.setHeader('Cache-Control', 'no-store');
}

export interface Frame {
  title: string;
  lang: Lang;
  body: Html;
  scripts?: string[];
  /** The language switch target (the same page in the other language). */
  switchTo?: string;
  /** Full-width main column (the console's tables). */
  wide?: boolean;
}

export function pageFrame(f: Frame): string {
  const other = f.lang === 'id' ? 'English' : 'Bahasa Indonesia';
  return html`<!doctype html>
<html lang="${f.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${f.title}</title>
<link rel="stylesheet" href="/static/pages/style.css">
${(f.scripts ?? []).map((s) => html`<script src="/static/pages/${s}" defer></script>`)}
</head>
<body>
<header class="top"><span class="brand">Rekber</span>${f.switchTo ? html`<a class="lang" id="lang-switch" href="${f.switchTo}">${other}</a>` : ''}</header>
<main${f.wide ? html` class="wide"` : ''}>
${f.body}
</main>
</body>
</html>`.text;
}

export function sendPage(ctx: Ctx, status: number, frame: Frame): void {
  setPageHeaders(ctx);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = pageFrame(frame);
}

export function redirect(ctx: Ctx, location: string): void {
  setPageHeaders(ctx);
  ctx.status = 303;
  ctx.set('Location', location);
  ctx.body = '';
}

/**
 * Wraps a page handler: an AppError becomes a page with the same status and the error's
 * message (never the JSON envelope); anything else goes to the request frame as usual.
 */
export function page(handler: Middleware): Middleware {
  return async (ctx, next) => {
    try {
      await handler(ctx, next);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
      const lang = langOf(ctx);
      sendPage(ctx, err.status, {
        title: lang === 'en' ? 'Something went wrong' : 'Terjadi kesalahan',
        lang,
        body: html`<section class="card error" id="error" data-code="${err.code}"><h1>${lang === 'en' ? 'Cannot continue' : 'Tidak dapat melanjutkan'}</h1><p>${err.message}</p><p class="muted">${err.code}</p></section>`,
      });
    }
  };
}

// ---- Form bodies ----------------------------------------------------------------------

const FORM_LIMIT = 16 * 1024;

/**
 * A urlencoded form body (the JSON parser of the request frame leaves these alone): at
 * most 16 KiB, 415 for any other content type.
 */
export async function formOf(ctx: Ctx): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw pageErrors.formNotUrlencoded();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > FORM_LIMIT) throw pageErrors.formTooLarge();
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

// ---- The page session -----------------------------------------------------------------

export interface PageSession {
  userId: string;
  role: 'user' | 'admin';
  csrfToken: string;
  sessionId: string;
  displayName: string;
}

/** The signed-in person behind the session cookie, or null (an ended or unknown cookie is cleared). */
export async function pageSession(ctx: Ctx): Promise<PageSession | null> {
  const cookie = ctx.cookies.get(config.sessionCookieName);
  if (!cookie) return null;
  const check = await loadSessionPrincipal(cookie);
  if (check.kind !== 'ok') {
    clearSessionCookie(ctx);
    return null;
  }
  assertAccountActive(check.user);
  ctx.state.principal = { userId: check.user.id, role: check.user.role, via: 'session', sessionId: check.sessionId, csrfToken: check.csrfToken, user: check.user };
  return { userId: check.user.id, role: check.user.role, csrfToken: check.csrfToken, sessionId: check.sessionId, displayName: check.user.full_name };
}

/** Synchronizer token: the session's CSRF token must come back in the form's `_csrf` field. */
export function assertCsrf(form: URLSearchParams, session: PageSession): void {
  const given = form.get('_csrf') ?? '';
  if (!given || !safeEqual(given, session.csrfToken)) throw pageErrors.staleForm();
}

export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`;

const CHECKOUT_NEXT = /^\/pay\/[0-9a-fA-F-]{36}(\?lang=(en|id))?$/;
/** A console page (`/admin`, a section, one item of it by id) with its query (a queue's cursor, search, filters). */
const CONSOLE_NEXT = /^\/admin(\/[a-z][a-z-]*(\/[0-9a-fA-F-]{36})?)?(\?[a-z_]+=[A-Za-z0-9._~%+-]*(&[a-z_]+=[A-Za-z0-9._~%+-]*)*)?$/;

/**
 * Where a sign-in may send the person back to: our checkout and console pages only. A
 * console deep link keeps its page and query (issue 46), in characters that cannot leave the
 * path it names: no `//`, `..`, backslash or scheme can match.
 */
export function safeNext(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 512) return null;
  return CHECKOUT_NEXT.test(value) || CONSOLE_NEXT.test(value) ? value : null;
}

// ---- Static files ---------------------------------------------------------------------

const STATIC_TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

function staticDir(): string {
  const here = path.join(path.dirname(fileURLToPath(import.meta.url)), 'static');
  // A build under dist/ has no copy of the static files: read them from the source tree.
  return existsSync(here) ? here : path.resolve(process.cwd(), 'api', 'pages', 'static');
}

/** The static files, read once: name -> body. Only these names are ever served. */
export const STATIC_FILES: ReadonlyMap<string, { type: string; body: Buffer }> = (() => {
  const dir = staticDir();
  const out = new Map<string, { type: string; body: Buffer }>();
  for (const name of ['style.css', 'checkout.js', 'console.js']) {
    const file = path.join(dir, name);
    if (existsSync(file)) out.set(name, { type: STATIC_TYPES[path.extname(name)]!, body: readFileSync(file) });
  }
  return out;
})();
