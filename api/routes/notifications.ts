/**
 * In-app notifications (consumer spec 4.6, 6, 8): the owner's list, unread count, read
 * marks, per-type preferences and the server-sent-event stream. A notification of another
 * user is 403 FORBIDDEN, as for a stranger on an escrow, and nothing of it is shown.
 * Read-state changes are published (after commit) so every API copy's open streams recount.
 */
import Joi from 'joi';
import { AppError } from '../../shared/errors.js';
import {
  NOTIFICATION_TYPES,
  listFor,
  markAllRead,
  markRead,
  preferencesOf,
  publishUnreadChanged,
  serializeNotification,
  unreadCount,
  updatePreferences,
  type NotificationType,
  type Preference,
} from '../../shared/notifications/service.js';
import { streamSettings } from '../../shared/notifications/settings.js';
import { hubFor } from '../../shared/notifications/streams.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { auth } from '../middleware/auth.js';
import { consume } from '../middleware/rate-limit.js';
import { bodyOf, paramsOf, queryOf, validate } from '../middleware/validate.js';

export const notificationsRouter = createRouter();

const userIdOf = (ctx: Ctx) => ctx.state.principal!.userId;

const listQuery = Joi.object({
  unread_only: Joi.boolean().truthy('1').falsy('0').default(false),
  page: Joi.number().integer().min(1).max(10_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
});

notificationsRouter.get('/v1/notifications', auth(), validate({ query: listQuery }), async (ctx) => {
  const q = queryOf<{ unread_only: boolean; page: number; limit: number }>(ctx);
  const { rows, total } = await listFor(userIdOf(ctx), q);
  ctx.body = {
    success: true,
    data: rows.map((r) => serializeNotification(r, total)),
    pagination: { page: q.page, limit: q.limit, total, total_pages: Math.ceil(total / q.limit) },
  };
});

notificationsRouter.get('/v1/notifications/unread-count', auth(), async (ctx) => {
  ok(ctx, { count: String(await unreadCount(userIdOf(ctx))) });
});

notificationsRouter.post('/v1/notifications/mark-all-read', auth(), async (ctx) => {
  const updated = await markAllRead(userIdOf(ctx));
  if (updated > 0) await publishUnreadChanged([userIdOf(ctx)], ctx.redis);
  ok(ctx, { updated });
});

const prefSchema = Joi.object({ in_app: Joi.boolean(), email: Joi.boolean() }).min(1);
const preferencesBody = Joi.object({
  preferences: Joi.object(Object.fromEntries(NOTIFICATION_TYPES.map((t) => [t, prefSchema]))).required(),
});

notificationsRouter.get('/v1/notifications/preferences', auth(), async (ctx) => {
  ok(ctx, { preferences: await preferencesOf(userIdOf(ctx)) });
});

notificationsRouter.put('/v1/notifications/preferences', auth(), validate({ body: preferencesBody }), async (ctx) => {
  const { preferences } = bodyOf<{ preferences: Partial<Record<NotificationType, Partial<Preference>>> }>(ctx);
  ok(ctx, { preferences: await updatePreferences(userIdOf(ctx), preferences) });
});

notificationsRouter.patch(
  '/v1/notifications/:id/read',
  auth(),
  validate({ params: Joi.object({ id: Joi.string().guid({ version: ['uuidv4', 'uuidv7'] }).required() }) }),
  async (ctx) => {
    const marked = await markRead(userIdOf(ctx), paramsOf<{ id: string }>(ctx).id);
    if (!marked) throw AppError.legacy(404, 'NOT_FOUND', 'Notification not found');
    if (marked === 'forbidden') throw AppError.legacy(403, 'FORBIDDEN', 'Not your notification');
    if (marked.changed) await publishUnreadChanged([userIdOf(ctx)], ctx.redis);
    ok(ctx, { id: marked.row.id, is_read: true });
  },
);

/**
 * The stream. Everything that can fail does so before the first byte (JSON errors): auth,
 * 429 after 30 attempts a minute, 503 when this process holds its maximum of streams.
 */
notificationsRouter.get('/v1/notifications/stream', auth(), async (ctx) => {
  const userId = userIdOf(ctx);
  await consume(ctx, { name: 'notification-stream', points: streamSettings.attemptsPerMinute, durationSeconds: 60, by: 'user' });
  const hub = hubFor(ctx.app, ctx.redis);
  if (hub.openCount >= streamSettings.maxOpen) throw AppError.legacy(503, 'STREAM_UNAVAILABLE', 'Too many open streams on this server; poll unread-count instead');
  await hub.ready();
  // Registered before the first count, so a change committed meanwhile recounts this stream too.
  const stream = hub.open(userId);
  let count: number;
  try {
    count = await unreadCount(userId);
  } catch (err) {
    hub.close(stream);
    throw err;
  }
  if (stream.lastCount === null) hub.sendCount(stream, count); // else a fresher recount was sent
  ctx.req.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.res.on('close', () => hub.close(stream));
  ctx.status = 200;
  ctx.set('Content-Type', 'text/event-stream');
  ctx.set('Cache-Control', 'no-store, no-transform');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.body = stream.out;
});
