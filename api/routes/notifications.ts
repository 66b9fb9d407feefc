/**
 * In-app notifications (consumer spec 4.6, 6, 8): the owner's list, unread count, read
 * marks, per-type preferences and the server-sent-event stream. A notification of another
 * user is 403 FORBIDDEN, as for a stranger on an escrow, and nothing of it is shown.
 * Read-state changes are published by the service (after commit) so every API copy's open
 * streams recount.
 */
import * as S from '../../shared/notifications/schemas.js';
import { serializeNotification, serializeReadMark, serializeUnreadCount } from '../../shared/notifications/serialize.js';
import * as notifications from '../../shared/notifications/service.js';
import { streamSettings } from '../../shared/notifications/settings.js';
import { hubFor, openUserStream } from '../../shared/notifications/streams.js';
import type { ListQuery, PreferenceChanges } from '../../shared/notifications/types.js';
import { ok, createRouter } from '../context.js';
import { actorOf, idOf, paginated } from '../kit.js';
import { auth } from '../middleware/auth.js';
import { consume } from '../middleware/rate-limit.js';
import { bodyOf, queryOf, validate } from '../middleware/validate.js';

export const notificationsRouter = createRouter();

notificationsRouter.get('/v1/notifications', auth(), validate({ query: S.list }), async (ctx) => {
  const q = queryOf<ListQuery>(ctx);
  const { rows, total } = await notifications.listFor(actorOf(ctx), q);
  paginated(ctx, rows.map((r) => serializeNotification(r, total)), { page: q.page, limit: q.limit, total });
});

notificationsRouter.get('/v1/notifications/unread-count', auth(), async (ctx) => {
  ok(ctx, serializeUnreadCount(await notifications.unreadCount(actorOf(ctx).userId)));
});

notificationsRouter.post('/v1/notifications/mark-all-read', auth(), async (ctx) => {
  ok(ctx, { updated: await notifications.markAllRead(actorOf(ctx), ctx.redis) });
});

notificationsRouter.get('/v1/notifications/preferences', auth(), async (ctx) => {
  ok(ctx, { preferences: await notifications.preferencesOf(actorOf(ctx).userId) });
});

notificationsRouter.put('/v1/notifications/preferences', auth(), validate({ body: S.preferences }), async (ctx) => {
  const { preferences } = bodyOf<{ preferences: PreferenceChanges }>(ctx);
  ok(ctx, { preferences: await notifications.updatePreferences(actorOf(ctx).userId, preferences) });
});

notificationsRouter.patch('/v1/notifications/:id/read', auth(), validate({ params: S.byId }), async (ctx) => {
  ok(ctx, serializeReadMark(await notifications.markRead(actorOf(ctx), idOf(ctx), ctx.redis)));
});

/**
 * The stream. Everything that can fail does so before the first byte (JSON errors): auth,
 * 429 after 30 attempts a minute, 503 when this process holds its maximum of streams.
 */
notificationsRouter.get('/v1/notifications/stream', auth(), async (ctx) => {
  await consume(ctx, { name: 'notification-stream', points: streamSettings.attemptsPerMinute, durationSeconds: 60, by: 'user' });
  const hub = hubFor(ctx.app, ctx.redis);
  const stream = await openUserStream(hub, actorOf(ctx).userId);
  ctx.req.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.res.on('close', () => hub.close(stream));
  ctx.status = 200;
  ctx.set('Content-Type', 'text/event-stream');
  ctx.set('Cache-Control', 'no-store, no-transform');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.body = stream.out;
});
