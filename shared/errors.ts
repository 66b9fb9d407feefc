/**
 * The one error type of the service and the kinds that own its HTTP statuses.
 *
 * Domain code never writes a status number. Each feature keeps a catalogue of named
 * factories in `shared/<feature>/errors.ts`; a factory owns its code and its message in
 * English and Indonesian, and picks one kind below, which owns the status:
 *
 *   export const escrowErrors = {
 *     notFound: () => fail.notFound('ESCROW_NOT_FOUND', { en: 'Escrow not found', id: 'Escrow tidak ditemukan' }),
 *   };
 *   throw escrowErrors.notFound();
 *
 * The error middleware turns any AppError into `{ success: false, error: { code,
 * message, ...extras } }`. `message` is the English text; errors made `bilingual` (the
 * upload catalogue, spec 4.5) answer Indonesian by default and carry both texts as
 * `message_id` and `message_en`.
 */
export type ErrorExtras = Record<string, unknown>;

/** An error's message in both languages of the service. */
export interface Text {
  en: string;
  id: string;
}

/** The HTTP statuses errors may answer: the only place in the service that names them. */
const STATUS = {
  badRequest: 400,
  unauthorized: 401,
  forbidden: 403,
  notFound: 404,
  conflict: 409,
  gone: 410,
  tooLarge: 413,
  unsupportedMedia: 415,
  unprocessable: 422,
  locked: 423,
  tooMany: 429,
  internal: 500,
  notImplemented: 501,
  badGateway: 502,
  unavailable: 503,
} as const;

export type ErrorKind = keyof typeof STATUS;

export interface ErrorOptions {
  extras?: ErrorExtras;
  /** Response headers to send with the error (e.g. Retry-After). */
  headers?: Record<string, string>;
  /** Answer Indonesian by default and carry `message_id` and `message_en` (spec 4.5). */
  bilingual?: boolean;
}

export class AppError extends Error {
  readonly status: number;
  readonly kind: ErrorKind;
  readonly code: string;
  readonly text: Text;
  readonly extras: ErrorExtras;
  /** Response headers to send with the error (e.g. Retry-After). */
  readonly headers: Record<string, string>;

  constructor(kind: ErrorKind, code: string, text: Text, options: ErrorOptions = {}) {
    const bilingual = options.bilingual === true;
    super(bilingual ? text.id : text.en);
    this.name = 'AppError';
    this.kind = kind;
    this.status = STATUS[kind];
    this.code = code;
    this.text = text;
    this.extras = bilingual ? { message_id: text.id, message_en: text.en, ...options.extras } : { ...options.extras };
    this.headers = { ...options.headers };
  }

  /** True when this error's status is a client error other than 429 (what a page may show inline). */
  get isClientError(): boolean {
    return this.status >= 400 && this.status < 500 && this.kind !== 'tooMany';
  }

  /** True for 5xx answers (logged at error level). */
  get isServerError(): boolean {
    return this.status >= 500;
  }

  /** The same error with its message in the asked language and both texts as extras. */
  localised(english: boolean): AppError {
    return new AppError(this.kind, this.code, english ? { en: this.text.en, id: this.text.en } : { en: this.text.id, id: this.text.id }, {
      extras: { ...this.extras, message_id: this.text.id, message_en: this.text.en },
      headers: this.headers,
    });
  }
}

type Factory = (code: string, text: Text, options?: ErrorOptions) => AppError;

/** One factory per kind: `fail.conflict('INVALID_STATE', { en, id }, { extras })`. */
export const fail = Object.fromEntries(
  (Object.keys(STATUS) as ErrorKind[]).map((kind) => [kind, (code: string, text: Text, options?: ErrorOptions) => new AppError(kind, code, text, options)]),
) as Record<ErrorKind, Factory>;

/** Shorthand for a text with the same words in both languages (codes, numbers, URLs). */
export const same = (text: string): Text => ({ en: text, id: text });

export interface FlatDetails {
  formErrors: string[];
  fieldErrors: Record<string, string[]>;
}

