/**
 * The hosted checkout at `escrow_url` (/pay/:id), the sign-in page it sends people to,
 * and the static files of the pages. Server-rendered; the payment itself goes through the
 * payments service (`pay`), and the page polls the API's payment-status.
 */
import { clock } from '../../shared/clock.js';
import { config } from '../../shared/config.js';
import { randomToken, safeEqual } from '../../shared/crypto.js';
import { db } from '../../shared/db.js';
import { AppError } from '../../shared/errors.js';
import { isUuid } from '../../shared/ids.js';
import * as authService from '../../shared/auth/service.js';
import * as escrowRepo from '../../shared/escrows/repo.js';
import { isExpired } from '../../shared/escrows/service.js';
import * as payments from '../../shared/payments/service.js';
import { claimPayment } from '../../shared/payments/manual.js';
import * as paymentRepo from '../../shared/payments/repo.js';
import { surchargeOf } from '../../shared/payments/surcharge.js';
import * as users from '../../shared/users/repo.js';
import { renderQrDataUrl } from '../../shared/checkout/qr.js';
import { createRouter, type Ctx } from '../context.js';
import { requestMeta, setSessionCookie } from '../middleware/auth.js';
import { consume } from '../middleware/rate-limit.js';
import * as T from '../pages/checkout.js';
import { assertCsrf, formOf, html, langOf, page, pageSession, redirect, safeNext, sendPage, STATIC_FILES, withLang, type Html, type Lang } from '../pages/html.js';

export const checkoutRouter = createRouter();

const LOGIN_LIMIT = { name: 'login', points: 30, durationSeconds: 60, by: 'ip' } as const;
const PAY_LIMIT = { name: 'checkout-pay', points: 20, durationSeconds: 60, by: 'ip' } as const;

// ---- Static files -----------------------------------------------------------------------

checkoutRouter.get('/static/pages/:name', (ctx) => {
  const file = STATIC_FILES.get(ctx.params.name ?? '');
  if (!file) throw AppError.legacy(404, 'NOT_FOUND', 'Not found');
  ctx.set('Cache-Control', 'public, max-age=300');
  ctx.type = file.type;
  ctx.body = file.body;
});

// ---- Checkout ---------------------------------------------------------------------------

const checkoutFrame = (ctx: Ctx, lang: Lang, body: Html, status = 200) => {
  const other: Lang = lang === 'id' ? 'en' : 'id';
  sendPage(ctx, status, { title: T.textsOf(lang).title, lang, body, scripts: ['checkout.js'], switchTo: withLang(ctx.path, other) });
};

async function loadEscrow(id: string) {
  const e = isUuid(id) ? await escrowRepo.findById(db, id) : undefined;
  if (!e) throw AppError.legacy(404, 'NOT_FOUND', 'Escrow not found');
  return e;
}

async function methodOptions(amount: number): Promise<T.MethodOption[]> {
  const gateways = await payments.availableGateways();
  return gateways.flatMap((g) =>
    g.supported_methods.map((method) => {
      const surcharge = surchargeOf(amount, g);
      return { provider: g.provider, displayName: g.display_name, method, surcharge, total: amount + surcharge };
    }),
  );
}

checkoutRouter.get(
  '/pay/:id',
  page(async (ctx) => {
    const lang = langOf(ctx);
    const e = await loadEscrow(ctx.params.id ?? '');
    if (isExpired(e)) return checkoutFrame(ctx, lang, T.endedPanel('expired', lang));
    if (e.status === 'cancelled') return checkoutFrame(ctx, lang, T.endedPanel('cancelled', lang));
    const seller = await users.findById(db, e.seller_id);
    if (!seller) throw AppError.legacy(404, 'NOT_FOUND', 'Escrow not found');
    const session = await pageSession(ctx);
    const pending = e.status === 'pending_payment';
    const parts: Html[] = [T.previewCard(e, seller, lang, { countdown: pending })];
    if (!session) {
      parts.push(pending ? T.signInPrompt(e, lang) : T.statusLine(e, lang));
      return checkoutFrame(ctx, lang, html`${parts}`);
    }
    const isBuyer = e.buyer_id === session.userId;
    if (!isBuyer) {
      parts.push(pending ? T.notBuyerNote(lang) : T.statusLine(e, lang));
      return checkoutFrame(ctx, lang, html`${parts}`);
    }
    if (!pending) {
      parts.push(T.paidPanel(lang), T.statusLine(e, lang));
      return checkoutFrame(ctx, lang, html`${parts}`);
    }
    const current = await paymentRepo.currentForEscrow(db, e.id);
    const live =
      current !== undefined &&
      (current.status === 'pending' || current.status === 'awaiting_confirmation') &&
      (current.is_manual || !current.expires_at || current.expires_at > clock.now());
    if (current && live) {
      parts.push(T.paymentPanel(e, current, current.qr_string ? await renderQrDataUrl(current.qr_string) : null, session.csrfToken, lang));
      // Another method replaces the link (the old one simply expires unpaid).
      if (current.status === 'pending') parts.push(T.otherMethods(T.methodPicker(e, await methodOptions(e.amount), session.csrfToken, lang, false), lang));
    } else {
      const lastFailed = current !== undefined && (current.status === 'failed' || current.status === 'expired' || !live);
      parts.push(T.methodPicker(e, await methodOptions(e.amount), session.csrfToken, lang, lastFailed));
    }
    return checkoutFrame(ctx, lang, html`${parts}`);
  }),
);

