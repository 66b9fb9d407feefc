/**
 * The one error type of the service. Services throw it with the spec's code; the error
 * middleware turns it into `{ success: false, error: { code, message, ...extras } }`.
 * HTTP statuses live here and nowhere else in domain code.
 */
export type ErrorExtras = Record<string, unknown>;

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly extras: ErrorExtras;
  /** Response headers to send with the error (e.g. Retry-After). */
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, extras: ErrorExtras = {}, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.extras = extras;
    this.headers = headers;
  }
}

export interface FlatDetails {
  formErrors: string[];
  fieldErrors: Record<string, string[]>;
}

export const errors = {
  invalidBody: (details: FlatDetails, message = 'Request body is invalid') =>
    new AppError(400, 'INVALID_BODY', message, { details }),
  invalidQuery: (details: FlatDetails, message = 'Query parameters are invalid') =>
    new AppError(400, 'INVALID_QUERY', message, { details }),
  notFound: (message = 'Not found') => new AppError(404, 'NOT_FOUND', message),
  rateLimited: (retryAfterSeconds: number, code = 'RATE_LIMITED', message = 'Too many requests, try again later') =>
    new AppError(429, code, message, { retry_after: retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) }),
};
