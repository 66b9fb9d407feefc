import { expect } from 'chai';
import type { Response, Test } from 'supertest';
import { db } from '../../../shared/db.js';
import type { UserRow } from '../../../shared/users/repo.js';
import { createUser } from '../../factories/users.js';
import { api } from '../../helpers/app.js';
import { botCheckOff, countRows, issueKey, signInRaw, type Client, type SignedIn } from '../../helpers/auth-signin-util.js';

const NEW_PASSWORD = 'Brand2NewHorse';

interface WriteCase {
  name: string;
  /** Sends the write; `headers` carries the credentials under test. */
  send: (app: Client, headers: Record<string, string>) => Test;
  /** Asserts the write did not happen. */
  unchanged: (user: UserRow, session: SignedIn) => Promise<void>;
  /** Asserts the write happened (after a 2xx). */
  changed: (user: UserRow, res: Response) => Promise<void>;
}

function withHeaders(test: Test, headers: Record<string, string>): Test {
  for (const [k, v] of Object.entries(headers)) void test.set(k, v);
  return test;
}

async function userRow(id: string): Promise<UserRow> {
  return (await db('users').where({ id }).first()) as UserRow;
}

async function revokedSessions(userId: string): Promise<number> {
  const rows = (await db('sessions').where({ user_id: userId }).whereNotNull('revoked_at').select('id')) as unknown[];
  return rows.length;
}

const WRITES: WriteCase[] = [
  {
    name: 'POST /v1/auth/logout',
    send: (app, h) => withHeaders(app.post('/v1/auth/logout'), h),
    unchanged: async (user, session) => {
      expect(await revokedSessions(user.id)).to.equal(0);
      const me = await api().get('/v1/auth/me').set('Cookie', session.cookie).expect(200);
      expect(me.body.data.user?.id).to.equal(user.id);
    },
    changed: async (user, res) => {
      expect(res.body).to.deep.equal({ success: true });
      expect(await revokedSessions(user.id)).to.equal(1);
    },
  },
  {
    name: 'PATCH /v1/auth/me',
    send: (app, h) => withHeaders(app.patch('/v1/auth/me'), h).send({ full_name: 'Changed Name' }),
    unchanged: async (user) => {
      expect((await userRow(user.id)).full_name).to.equal(user.full_name);
    },
    changed: async (user, res) => {
      expect(res.body.data.user.full_name).to.equal('Changed Name');
      expect((await userRow(user.id)).full_name).to.equal('Changed Name');
    },
  },
  {
    name: 'POST /v1/auth/me/api-key/rotate',
    send: (app, h) => withHeaders(app.post('/v1/auth/me/api-key/rotate'), h).send({ label: 'ci' }),
    unchanged: async (user) => {
      expect(await countRows('api_keys', { user_id: user.id })).to.equal(0);
      expect(await countRows('outbound_emails', { user_id: user.id })).to.equal(0);
    },
    changed: async (user, res) => {
      expect(res.body.data.api_key).to.match(/^rpk_/);
      expect(await countRows('api_keys', { user_id: user.id, revoked_at: null })).to.equal(1);
    },
  },
  {
    name: 'POST /v1/auth/password',
    send: (app, h) =>
      withHeaders(app.post('/v1/auth/password'), h).send({ current_password: 'Correct1Horse', new_password: NEW_PASSWORD }),
    unchanged: async (user) => {
      expect((await userRow(user.id)).password_hash).to.equal(user.password_hash);
    },
    changed: async (user, res) => {
      expect(res.body.data).to.deep.equal({ changed: true });
      expect((await userRow(user.id)).password_hash).to.not.equal(user.password_hash);
    },
  },
  {
    name: 'POST /v1/auth/verify-email/resend',
    send: (app, h) => withHeaders(app.post('/v1/auth/verify-email/resend'), h),
    unchanged: async (user) => {
      expect(await countRows('outbound_emails', { user_id: user.id })).to.equal(0);
      expect(await countRows('auth_codes', { user_id: user.id })).to.equal(0);
    },
    changed: async (user, res) => {
      expect(res.body.data).to.deep.equal({ sent: true });
      expect(await countRows('outbound_emails', { user_id: user.id, template: 'verify-email' })).to.equal(1);
    },
  },
];

