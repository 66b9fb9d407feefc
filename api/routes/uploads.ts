/**
 * Uploads (consumer spec 4.5, section 8; issue 7). POST reads exactly one multipart file
 * (field `file`) to a temporary file, then the service quarantines it, waits for the
 * upload worker to sanitise it and records it. Files are served only by
 * GET /v1/upload/files/:name with a link signed for the caller. Every error on these
 * routes carries `message_id` and `message_en`; `message` is Indonesian unless
 * `X-Service-Lang: en`.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { koaBody } from 'koa-body';
import type { File } from 'formidable';
import { config } from '../../shared/config.js';
import { AppError } from '../../shared/errors.js';
import { localised, uploadError } from '../../shared/uploads/errors.js';
import { attachBody } from '../../shared/uploads/schemas.js';
import { fileHeaders, serializeAttachments, serializeConfig, serializeUpload } from '../../shared/uploads/serialize.js';
import * as uploads from '../../shared/uploads/service.js';
import { extensionOf } from '../../shared/uploads/sanitise/detect.js';
import type { Purpose } from '../../shared/uploads/sanitise/index.js';
import { ok, createRouter, type Ctx, type Middleware } from '../context.js';
import { actorOf } from '../kit.js';
import { auth } from '../middleware/auth.js';
import { idempotent, preparedOf, txOf } from '../middleware/idempotency.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { bodyOf, validate } from '../middleware/validate.js';

export const uploadsRouter = createRouter();

/** Multipart overhead allowed on top of the file (boundaries, part headers, small fields). */
const MULTIPART_SLACK = 64 * 1024;
/** formidable's codes for a file over maxTotalFileSize (met while streaming) and maxFileSize (at the part's end). */
const FORMIDABLE_TOO_LARGE = new Set([1009, 1016]);
/** Where multipart parts are spooled while a request is read (each removed when it ends). */
export const INCOMING_DIR = join(tmpdir(), 'escrow-uploads-incoming');

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

/** The file as the service takes it, with its hash (from formidable, computed while streaming). */
type ReadFile = uploads.IncomingFile & { sha256: string };

function formidableCode(err: unknown): number {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : 0;
}

/**
 * koa-body's multipart parser with formidable's own limits: at most one file (maxFiles),
 * no larger than the type allows while it streams (maxTotalFileSize) and at its end
 * (maxFileSize), a few small fields, spooled to INCOMING_DIR and hashed (sha256) as it is
 * written. Any parse error answers 413 FILE_TOO_LARGE or 400 NO_FILE (koa-body's onError).
 */
function multipartParser(max: number, spooled: string[]): Middleware {
  return koaBody({
    multipart: true,
    json: false,
    text: false,
    urlencoded: false,
    formidable: {
      maxFiles: 1,
      maxFileSize: max,
      maxTotalFileSize: max,
      // An empty file answers FILE_EMPTY (below), not formidable's generic refusal.
      allowEmptyFiles: true,
      minFileSize: 0,
      maxFields: 10,
      maxFieldsSize: 16 * 1024,
      hashAlgorithm: 'sha256',
      uploadDir: INCOMING_DIR,
      onFileBegin: (_name, file) => {
        spooled.push(file.filepath);
      },
    },
    onError: (err, ctx) => {
      ctx.req.resume();
      throw FORMIDABLE_TOO_LARGE.has(formidableCode(err)) ? uploadError('FILE_TOO_LARGE', { max_bytes: max }) : uploadError('NO_FILE');
    },
  });
}

/** Exactly one file, in field `file`, not empty (formidable counts files but cannot require the field without silently dropping others). */
async function theOneFile(ctx: Ctx): Promise<ReadFile> {
  const files = (ctx.request as { files?: Record<string, File | File[]> }).files ?? {};
  const file = files.file;
  if (Object.values(files).flat().length !== 1 || !file || Array.isArray(file)) throw uploadError('NO_FILE');
  const bytes = await readFile(file.filepath);
  if (bytes.length === 0) throw uploadError('FILE_EMPTY');
  return {
    bytes,
    declaredMime: file.mimetype ?? '',
    declaredExt: extensionOf(file.originalFilename ?? ''),
    sha256: typeof file.hash === 'string' ? file.hash : '',
  };
}

/**
 * Reads the multipart body: exactly one file, in field `file`, at most the type's size
 * (413 FILE_TOO_LARGE); anything else is 400 NO_FILE. The file's hash, type and name
 * stand in for the body in the idempotency key's request hash.
 *
 * Two steps stay hand-written, as formidable has no option for them: a declared
 * Content-Length over the limit is refused before a byte is read (formidable only counts
 * what arrives), and every spooled part is removed before the answer (formidable unlinks
 * its parts only on error, on a timer, and never after a successful parse).
 */
const readMultipart = (): Middleware => async (ctx, next) => {
  const max = uploads.MAX_BYTES[purposeOf(ctx)];
  if (Number(ctx.get('Content-Length') || 0) > max + MULTIPART_SLACK) {
    ctx.req.resume();
    throw uploadError('FILE_TOO_LARGE', { max_bytes: max });
  }
  if (!ctx.is('multipart/form-data')) throw uploadError('NO_FILE');
  await mkdir(INCOMING_DIR, { recursive: true, mode: 0o700 });
  const spooled: string[] = [];
  let read: ReadFile | undefined;
  try {
    await multipartParser(max, spooled)(ctx, async () => {
      read = await theOneFile(ctx);
    });
  } finally {
    await Promise.all(spooled.map((f) => rm(f, { force: true }).catch(() => undefined)));
  }
  ctx.state.input.body = read!;
  ctx.request.body = { type: purposeOf(ctx), sha256: read!.sha256, mime: read!.declaredMime, ext: read!.declaredExt };
  await next();
};

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
  readMultipart(),
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
