/**
 * Reads a multipart body that carries exactly one file, in field `file`, for the routes that
 * take a file (POST /v1/upload/:type, the enterprise KYB uploads). Each route gives its own
 * size limit and its own errors; the reading, the limits and the clean-up are the same.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { koaBody } from 'koa-body';
import type { File } from 'formidable';
import type { AppError } from '../../shared/errors.js';
import { extensionOf } from '../../shared/uploads/sanitise/detect.js';
import type { Ctx, Middleware } from '../context.js';

/** Multipart overhead allowed on top of the file (boundaries, part headers, small fields). */
const MULTIPART_SLACK = 64 * 1024;
/** formidable's codes for a file over maxTotalFileSize (met while streaming) and maxFileSize (at the part's end). */
const FORMIDABLE_TOO_LARGE = new Set([1009, 1016]);
/** Where multipart parts are spooled while a request is read (each removed when it ends). */
export const INCOMING_DIR = join(tmpdir(), 'escrow-uploads-incoming');

/** What a route answers when its one file is not as it should be. */
export interface OneFileOptions {
  /** The largest file the route takes, in bytes (read after the middleware before it, e.g. the upload type). */
  maxBytes: (ctx: Ctx) => number;
  /** The file, or the declared Content-Length beyond the multipart overhead, is over maxBytes. */
  tooLarge: (maxBytes: number) => AppError;
  /** Not multipart, a body that does not parse, no file in field `file`, a file in another field, or two files. */
  noFile: () => AppError;
  /** The one file is empty. */
  empty: () => AppError;
  /**
   * Route fields the idempotency request hash covers beside the file (merged into the
   * stand-in body; the upload route adds its `type`). None when absent.
   */
  alsoHashed?: (ctx: Ctx) => Record<string, unknown>;
}

/** The file as read: the service's input (bytes, declared type and extension) with its hash (from formidable, computed while streaming). */
export type ReadFile = { bytes: Buffer; declaredMime: string; declaredExt: string; sha256: string };

function formidableCode(err: unknown): number {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : 0;
}

/**
 * koa-body's multipart parser with formidable's own limits: at most one file (maxFiles),
 * no larger than the route allows while it streams (maxTotalFileSize) and at its end
 * (maxFileSize), a few small fields, spooled to INCOMING_DIR and hashed (sha256) as it is
 * written. Any parse error answers the route's `tooLarge` or `noFile` (koa-body's onError).
 */
function multipartParser(max: number, spooled: string[], options: OneFileOptions): Middleware {
  return koaBody({
    multipart: true,
    json: false,
    text: false,
    urlencoded: false,
    formidable: {
      maxFiles: 1,
      maxFileSize: max,
      maxTotalFileSize: max,
      // An empty file answers the route's `empty` (below), not formidable's generic refusal.
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
      throw FORMIDABLE_TOO_LARGE.has(formidableCode(err)) ? options.tooLarge(max) : options.noFile();
    },
  });
}

/** Exactly one file, in field `file`, not empty (formidable counts files but cannot require the field without silently dropping others). */
async function theOneFile(ctx: Ctx, options: OneFileOptions): Promise<ReadFile> {
  const files = (ctx.request as { files?: Record<string, File | File[]> }).files ?? {};
  const file = files.file;
  if (Object.values(files).flat().length !== 1 || !file || Array.isArray(file)) throw options.noFile();
  const bytes = await readFile(file.filepath);
  if (bytes.length === 0) throw options.empty();
  return {
    bytes,
    declaredMime: file.mimetype ?? '',
    declaredExt: extensionOf(file.originalFilename ?? ''),
    sha256: typeof file.hash === 'string' ? file.hash : '',
  };
}

/**
 * Reads the multipart body: exactly one file, in field `file`, at most `maxBytes(ctx)`
 * (`tooLarge`, e.g. 413 FILE_TOO_LARGE); an empty file is `empty`; anything else is
 * `noFile`. The file is left in `ctx.state.input.body` (a ReadFile); its hash, type and name
 * (and any `alsoHashed` fields) stand in for the body in the idempotency key's request hash
 * (`ctx.request.body`).
 *
 * Two steps stay hand-written, as formidable has no option for them: a declared
 * Content-Length over the limit is refused before a byte is read (formidable only counts
 * what arrives), and every spooled part is removed before the answer (formidable unlinks
 * its parts only on error, on a timer, and never after a successful parse).
 */
export function readOneFile(options: OneFileOptions): Middleware {
  return async (ctx, next) => {
    const max = options.maxBytes(ctx);
    if (Number(ctx.get('Content-Length') || 0) > max + MULTIPART_SLACK) {
      ctx.req.resume();
      throw options.tooLarge(max);
    }
    if (!ctx.is('multipart/form-data')) throw options.noFile();
    await mkdir(INCOMING_DIR, { recursive: true, mode: 0o700 });
    const spooled: string[] = [];
    let read: ReadFile | undefined;
    try {
      await multipartParser(max, spooled, options)(ctx, async () => {
        read = await theOneFile(ctx, options);
      });
    } finally {
      await Promise.all(spooled.map((f) => rm(f, { force: true }).catch(() => undefined)));
    }
    ctx.state.input.body = read!;
    ctx.request.body = { ...options.alsoHashed?.(ctx), sha256: read!.sha256, mime: read!.declaredMime, ext: read!.declaredExt };
    await next();
  };
}