describe('sessions: CSRF and GET /v1/auth/me', () => {
  let app: Client;
  botCheckOff();
  beforeEach(() => {
    app = api();
  });

  describe('GET /v1/auth/me', () => {
    it('answers user null and csrf_token null without credentials', async () => {
      const res = await app.get('/v1/auth/me').expect(200);
      expect(res.body).to.deep.equal({ success: true, data: { user: null, csrf_token: null } });
    });

    it('answers the user and the same csrf_token as sign-in with a session', async () => {
      const { user, password } = await createUser();
      const session = await signInRaw(app, user.email, password);
      const res = await app.get('/v1/auth/me').set('Cookie', session.cookie).expect(200);
      expect(res.body.data.user.id).to.equal(user.id);
      expect(res.body.data.user.email).to.equal(user.email);
      expect(res.body.data.csrf_token).to.equal(session.csrf);
      // A second session has its own token.
      const other = await signInRaw(app, user.email, password);
      expect(other.csrf).to.not.equal(session.csrf);
      const again = await app.get('/v1/auth/me').set('Cookie', other.cookie).expect(200);
      expect(again.body.data.csrf_token).to.equal(other.csrf);
    });

    it('answers the user with csrf_token null for an API key caller', async () => {
      const { user } = await createUser();
      const key = await issueKey(user.id);
      const res = await app.get('/v1/auth/me').set('Authorization', `Bearer ${key}`).expect(200);
      expect(res.body.data.user.id).to.equal(user.id);
      expect(res.body.data.csrf_token).to.equal(null);
    });
  });

  for (const write of WRITES) {
    describe(write.name, () => {
      it('answers 403 CSRF_FAILED without the header or with a wrong one, and changes nothing', async () => {
        const { user, password } = await createUser({ verified: false });
        const session = await signInRaw(app, user.email, password);
        // A real token, but of another session of the same user.
        const otherSession = await signInRaw(app, user.email, password);
        const attempts: [string, Record<string, string>][] = [
          ['no header', { Cookie: session.cookie }],
          ['empty header', { Cookie: session.cookie, 'X-CSRF-Token': '' }],
          ['wrong header', { Cookie: session.cookie, 'X-CSRF-Token': 'x'.repeat(session.csrf.length) }],
          ['another session token', { Cookie: session.cookie, 'X-CSRF-Token': otherSession.csrf }],
          ['token in the wrong header', { Cookie: session.cookie, 'X-XSRF-Token': session.csrf }],
        ];
        for (const [label, headers] of attempts) {
          const res = await write.send(app, headers);
          expect(res.status, `${label}: ${JSON.stringify(res.body)}`).to.equal(403);
          expect(res.body.success, label).to.equal(false);
          expect(res.body.error.code, label).to.equal('CSRF_FAILED');
        }
        await write.unchanged(user, session);
      });

      it('works with the right X-CSRF-Token', async () => {
        const { user, password } = await createUser({ verified: false });
        const session = await signInRaw(app, user.email, password);
        const res = await write.send(app, { Cookie: session.cookie, 'X-CSRF-Token': session.csrf });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        await write.changed(user, res);
      });

      it('needs no CSRF header with a personal API key', async () => {
        const { user } = await createUser({ verified: false });
        const key = await issueKey(user.id);
        const res = await write.send(app, { Authorization: `Bearer ${key}` });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        if (write.name === 'POST /v1/auth/logout') {
          // With a key, logout succeeds and changes nothing.
          expect(res.body).to.deep.equal({ success: true });
          await app.get('/v1/auth/me/api-key').set('Authorization', `Bearer ${key}`).expect(200);
        } else {
          await write.changed(user, res);
        }
      });
    });
  }
});
