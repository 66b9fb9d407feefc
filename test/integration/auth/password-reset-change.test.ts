import { expect } from 'chai';
import { clock } from '../../../shared/clock.js';
import { sha256Hex } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import { createUser, signIn } from '../../factories/users.js';
import { bearer, newAgent, type TestAgent } from '../../helpers/auth-account-support.js';
import { runJobs } from '../../helpers/jobs.js';
import { MailSink } from '../../helpers/smtp.js';

const NEW_PASSWORD = 'Brand9NewSecret';

async function login(email: string, password: string) {
  return newAgent().post('/v1/auth/login').send({ email, password });
}

async function expectSessionEnded(agent: TestAgent): Promise<void> {
  const res = await agent.get('/v1/auth/me/api-key');
  expect(res.status, JSON.stringify(res.body)).to.equal(401);
  expect(res.body.error.code).to.equal('SESSION_EXPIRED');
}

async function expectKeyRevoked(key: string): Promise<void> {
  const res = await newAgent().get('/v1/auth/me').set(...bearer(key));
  expect(res.status, JSON.stringify(res.body)).to.equal(401);
  expect(res.body.error.code).to.equal('INVALID_TOKEN');
}

/** A user with two signed-in browsers and a personal key. */
async function setup() {
  const { user, password } = await createUser();
  const first = newAgent();
  const firstCsrf = await signIn(first, user.email, password);
  const second = newAgent();
  const secondCsrf = await signIn(second, user.email, password);
  const key = (await first.post('/v1/auth/me/api-key/rotate').set('X-CSRF-Token', firstCsrf).send({}).expect(200)).body.data
    .api_key as string;
  return { user, password, first, firstCsrf, second, secondCsrf, key };
}