/** A form posted from a checkout page: its language, its fields, the signed-in session (401 without one), its CSRF token checked. */
async function signedInForm(ctx: Ctx) {
  const lang = langOf(ctx);
  const form = await formOf(ctx);
  const session = await pageSession(ctx);
  if (!session) throw AppError.legacy(401, 'UNAUTHORIZED', lang === 'en' ? 'Sign in first' : 'Silakan masuk terlebih dahulu');
  assertCsrf(form, session);
  return { lang, form, session };
}

checkoutRouter.post(
  '/pay/:id/pay',
  page(async (ctx) => {
    const { lang, form, session } = await signedInForm(ctx);
    await consume(ctx, PAY_LIMIT);
    const [provider, method] = (form.get('choice') ?? '').split(':');
    if (!provider || !method) throw AppError.legacy(400, 'MISSING_METHOD', lang === 'en' ? 'Choose a payment method' : 'Pilih metode pembayaran');
    const id = ctx.params.id ?? '';
    // A resubmitted form (double click, back button) reuses the live link of the same choice.
    const current = isUuid(id) ? await paymentRepo.currentForEscrow(db, id) : undefined;
    const sameLive =
      current !== undefined &&
      current.buyer_id === session.userId &&
      current.status === 'pending' &&
      current.provider === provider &&
      current.method === method &&
      (!current.expires_at || current.expires_at > clock.now());
    if (!sameLive) await payments.pay(undefined, { userId: session.userId, role: session.role }, id, { method, provider });
    redirect(ctx, withLang(`/pay/${id}`, lang));
  }),
);

checkoutRouter.post(
  '/pay/:id/claim',
  page(async (ctx) => {
    const { lang, form, session } = await signedInForm(ctx);
    const reference = (form.get('reference') ?? '').trim();
    if (reference.length > 200) throw AppError.legacy(400, 'INVALID_BODY', 'reference may be at most 200 characters');
    const id = ctx.params.id ?? '';
    await claimPayment(undefined, { userId: session.userId, role: session.role }, id, reference === '' ? {} : { reference });
    redirect(ctx, withLang(`/pay/${id}`, lang));
  }),
);

// ---- Sign-in ----------------------------------------------------------------------------

/** Before there is a session, the sign-in form carries a double-submit token (cookie + field). */
const PRE_CSRF_COOKIE = 'signin_csrf';

function preToken(ctx: Ctx): string {
  const token = randomToken(18);
  // As the session cookie: Secure when the configuration says TLS is in front (Koa cannot see it).
  if (config.sessionCookieSecure) ctx.cookies.secure = true;
  ctx.cookies.set(PRE_CSRF_COOKIE, token, { httpOnly: true, sameSite: 'strict', path: '/sign-in', overwrite: true, secure: config.sessionCookieSecure || ctx.secure });
  return token;
}

function assertPreToken(ctx: Ctx, form: URLSearchParams): void {
  const cookie = ctx.cookies.get(PRE_CSRF_COOKIE) ?? '';
  const given = form.get('_csrf') ?? '';
  if (!cookie || !given || !safeEqual(cookie, given)) throw AppError.legacy(403, 'CSRF_FAILED', 'The form is stale or did not come from this site; reload the page and try again');
}

const signInFrame = (ctx: Ctx, lang: Lang, body: Html, status = 200) => {
  sendPage(ctx, status, { title: T.textsOf(lang).signInTitle, lang, body });
};

checkoutRouter.get(
  '/sign-in',
  page(async (ctx) => {
    const lang = langOf(ctx);
    const next = safeNext(ctx.query.next);
    const session = await pageSession(ctx);
    if (session && next) return redirect(ctx, next);
    signInFrame(ctx, lang, T.signInForm(lang, next, preToken(ctx), null));
  }),
);

function answerSignIn(ctx: Ctx, lang: Lang, next: string | null, result: authService.SignInResult): void {
  if (result.kind === 'two_factor') {
    return signInFrame(ctx, lang, T.twoFactorForm(lang, next, preToken(ctx), result.ticket));
  }
  setSessionCookie(ctx, result.session);
  if (next) return redirect(ctx, next);
  if (result.user.role === 'admin') return redirect(ctx, '/admin');
  signInFrame(ctx, lang, html`<section class="card" id="signed-in"><p>${T.textsOf(lang).signedInAs} ${result.user.full_name}</p></section>`);
}

checkoutRouter.post(
  '/sign-in',
  page(async (ctx) => {
    const lang = langOf(ctx);
    const form = await formOf(ctx);
    assertPreToken(ctx, form);
    await consume(ctx, LOGIN_LIMIT);
    const next = safeNext(form.get('next'));
    const email = form.get('email') ?? '';
    const password = form.get('password') ?? '';
    if (!email || !password) return signInFrame(ctx, lang, T.signInForm(lang, next, preToken(ctx), lang === 'en' ? 'Enter your email and password' : 'Isi email dan kata sandi'), 400);
    try {
      answerSignIn(ctx, lang, next, await authService.login(ctx.redis, { email, password }, requestMeta(ctx)));
    } catch (err) {
      if (err instanceof AppError && err.status < 500 && err.status !== 429) {
        return signInFrame(ctx, lang, T.signInForm(lang, next, preToken(ctx), err.message), err.status);
      }
      throw err;
    }
  }),
);

checkoutRouter.post(
  '/sign-in/2fa',
  page(async (ctx) => {
    const lang = langOf(ctx);
    const form = await formOf(ctx);
    assertPreToken(ctx, form);
    await consume(ctx, { name: 'login-2fa', points: 30, durationSeconds: 60, by: 'ip' });
    const next = safeNext(form.get('next'));
    answerSignIn(ctx, lang, next, await authService.loginTwoFactor(ctx.redis, form.get('ticket') ?? '', form.get('code') ?? '', requestMeta(ctx)));
  }),
);
