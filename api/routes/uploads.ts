/**
 * Uploads (consumer spec 4.5, section 8; issue 7). POST reads exactly one multipart file
 * (field `file`) to a temporary file, then the service quarantines it, waits for the
 * upload worker to sanitise it and records it. Files are served only by
 * GET /v1/upload/files/:name with a link signed for the caller. Every error on these
 * routes carries `message_id` and `message_en`; `message` is Indonesian unless
 * `X-Service-Lang: en`.
 */
import { config } from '../../shared/config.js';
import { AppError } from '../../shared/errors.js';
import { localised, uploadError } from '../../shared/uploads/errors.js';
import { attachBody } from '../../shared/uploads/schemas.js';
import { fileHeaders, serializeAttachments, serializeConfig, serializeUpload } from '../../shared/uploads/serialize.js';
import * as uploads from '../../shared/uploads/service.js';
import type { Purpose } from '../../shared/uploads/sanitise/index.js';
import { ok, createRouter, type Ctx, type Middleware } from '../context.js';
import { actorOf } from '../kit.js';
import { auth } from '../middleware/auth.js';
import { idempotent, preparedOf, txOf } from '../middleware/idempotency.js';
import { readOneFile, type ReadFile } from '../middleware/multipart.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { bodyOf, validate } from '../middleware/validate.js';

export const uploadsRouter = createRouter();

/** Upload errors (and common ones) answered with both languages. */
const localise = (): Middleware => async (ctx, next) => {
  try {
    await next();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    throw localised(err, ctx.get('X-Service-Lang').trim().toLowerCase() === 'en');
  }
};

const purposeOf = (ctx: Ctx): Purpose => ctx.state.input.params as Purpose;

/** The consumer's types only (escrow, chat, kyc); `kyb` and anything else is 400 INVALID_TYPE. */
const purpose = (): Middleware => async (ctx, next) => {
  const type = String(ctx.params.type ?? '');
  if (!uploads.isConsumerPurpose(type)) throw uploadError('INVALID_TYPE');
  ctx.state.input.params = type;
  await next();
};

/**
 * Exactly one file, in field `file`, at most the type's size (413 FILE_TOO_LARGE); an empty
 * one is 400 FILE_EMPTY, anything else 400 NO_FILE (api/middleware/multipart.ts). The
 * type, with the file's hash, type and name, stands in for the body in the idempotency
 * key's request hash.
 */
const readMultipart = readOneFile({
  maxBytes: (ctx) => uploads.MAX_BYTES[purposeOf(ctx)],
  tooLarge: (max) => uploadError('FILE_TOO_LARGE', { max_bytes: max }),
  noFile: () => uploadError('NO_FILE'),
  empty: () => uploadError('FILE_EMPTY'),
  alsoHashed: (ctx) => ({ type: purposeOf(ctx) }),
});

uploadsRouter.get('/v1/upload/config', localise(), rateLimit({ name: 'public', points: config.publicRateLimitPerMinute, durationSeconds: 60, by: 'ip' }), (ctx) => {
  ok(ctx, serializeConfig());
});

/**
 * Sanitising waits for the upload worker, so it runs before the Idempotency-Key's
 * transaction opens (rule 7); the file is then recorded in that transaction. A file whose
 * request does not commit is deleted again.
 */
const sanitise = idempotent({
  prepare: async (ctx) => {
    const file = await uploads.sanitiseIncoming(actorOf(ctx).userId, purposeOf(ctx), ctx.state.input.body as ReadFile);
    ctx.state.prepared = file;
    return () => uploads.discard(file);
  },
});

uploadsRouter.post(
  '/v1/upload/:type',
  localise(),
  auth(),
  rateLimit({ name: 'uploads', points: uploads.RATE.points, durationSeconds: uploads.RATE.durationSeconds, by: 'user' }),
  purpose(),
  readMultipart,
  sanitise,
  async (ctx) => {
    const { userId } = actorOf(ctx);
    const row = await uploads.record(txOf(ctx), userId, purposeOf(ctx), preparedOf<uploads.SanitisedFile>(ctx));
    const answer = serializeUpload(row, userId);
    // The spec's Upload answer lists `success` beside its fields; the envelope's `data` carries the same fields.
    ctx.status = 200;
    ctx.body = { success: true, ...answer, data: answer };
  },
);

uploadsRouter.get('/v1/upload/files/:name', localise(), auth(), async (ctx) => {
  const { row, bytes } = await uploads.linkedFile(String(ctx.params.name ?? ''), ctx.query, actorOf(ctx).userId);
  ctx.set(fileHeaders(row));
  ctx.body = bytes;
});

// Escrow attachments (spec 4.5: "escrow attachments use it"): a party attaches their own
// `escrow` upload, once; parties and staff list them with links signed for the reader.
const escrowIdOf = (ctx: Ctx) => String(ctx.params.id ?? '');

uploadsRouter.post('/api/escrows/:id/attachments', auth(), localise(), validate({ body: attachBody }), idempotent(), async (ctx) => {
  const rows = await uploads.attachToEscrow(txOf(ctx), actorOf(ctx), escrowIdOf(ctx), bodyOf<{ attachment_url: string }>(ctx).attachment_url);
  ok(ctx, serializeAttachments(escrowIdOf(ctx), rows, actorOf(ctx).userId), 201);
});

uploadsRouter.get('/api/escrows/:id/attachments', auth(), async (ctx) => {
  const rows = await uploads.escrowAttachments(actorOf(ctx), escrowIdOf(ctx));
  ok(ctx, serializeAttachments(escrowIdOf(ctx), rows, actorOf(ctx).userId));
});
