/**
 * What the examples share: the base URL, sessions (cookie + CSRF token), idempotency keys,
 * and `must()`, which turns an error answer into a thrown error.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { escrowClient, type EscrowClient } from '../client/index.js';

/** Where the API runs (the examples start nothing themselves). */
export const API_URL = process.env.API_URL ?? 'http://localhost:3000';

/** A client with no credentials: sign-up and sign-in. */
export const anonymous: EscrowClient = escrowClient({ baseUrl: API_URL });

/** A signed-in user: a client that sends the session cookie and the CSRF token on every call. */
export interface Session {
  api: EscrowClient;
  user: { id: string; email: string; full_name: string };
}

/** A fresh `Idempotency-Key` (a UUID v4): a retry with the same key repeats nothing. */
export const idempotencyKey = (): string => randomUUID();

/** A short random tag, so every run makes new accounts, references and names. */
export const tag = (): string => randomBytes(4).toString('hex');

export const say = (line: string): void => void process.stdout.write(`${line}\n`);

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What every typed-client call answers (openapi-fetch): `data` on 2xx, `error` otherwise. */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The `data` member of a success answer; anything else (an error answer, no data) throws with what came back. */
export function must<T extends { data?: unknown }>(step: string, answer: Answer<T>): NonNullable<T['data']> {
  const { data, error, response } = answer;
  if (error !== undefined || data === undefined) {
    throw new Error(`${step}: unexpected answer ${response.status} ${JSON.stringify(error ?? data)}`);
  }
  const inner = data.data;
  if (inner === undefined || inner === null) {
    throw new Error(`${step}: answer ${response.status} without data: ${JSON.stringify(data)}`);
  }
  return inner;
}

/** Throws unless `actual` is `expected` (a status the flow must have reached). */
export function expectEqual<T>(what: string, actual: T, expected: T): void {
  if (actual !== expected) throw new Error(`${what}: expected ${String(expected)}, got ${String(actual)}`);
}

/** A session from a sign-up or sign-in answer: the cookie of its Set-Cookie, and its csrf_token. */
function sessionOf(response: Response, signedIn: { user: Session['user']; csrf_token: string }): Session {
  const cookie = response.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .join('; ');
  if (!cookie) throw new Error(`no session cookie in the answer of ${response.url}`);
  const api = escrowClient({ baseUrl: API_URL, headers: { Cookie: cookie, 'X-CSRF-Token': signedIn.csrf_token } });
  return { api, user: signedIn.user };
}

/** Signs up a new account (`POST /v1/auth/register`), which also signs it in. */
export async function register(name: string): Promise<Session> {
  const handle = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '_')}_${tag()}`;
  const answer = await anonymous.POST('/v1/auth/register', {
    body: { email: `${handle}@example.com`, username: handle, full_name: name, password: 'Example-Pass1' },
  });
  return sessionOf(answer.response, must(`register ${name}`, answer));
}

/** Signs in with e-mail and password (`POST /v1/auth/login`); a two-step challenge is not handled here. */
export async function signIn(email: string, password: string): Promise<Session> {
  const answer = await anonymous.POST('/v1/auth/login', { body: { email, password } });
  const data = must(`sign in ${email}`, answer);
  if (!('csrf_token' in data)) throw new Error(`sign in ${email}: the account asks for a two-step code; use one without`);
  return sessionOf(answer.response, data);
}

/** Runs an example: exit code 0 when it finishes, 1 with the error printed when anything was unexpected. */
export function run(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    // A network failure says why in `cause` (e.g. ECONNREFUSED when nothing listens at API_URL).
    console.error(err instanceof Error ? [err.message, err.cause].filter(Boolean).join(': ') : err);
    process.exitCode = 1;
  });
}