describe('accounts: forgotten password (POST /v1/auth/password/forgot and /reset)', () => {
  const mail = new MailSink();
  before(() => mail.start());
  after(() => mail.stop());
  beforeEach(() => mail.clear());

  async function forgot(email: string) {
    const res = await newAgent().post('/v1/auth/password/forgot').send({ email });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, data: { accepted: true } });
    await runJobs(['mail']);
  }

  function tokenFrom(email: string): string {
    const text = mail.to(email).at(-1)?.text ?? '';
    const token = /reset-password\?token=([A-Za-z0-9_-]+)/.exec(text)?.[1];
    if (!token) throw new Error(`no reset link mailed to ${email}: ${text}`);
    return token;
  }

  const reset = (token: string, password = NEW_PASSWORD) => newAgent().post('/v1/auth/password/reset').send({ token, password });

  it('answers 200 { accepted: true } for unknown and known e-mails and mails a link only to the known active account', async () => {
    const { user } = await createUser();
    const suspended = (await createUser({ status: 'suspended' })).user;
    const closed = (await createUser({ status: 'closed' })).user;
    await forgot('nobody-here@example.com');
    await forgot(suspended.email);
    await forgot(closed.email);
    expect(mail.messages).to.have.length(0);
    // The same work is done for every address (no timing oracle), but no live link exists.
    expect(await db('password_resets').whereNull('used_at').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
    expect(await db('password_resets').whereNotNull('user_id').count({ n: '*' }).first()).to.deep.equal({ n: 0 });

    await forgot(user.email.toUpperCase());
    expect(mail.messages).to.have.length(1);
    const message = mail.messages[0]!;
    expect(message.to).to.deep.equal([user.email]);
    expect(message.subject).to.match(/password/i);
    const token = tokenFrom(user.email);
    const row = (await db('password_resets').where({ user_id: user.id }).first()) as { token_hash: string; expires_at: Date; created_at: Date };
    expect(row.token_hash).to.equal(sha256Hex(token));
    expect(row.expires_at.getTime() - row.created_at.getTime()).to.equal(3600_000);
  });

  it('answers 400 INVALID_BODY for a missing or malformed e-mail', async () => {
    for (const body of [{}, { email: 'not an email' }, { email: 'a@b.co', extra: 1 }]) {
      const res = await newAgent().post('/v1/auth/password/forgot').send(body).expect(400);
      expect(res.body.error.code).to.equal('INVALID_BODY');
    }
  });

  it('reset sets the new password (sign-in works with it, not with the old) and revokes the key and every session', async () => {
    const { user, password, first, second, key } = await setup();
    await forgot(user.email);
    const res = await reset(tokenFrom(user.email)).expect(200);
    expect(res.body.success).to.equal(true);

    const old = await login(user.email, password);
    expect(old.status).to.equal(401);
    expect(old.body.error.code).to.equal('INVALID_CREDENTIALS');
    const fresh = await login(user.email, NEW_PASSWORD);
    expect(fresh.status, JSON.stringify(fresh.body)).to.equal(200);
    expect(fresh.body.data.user.id).to.equal(user.id);

    await expectSessionEnded(first);
    await expectSessionEnded(second);
    await expectKeyRevoked(key);
    const live = await db('sessions').where({ user_id: user.id }).whereNull('revoked_at').count({ n: '*' }).first();
    expect(live).to.deep.equal({ n: 1 }); // only the sign-in just made
    expect(await db('api_keys').where({ user_id: user.id }).whereNull('revoked_at').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
  });

  it('a reset token works once; the second use answers 400 INVALID_RESET_TOKEN', async () => {
    const { user } = await createUser();
    await forgot(user.email);
    const token = tokenFrom(user.email);
    await reset(token).expect(200);
    const again = await reset(token, 'Another9Password').expect(400);
    expect(again.body.error.code).to.equal('INVALID_RESET_TOKEN');
    expect((await login(user.email, NEW_PASSWORD)).status).to.equal(200);
    expect((await login(user.email, 'Another9Password')).status).to.equal(401);
  });

  it('two concurrent resets with the same token: exactly one succeeds, the other 400 INVALID_RESET_TOKEN', async () => {
    const { user } = await createUser();
    await forgot(user.email);
    const token = tokenFrom(user.email);
    const answers = await Promise.all([reset(token, 'First9Password'), reset(token, 'Second9Password')]);
    const summary = answers.map((r) => `${r.status} ${r.body.error?.code ?? ''}`.trim()).sort();
    expect(summary).to.deep.equal(['200', '400 INVALID_RESET_TOKEN']);
    const winner = answers[0].status === 200 ? 'First9Password' : 'Second9Password';
    const loser = winner === 'First9Password' ? 'Second9Password' : 'First9Password';
    expect((await login(user.email, winner)).status).to.equal(200);
    expect((await login(user.email, loser)).status).to.equal(401);
  });

  it('a reset token expires after one hour (400 INVALID_RESET_TOKEN), and works just before', async () => {
    const { user, password } = await createUser();
    await forgot(user.email);
    const token = tokenFrom(user.email);
    clock.advance(3600_000 + 1000);
    const res = await reset(token).expect(400);
    expect(res.body.error.code).to.equal('INVALID_RESET_TOKEN');
    expect((await login(user.email, password)).status).to.equal(200);

    const other = (await createUser()).user;
    await forgot(other.email);
    const token2 = tokenFrom(other.email);
    clock.advance(3600_000 - 60_000);
    await reset(token2).expect(200);
  });

  it('an unknown token answers 400 INVALID_RESET_TOKEN; a newer request replaces the earlier link', async () => {
    const { user } = await createUser();
    const unknown = await reset('x'.repeat(43)).expect(400);
    expect(unknown.body.error.code).to.equal('INVALID_RESET_TOKEN');
    await forgot(user.email);
    const earlier = tokenFrom(user.email);
    await forgot(user.email);
    const later = tokenFrom(user.email);
    expect(later).to.not.equal(earlier);
    expect((await reset(earlier).expect(400)).body.error.code).to.equal('INVALID_RESET_TOKEN');
    await reset(later).expect(200);
  });

  it('a password change voids every reset link issued before it (400 INVALID_RESET_TOKEN)', async () => {
    const { user, password, first, firstCsrf } = await setup();
    await forgot(user.email);
    const token = tokenFrom(user.email);
    await first
      .post('/v1/auth/password')
      .set('X-CSRF-Token', firstCsrf)
      .send({ current_password: password, new_password: NEW_PASSWORD })
      .expect(200);
    const res = await reset(token, 'Attacker9Choice').expect(400);
    expect(res.body.error.code).to.equal('INVALID_RESET_TOKEN');
    expect((await login(user.email, NEW_PASSWORD)).status).to.equal(200);
    expect((await login(user.email, 'Attacker9Choice')).status).to.equal(401);
    expect(await db('password_resets').where({ user_id: user.id }).whereNull('used_at').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
  });

  it('a reset voids every other live link: links asked for at once, one used, the others are dead', async () => {
    const { user } = await createUser();
    // Requests at the same moment can each leave a live link; a reset must end them all.
    await Promise.all(Array.from({ length: 3 }, () => newAgent().post('/v1/auth/password/forgot').send({ email: user.email }).expect(200)));
    await runJobs(['mail']);
    const tokens = mail.to(user.email).map((m) => /reset-password\?token=([A-Za-z0-9_-]+)/.exec(m.text)?.[1] ?? '');
    expect(tokens).to.have.length(3);
    const liveHashes = (await db('password_resets').where({ user_id: user.id }).whereNull('used_at').pluck('token_hash')) as string[];
    const live = tokens.filter((t) => liveHashes.includes(sha256Hex(t)));
    expect(live.length).to.be.at.least(1);
    await reset(live[0]!).expect(200);
    for (const other of tokens.filter((t) => t !== live[0])) {
      const res = await reset(other, 'Another9Password');
      expect(res.status, `live links before the reset: ${live.length}`).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_RESET_TOKEN');
    }
    expect((await login(user.email, NEW_PASSWORD)).status).to.equal(200);
    expect(await db('password_resets').where({ user_id: user.id }).whereNull('used_at').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
  });

  it('a weak new password answers 400 WEAK_PASSWORD and leaves the token usable', async () => {
    const { user, password, first, key } = await setup();
    await forgot(user.email);
    const token = tokenFrom(user.email);
    for (const weak of ['short1A', 'nouppercase1', 'NOLOWERCASE1', 'NoDigitsAtAll']) {
      const res = await reset(token, weak).expect(400);
      expect(res.body.error.code).to.equal('WEAK_PASSWORD');
    }
    // Nothing changed yet.
    expect((await login(user.email, password)).status).to.equal(200);
    await first.get('/v1/auth/me/api-key').expect(200);
    await newAgent().get('/v1/auth/me').set(...bearer(key)).expect(200);
    await reset(token).expect(200);
    expect((await login(user.email, NEW_PASSWORD)).status).to.equal(200);
  });

  it('a suspended account cannot use an earlier reset link (403 SUSPENDED) and the password stays', async () => {
    const { user, password } = await createUser();
    await forgot(user.email);
    const token = tokenFrom(user.email);
    await db('users').where({ id: user.id }).update({ status: 'suspended' });
    const res = await reset(token).expect(403);
    expect(res.body.error.code).to.equal('SUSPENDED');
    await db('users').where({ id: user.id }).update({ status: 'active' });
    expect((await login(user.email, password)).status).to.equal(200);
  });
});

describe('accounts: password change (POST /v1/auth/password)', () => {
  it('a wrong current password answers 401 INVALID_CREDENTIALS and changes nothing', async () => {
    const { user, password, first, firstCsrf, second, key } = await setup();
    const res = await first
      .post('/v1/auth/password')
      .set('X-CSRF-Token', firstCsrf)
      .send({ current_password: 'Wrong1Password', new_password: NEW_PASSWORD })
      .expect(401);
    expect(res.body.error.code).to.equal('INVALID_CREDENTIALS');
    expect((await login(user.email, password)).status).to.equal(200);
    await second.get('/v1/auth/me/api-key').expect(200);
    await newAgent().get('/v1/auth/me').set(...bearer(key)).expect(200);
  });

  it('success keeps the current session, ends every other session and revokes the key', async () => {
    const { user, password, first, firstCsrf, second, key } = await setup();
    const res = await first
      .post('/v1/auth/password')
      .set('X-CSRF-Token', firstCsrf)
      .send({ current_password: password, new_password: NEW_PASSWORD })
      .expect(200);
    expect(res.body.success).to.equal(true);

    const me = await first.get('/v1/auth/me').expect(200);
    expect(me.body.data.user.id).to.equal(user.id);
    await first.patch('/v1/auth/me').set('X-CSRF-Token', firstCsrf).send({ full_name: 'Still Here' }).expect(200);
    await expectSessionEnded(second);
    await expectKeyRevoked(key);

    expect((await login(user.email, password)).status).to.equal(401);
    expect((await login(user.email, NEW_PASSWORD)).status).to.equal(200);
  });

  it('with the API key: the change works and the key itself is revoked with every session', async () => {
    const { user, password, first, second, key } = await setup();
    await newAgent()
      .post('/v1/auth/password')
      .set(...bearer(key))
      .send({ current_password: password, new_password: NEW_PASSWORD })
      .expect(200);
    await expectKeyRevoked(key);
    await expectSessionEnded(first);
    await expectSessionEnded(second);
    expect((await login(user.email, NEW_PASSWORD)).status).to.equal(200);
  });

  it('a weak new password answers 400 WEAK_PASSWORD; bad bodies 400 INVALID_BODY; no session 401', async () => {
    const { user, password, first, firstCsrf, second } = await setup();
    const weak = await first
      .post('/v1/auth/password')
      .set('X-CSRF-Token', firstCsrf)
      .send({ current_password: password, new_password: 'weakpass' })
      .expect(400);
    expect(weak.body.error.code).to.equal('WEAK_PASSWORD');
    const missing = await first.post('/v1/auth/password').set('X-CSRF-Token', firstCsrf).send({ current_password: password }).expect(400);
    expect(missing.body.error.code).to.equal('INVALID_BODY');
    expect(missing.body.error.details.fieldErrors).to.have.property('new_password');
    const noCsrf = await first.post('/v1/auth/password').send({ current_password: password, new_password: NEW_PASSWORD }).expect(403);
    expect(noCsrf.body.error.code).to.equal('CSRF_FAILED');
    const anon = await newAgent().post('/v1/auth/password').send({ current_password: password, new_password: NEW_PASSWORD }).expect(401);
    expect(anon.body.error.code).to.equal('UNAUTHORIZED');
    await second.get('/v1/auth/me/api-key').expect(200);
    expect((await login(user.email, password)).status).to.equal(200);
  });
});
