/** Small helpers shared by the sign-in and session tests (test/integration/auth/signin-*, sessions-*). */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import supertest from 'supertest';
import type { Response } from 'supertest';
import { createApp, type AppDeps } from '../../api/app.js';
import { config } from '../../shared/config.js';
import { db } from '../../shared/db.js';
import { insertKey } from '../../shared/auth/api-keys.js';

export type Client = ReturnType<typeof supertest>;

/**
 * A client over an app that trusts X-Forwarded-For (one proxy hop), so a test can choose
 * the client address per request. createApp reads config.trustProxy only at creation, so
 * the configuration is restored at once.
 */
export function proxiedApi(deps: AppDeps = {}): Client {
  const saved = config.trustProxy;
  config.trustProxy = true;
  try {
    return supertest(createApp(deps).callback());
  } finally {
    config.trustProxy = saved;
  }
}

let ipSeq = 0;

/** A client address no other request of the run has used (10.0.0.0/8). */
export function freshIp(): string {
  ipSeq += 1;
  return `10.${(ipSeq >> 16) & 255}.${(ipSeq >> 8) & 255}.${ipSeq & 255}`;
}

export interface LoginBody {
  email: string;
  password: string;
  turnstile_token?: string;
}

/** POST /v1/auth/login, optionally from a chosen client address (needs a proxiedApi client). */
export function postLogin(client: Client, body: LoginBody | Record<string, unknown>, ip?: string) {
  const req = client.post('/v1/auth/login');
  if (ip) void req.set('X-Forwarded-For', ip);
  return req.send(body);
}

/** The raw Set-Cookie lines of a response. */
export function setCookies(res: Response): string[] {
  const raw = res.headers['set-cookie'] as string[] | string | undefined;
  if (raw === undefined) return [];
  return Array.isArray(raw) ? raw : [raw];
}

/** The session Set-Cookie line of a response, or undefined. */
export function sessionSetCookie(res: Response): string | undefined {
  return setCookies(res).find((c) => c.startsWith(`${config.sessionCookieName}=`));
}

/** Parses one Set-Cookie line into value and lower-cased attributes. */
export function parseSetCookie(line: string): { name: string; value: string; attributes: Record<string, string | true> } {
  const [pair = '', ...attrs] = line.split(';').map((s) => s.trim());
  const eq = pair.indexOf('=');
  const attributes: Record<string, string | true> = {};
  for (const a of attrs) {
    const i = a.indexOf('=');
    if (i === -1) attributes[a.toLowerCase()] = true;
    else attributes[a.slice(0, i).toLowerCase()] = a.slice(i + 1);
  }
  return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes };
}

/** `name=value` for a Cookie request header, taken from a sign-in answer. */
export function cookieFrom(res: Response): string {
  const line = sessionSetCookie(res);
  if (!line) throw new Error(`no session cookie in the answer: ${res.status} ${JSON.stringify(res.body)}`);
  const { name, value } = parseSetCookie(line);
  return `${name}=${value}`;
}

export interface SignedIn {
  cookie: string;
  csrf: string;
}

/** Signs in over HTTP and returns the Cookie header value and the CSRF token. */
export async function signInRaw(client: Client, email: string, password: string, ip?: string): Promise<SignedIn> {
  const res = await postLogin(client, { email, password }, ip);
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { cookie: cookieFrom(res), csrf: res.body.data.csrf_token as string };
}

/** A live personal API key for a user (stored the way rotation stores it). */
export async function issueKey(userId: string): Promise<string> {
  const { plaintext } = await insertKey(db, userId, 'test', '127.0.0.1');
  return plaintext;
}

/** A loopback TCP port that nothing listens on (opened and closed again). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export async function countRows(table: string, where: Record<string, unknown> = {}): Promise<number> {
  const row = (await db(table).where(where).count<{ count: string }[]>('* as count'))[0];
  return Number(row?.count ?? 0);
}

/**
 * Turns the bot check off for every test of the calling describe block (and restores the
 * configured secret after each), so the sign-in ladder runs without Turnstile.
 */
export function botCheckOff(): void {
  let saved = config.turnstileSecretKey;
  beforeEach(() => {
    saved = config.turnstileSecretKey;
    config.turnstileSecretKey = '';
  });
  afterEach(() => {
    config.turnstileSecretKey = saved;
  });
}
