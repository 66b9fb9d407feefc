/** Accounts and access: consumer spec 4.1 and decision D1. */
import * as S from '../../shared/auth/schemas.js';
import * as authService from '../../shared/auth/service.js';
import type { SignInResult } from '../../shared/auth/service.js';
import * as users from '../../shared/users/repo.js';
import { serializeUser } from '../../shared/users/serialize.js';
import { updateProfile, type ProfilePatch } from '../../shared/users/service.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { auth, clearSessionCookie, requestMeta, setSessionCookie } from '../middleware/auth.js';
import { consume, rateLimit } from '../middleware/rate-limit.js';
import { bodyOf, validate } from '../middleware/validate.js';
import { db } from '../../shared/db.js';
import { AppError } from '../../shared/errors.js';

export const authRouter = createRouter('/v1/auth');

const perIp = (name: string, points: number, durationSeconds: number) => rateLimit({ name, points, durationSeconds, by: 'ip' });
const perUser = (name: string, points: number, durationSeconds: number) => rateLimit({ name, points, durationSeconds, by: 'user' });

function answerSignIn(ctx: Ctx, result: SignInResult, status = 200): void {
  if (result.kind === 'two_factor') {
    ok(ctx, { requires_2fa: true, method: 'email', ticket: result.ticket }, status);
    return;
  }
  setSessionCookie(ctx, result.session);
  ok(ctx, { user: serializeUser(result.user), csrf_token: result.session.csrfToken }, status);
}

/** The caller's row as `auth()` loaded it this request (no second read). */
async function currentUser(ctx: Ctx) {
  const loaded = ctx.state.principal!.user;
  if (loaded) return loaded;
  const user = await users.findById(db, ctx.state.principal!.userId);
  if (!user) throw AppError.legacy(404, 'USER_NOT_FOUND', 'User not found');
  return user;
}

authRouter.post('/register', perIp('register', 10, 3600), validate({ body: S.register }), async (ctx) => {
  const { user, session } = await authService.register(bodyOf<authService.RegisterInput>(ctx), requestMeta(ctx));
  answerSignIn(ctx, { kind: 'session', user, session }, 201);
});

authRouter.post('/verify-email', auth(), validate({ body: S.verifyEmail }), async (ctx) => {
  const user = await authService.verifyEmail(ctx.state.principal!.userId, bodyOf<{ code: string }>(ctx).code);
  ok(ctx, { user: serializeUser(user) });
});

authRouter.post('/verify-email/resend', auth(), perUser('verify-resend', 5, 3600), async (ctx) => {
  await authService.resendVerification(ctx.state.principal!.userId);
  ok(ctx, { sent: true });
});

authRouter.post('/login', perIp('login', 30, 60), validate({ body: S.login }), async (ctx) => {
  answerSignIn(ctx, await authService.login(ctx.redis, bodyOf<authService.LoginInput>(ctx), requestMeta(ctx)));
});

authRouter.post('/login/2fa', perIp('login-2fa', 30, 60), validate({ body: S.login2fa }), async (ctx) => {
  const { ticket, code } = bodyOf<{ ticket: string; code: string }>(ctx);
  answerSignIn(ctx, await authService.loginTwoFactor(ctx.redis, ticket, code, requestMeta(ctx)));
});

authRouter.post('/logout', auth(), async (ctx) => {
  const principal = ctx.state.principal!;
  // With an API key there is no session: the call succeeds and changes nothing.
  if (principal.via === 'session' && principal.sessionId) {
    await authService.logout(principal.sessionId);
    clearSessionCookie(ctx);
  }
  ctx.body = { success: true };
});

authRouter.get('/me', auth('optional'), async (ctx) => {
  if (!ctx.state.principal) {
    ok(ctx, { user: null, csrf_token: null });
    return;
  }
  ok(ctx, { user: serializeUser(await currentUser(ctx)), csrf_token: ctx.state.principal.csrfToken ?? null });
});

/** Turning two-step sign-in off checks the password: guesses are limited like a password change. */
const PASSWORD_CONFIRM_LIMIT = { name: 'password-confirm', points: 10, durationSeconds: 900, by: 'user' } as const;

authRouter.patch('/me', auth(), validate({ body: S.updateMe }), async (ctx) => {
  const patch = bodyOf<ProfilePatch>(ctx);
  if (patch.two_factor_method === 'none') await consume(ctx, PASSWORD_CONFIRM_LIMIT);
  const user = await updateProfile(ctx.state.principal!.userId, patch);
  ok(ctx, { user: serializeUser(user) });
});

authRouter.get('/me/api-key', auth(), async (ctx) => {
  ok(ctx, await authService.getApiKey(ctx.state.principal!.userId));
});

authRouter.post('/me/api-key/rotate', auth(), validate({ body: S.rotateKey }), async (ctx) => {
  const { label } = bodyOf<{ label?: string }>(ctx);
  ok(ctx, await authService.rotateApiKey(ctx.state.principal!.userId, label ?? null, ctx.ip));
});

authRouter.post('/password/forgot', perIp('password-forgot', 10, 900), validate({ body: S.forgotPassword }), async (ctx) => {
  await authService.forgotPassword(bodyOf<{ email: string }>(ctx).email);
  ok(ctx, { accepted: true });
});

authRouter.post('/password/reset', perIp('password-reset', 20, 900), validate({ body: S.resetPassword }), async (ctx) => {
  const { token, password } = bodyOf<{ token: string; password: string }>(ctx);
  await authService.resetPassword(token, password);
  ok(ctx, { reset: true });
});

authRouter.post('/password', auth(), perUser('password-change', 10, 900), validate({ body: S.changePassword }), async (ctx) => {
  const { current_password, new_password } = bodyOf<{ current_password: string; new_password: string }>(ctx);
  await authService.changePassword(ctx.state.principal!.userId, current_password, new_password, ctx.state.principal!.sessionId);
  ok(ctx, { changed: true });
});