/** The errors every feature shares: validation, lookup, access, limits and the platform. */
export const errors = {
  invalidBody: (details: FlatDetails, text: Text = { en: 'Request body is invalid', id: 'Isi permintaan tidak valid' }) =>
    fail.badRequest('INVALID_BODY', text, { extras: { details } }),
  /** One field's rule that the body schema cannot see (it needs other fields or stored state): INVALID_BODY naming that field. */
  invalidField: (field: string, message: string) => errors.invalidBody({ formErrors: [], fieldErrors: { [field]: [message] } }),
  invalidQuery: (details: FlatDetails, text: Text = { en: 'Query parameters are invalid', id: 'Parameter kueri tidak valid' }) =>
    fail.badRequest('INVALID_QUERY', text, { extras: { details } }),
  malformedBody: () =>
    fail.badRequest('INVALID_BODY', { en: 'Request body is not valid JSON', id: 'Isi permintaan bukan JSON yang valid' }, {
      extras: { details: { formErrors: ['Malformed request body'], fieldErrors: {} } },
    }),
  bodyTooLarge: () =>
    fail.tooLarge('FST_ERR_CTP_BODY_TOO_LARGE', { en: 'Request body is larger than 1 MiB', id: 'Isi permintaan lebih besar dari 1 MiB' }),
  unsupportedMediaType: (text: Text = { en: 'Unsupported request body encoding', id: 'Pengodean isi permintaan tidak didukung' }) =>
    fail.unsupportedMedia('UNSUPPORTED_MEDIA_TYPE', text),
  notFound: (text: Text = { en: 'Not found', id: 'Tidak ditemukan' }) => fail.notFound('NOT_FOUND', text),
  noRoute: (method: string, path: string) =>
    fail.notFound('NOT_FOUND', { en: `No route for ${method} ${path}`, id: `Tidak ada rute untuk ${method} ${path}` }),
  forbidden: (text: Text = { en: 'You may not do this', id: 'Akses ditolak' }) => fail.forbidden('FORBIDDEN', text),
  unauthorized: (text: Text = { en: 'Sign in or send a personal API key', id: 'Masuk atau kirim kunci API pribadi' }) =>
    fail.unauthorized('UNAUTHORIZED', text),
  rateLimited: (retryAfterSeconds: number, code = 'RATE_LIMITED', text: Text = { en: 'Too many requests, try again later', id: 'Terlalu banyak permintaan; coba lagi nanti' }) =>
    fail.tooMany(code, text, { extras: { retry_after: retryAfterSeconds }, headers: { 'Retry-After': String(retryAfterSeconds) } }),
  internal: (requestId: string) =>
    fail.internal('INTERNAL_ERROR', { en: 'Something went wrong on our side; try again later', id: 'Terjadi kesalahan di sisi kami; coba lagi nanti' }, {
      extras: { request_id: requestId },
    }),
  notReady: (text: Text) => fail.unavailable('NOT_READY', text),
  /**
   * A migration changed a table under a statement this connection had prepared (Postgres
   * 0A000) while the request ran: its transaction was rolled back and the connection closed;
   * the same request sent again runs on a fresh one (decision 0025).
   */
  retry: () =>
    fail.unavailable('RETRY', { en: 'The database changed under this request; nothing was done, send it again', id: 'Basis data berubah saat permintaan ini berjalan; tidak ada yang dilakukan, kirim lagi' }, {
      headers: { 'Retry-After': '1' },
    }),
  /**
   * The database failed under a keyed write whose route names it (consumer spec 4.4
   * withdrawals, 4.8 order create: "500 DB_ERROR (retry with the same key)"): the request's
   * transaction was rolled back and its key released, or the connection was lost at COMMIT
   * and the retry with the same key replays the answer if it went through.
   */
  dbError: (requestId: string) =>
    fail.internal('DB_ERROR', { en: 'A database error stopped this request; retry with the same Idempotency-Key', id: 'Terjadi kesalahan basis data; coba lagi dengan Idempotency-Key yang sama' }, {
      extras: { request_id: requestId },
    }),
};
