/**
 * The hosted checkout at `escrow_url` (/pay/:id), the sign-in page it sends people to,
 * and the static files of the pages. Server-rendered; the payment itself goes through the
 * payments service (`pay`), and the page polls the API's payment-status.
 */
import { config } from '../../shared/config.js';
import { randomToken, safeEqual } from '../../shared/crypto.js';
import { AppError } from '../../shared/errors.js';
import * as authService from '../../shared/auth/service.js';
import { checkoutErrors, pageErrors } from '../../shared/checkout/errors.js';
import * as checkout from '../../shared/checkout/service.js';
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
  if (!file) throw pageErrors.staticNotFound();
  ctx.set('Cache-Control', 'public, max-age=300');
  ctx.type = file.type;
  ctx.body = file.body;
});

// ---- Checkout ---------------------------------------------------------------------------

const checkoutFrame = (ctx: Ctx, lang: Lang, body: Html, status = 200) => {
  const other: Lang = lang === 'id' ? 'en' : 'id';
  sendPage(ctx, status, { title: T.textsOf(lang).title, lang, body, scripts: ['checkout.js'], switchTo: withLang(ctx.path, other) });
};

checkoutRouter.get(
  '/pay/:id',
  page(async (ctx) => {
    const lang = langOf(ctx);
    const view = await checkout.checkoutPage(ctx.params.id ?? '', () => pageSession(ctx));
    if (view.kind === 'ended') return checkoutFrame(ctx, lang, T.endedPanel(view.reason, lang));
    checkoutFrame(ctx, lang, T.checkoutBody(view, lang));
  }),
);

/** A form posted from a checkout page: its language, its fields, the signed-in session (401 without one), its CSRF token checked. */
async function signedInForm(ctx: Ctx) {
  const lang = langOf(ctx);
  const form = await formOf(ctx);
  const session = await pageSession(ctx);
  // The page shows the message in its own language.
  if (!session) throw checkoutErrors.signInFirst().localised(lang === 'en');
  assertCsrf(form, session);
  return { lang, form, actor: { userId: session.userId, role: session.role } };
}

checkoutRouter.post(
  '/pay/:id/pay',
  page(async (ctx) => {
    const { lang, form, actor } = await signedInForm(ctx);
    await consume(ctx, PAY_LIMIT);
    const [provider, method] = (form.get('choice') ?? '').split(':');
    if (!provider || !method) throw checkoutErrors.missingMethod().localised(lang === 'en');
    const id = ctx.params.id ?? '';
    await checkout.payFromPage(actor, id, { provider, method });
    redirect(ctx, withLang(`/pay/${id}`, lang));
  }),
);

checkoutRouter.post(
  '/pay/:id/claim',
  page(async (ctx) => {
    const { lang, form, actor } = await signedInForm(ctx);
    const id = ctx.params.id ?? '';
    await checkout.claimFromPage(actor, id, form.get('reference') ?? '');
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
  if (!cookie || !given || !safeEqual(cookie, given)) throw pageErrors.staleForm();
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
      if (err instanceof AppError && err.isClientError) {
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
