/** Accounts and access: consumer spec 4.1 and decision D1. */
import * as S from '../../shared/auth/schemas.js';
import * as authService from '../../shared/auth/service.js';
import type { LoginInput, RegisterInput } from '../../shared/auth/service.js';
import { serializeApiKey, serializeNewKey, serializeSession, serializeSignIn } from '../../shared/auth/serialize.js';
import { serializeUser } from '../../shared/users/serialize.js';
import { getUser, updateProfile, type ProfilePatch } from '../../shared/users/service.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { actorOf } from '../kit.js';
import { auth, clearSessionCookie, requestMeta, setSessionCookie } from '../middleware/auth.js';
import { consume, rateLimit } from '../middleware/rate-limit.js';
import { bodyOf, validate } from '../middleware/validate.js';

export const authRouter = createRouter('/v1/auth');

const perIp = (name: string, points: number, durationSeconds: number) => rateLimit({ name, points, durationSeconds, by: 'ip' });
const perUser = (name: string, points: number, durationSeconds: number) => rateLimit({ name, points, durationSeconds, by: 'user' });

/** A sign-in's answer; a finished one also sets the session cookie. */
function answerSignIn(ctx: Ctx, result: authService.SignInResult, status = 200): void {
  if (result.kind === 'session') setSessionCookie(ctx, result.session);
  ok(ctx, serializeSignIn(result), status);
}

authRouter.post('/register', perIp('register', 10, 3600), validate({ body: S.register }), async (ctx) => {
  const { user, session } = await authService.register(bodyOf<RegisterInput>(ctx), requestMeta(ctx));
  answerSignIn(ctx, { kind: 'session', user, session }, 201);
});

authRouter.post('/verify-email', auth(), validate({ body: S.verifyEmail }), async (ctx) => {
  const user = await authService.verifyEmail(actorOf(ctx).userId, bodyOf<{ code: string }>(ctx).code);
  ok(ctx, { user: serializeUser(user) });
});

authRouter.post('/verify-email/resend', auth(), perUser('verify-resend', 5, 3600), async (ctx) => {
  await authService.resendVerification(actorOf(ctx).userId);
  ok(ctx, { sent: true });
});

authRouter.post('/login', perIp('login', 30, 60), validate({ body: S.login }), async (ctx) => {
  answerSignIn(ctx, await authService.login(ctx.redis, bodyOf<LoginInput>(ctx), requestMeta(ctx)));
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
  const principal = ctx.state.principal;
  if (!principal) {
    ok(ctx, serializeSession(null, null));
    return;
  }
  // The caller's row as `auth()` loaded it this request (no second read).
  ok(ctx, serializeSession(await getUser(principal.userId, principal.user), principal.csrfToken ?? null));
});

/** Turning two-step sign-in off checks the password: guesses are limited like a password change. */
const PASSWORD_CONFIRM_LIMIT = { name: 'password-confirm', points: 10, durationSeconds: 900, by: 'user' } as const;

authRouter.patch('/me', auth(), validate({ body: S.updateMe }), async (ctx) => {
  const patch = bodyOf<ProfilePatch>(ctx);
  if (patch.two_factor_method === 'none') await consume(ctx, PASSWORD_CONFIRM_LIMIT);
  const user = await updateProfile(actorOf(ctx).userId, patch);
  ok(ctx, { user: serializeUser(user) });
});

authRouter.get('/me/api-key', auth(), async (ctx) => {
  ok(ctx, serializeApiKey(await authService.liveKeyOf(actorOf(ctx).userId)));
});

authRouter.post('/me/api-key/rotate', auth(), validate({ body: S.rotateKey }), async (ctx) => {
  const { label } = bodyOf<{ label?: string }>(ctx);
  ok(ctx, serializeNewKey(await authService.rotateApiKey(actorOf(ctx).userId, label ?? null, ctx.ip)));
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
  await authService.changePassword(actorOf(ctx).userId, current_password, new_password, ctx.state.principal!.sessionId);
  ok(ctx, { changed: true });
});
