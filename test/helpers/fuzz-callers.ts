/**
 * Callers for the route-table fuzz test: an ordinary user and an admin, each with a
 * signed-in session (cookie + CSRF token) and a personal API key, made through the API
 * itself, plus an ordinary bystander the admin routes can be pointed at. Fuzzed requests
 * may log a caller out, rotate its key, change its settings or have it suspended, so
 * `refresh()` checks each credential before a route's run and makes whatever stopped working anew.
 */
import supertest from 'supertest';
import { config } from '../../shared/config.js';
import { db } from '../../shared/db.js';
import { createUser, DEFAULT_PASSWORD } from '../factories/users.js';
import type { FuzzServer } from './fuzz-http.js';

export interface Credentials {
  userId: string;
  email: string;
  cookie: string;
  csrf: string;
  key: string;
}

export type CallerKind =
  | 'anonymous'
  | 'user-session'
  | 'user-session-no-csrf'
  | 'user-key'
  | 'admin-session'
  | 'admin-key'
  | 'user-session-and-admin-key';

export const CALLER_KINDS: CallerKind[] = [
  'anonymous',
  'user-session',
  'user-session-no-csrf',
  'user-key',
  'admin-session',
  'admin-key',
  'user-session-and-admin-key',
];

function sessionCookieOf(setCookie: string[] | string | undefined): string {
  for (const c of ([] as string[]).concat(setCookie ?? [])) {
    const m = new RegExp(`^${config.sessionCookieName}=([^;]+)`).exec(c);
    if (m?.[1]) return m[1];
  }
  throw new Error('sign-in set no session cookie');
}

export class FuzzCallers {
  user!: Credentials;
  admin!: Credentials;
  /** An ordinary account nobody signs in as: the target of admin routes. */
  bystanderId!: string;

  constructor(private readonly server: FuzzServer) {}

  private client() {
    return supertest(`http://127.0.0.1:${this.server.port}`);
  }

  static async create(server: FuzzServer): Promise<FuzzCallers> {
    const callers = new FuzzCallers(server);
    callers.user = await callers.signUp('user');
    callers.admin = await callers.signUp('admin');
    callers.bystanderId = (await createUser()).user.id;
    return callers;
  }

  /** A new account of `role`, signed in, with a personal key. */
  private async signUp(role: 'user' | 'admin'): Promise<Credentials> {
    const { user } = await createUser({ role });
    const login = await this.client().post('/v1/auth/login').send({ email: user.email, password: DEFAULT_PASSWORD });
    if (login.status !== 200) throw new Error(`sign-in failed: ${login.status} ${login.text}`);
    const cookie = sessionCookieOf(login.headers['set-cookie']);
    const csrf = login.body.data.csrf_token as string;
    const rotated = await this.client()
      .post('/v1/auth/me/api-key/rotate')
      .set('Cookie', `${config.sessionCookieName}=${cookie}`)
      .set('X-CSRF-Token', csrf)
      .send({});
    if (rotated.status !== 200) throw new Error(`key rotation failed: ${rotated.status} ${rotated.text}`);
    return { userId: user.id, email: user.email, cookie, csrf, key: rotated.body.data.api_key as string };
  }

  /** Whether both credentials still let `who` in as itself. */
  private async works(who: Credentials): Promise<boolean> {
    const bySession = await this.client().get('/v1/auth/me').set('Cookie', `${config.sessionCookieName}=${who.cookie}`);
    const byKey = await this.client().get('/v1/auth/me').set('Authorization', `Bearer ${who.key}`);
    return bySession.status === 200 && bySession.body.data?.user?.id === who.userId && byKey.status === 200 && byKey.body.data?.user?.id === who.userId;
  }

  /** Before each route: every caller can sign in as itself again, and the bystander is active. */
  async refresh(): Promise<void> {
    if (!(await this.works(this.user))) this.user = await this.signUp('user');
    if (!(await this.works(this.admin))) this.admin = await this.signUp('admin');
    const bystander = (await db('users').where({ id: this.bystanderId }).first()) as { status: string } | undefined;
    if (bystander?.status !== 'active') this.bystanderId = (await createUser()).user.id;
  }

  /** The credential headers of a caller kind. */
  headersOf(kind: CallerKind): [string, string][] {
    const session = (c: Credentials): [string, string] => ['Cookie', `${config.sessionCookieName}=${c.cookie}`];
    const key = (c: Credentials): [string, string] => ['Authorization', `Bearer ${c.key}`];
    switch (kind) {
      case 'anonymous':
        return [];
      case 'user-session':
        return [session(this.user), ['X-CSRF-Token', this.user.csrf]];
      case 'user-session-no-csrf':
        return [session(this.user)];
      case 'user-key':
        return [key(this.user)];
      case 'admin-session':
        return [session(this.admin), ['X-CSRF-Token', this.admin.csrf]];
      case 'admin-key':
        return [key(this.admin)];
      case 'user-session-and-admin-key':
        return [session(this.user), ['X-CSRF-Token', this.user.csrf], key(this.admin)];
    }
  }

  /** Ids worth putting into path parameters: the callers' and the bystander's. */
  knownIds(): string[] {
    return [this.user.userId, this.admin.userId, this.bystanderId];
  }

  /** Strings worth putting into bodies: the callers' e-mails and the common password. */
  knownStrings(): string[] {
    return [this.user.email, this.admin.email, DEFAULT_PASSWORD, this.user.csrf];
  }
}
