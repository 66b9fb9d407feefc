import { expect } from 'chai';
import { clock } from '../../../shared/clock.js';
import { sha256Hex } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import { createLegacyKey, createUser, signIn } from '../../factories/users.js';
import { bearer, newAgent, type TestAgent } from '../../helpers/auth-account-support.js';
import { runJobs } from '../../helpers/jobs.js';
import { MailSink } from '../../helpers/smtp.js';

describe('accounts: personal API keys (/v1/auth/me/api-key)', () => {
  const mail = new MailSink();
  before(() => mail.start());
  after(() => mail.stop());
  beforeEach(() => mail.clear());

  async function setup() {
    const { user, password } = await createUser();
    const agent = newAgent();
    const csrf = await signIn(agent, user.email, password);
    return { user, agent, csrf };
  }

  const rotateBySession = (agent: TestAgent, csrf: string, body: unknown = {}) =>
    agent.post('/v1/auth/me/api-key/rotate').set('X-CSRF-Token', csrf).send(body as object);
  const rotateByKey = (key: string, body: unknown = {}) =>
    newAgent().post('/v1/auth/me/api-key/rotate').set(...bearer(key)).send(body as object);
  const meByKey = (key: string) => newAgent().get('/v1/auth/me').set(...bearer(key));

  async function expectKeyWorks(key: string, userId: string): Promise<void> {
    const res = await meByKey(key);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.user.id).to.equal(userId);
  }

  async function expectKeyRefused(key: string): Promise<void> {
    const res = await newAgent().get('/v1/auth/me/api-key').set(...bearer(key));
    expect(res.status, JSON.stringify(res.body)).to.equal(401);
    expect(res.body.error.code).to.equal('INVALID_TOKEN');
  }

  const liveKeys = async (userId: string) =>
    Number((await db('api_keys').where({ user_id: userId }).whereNull('revoked_at').count({ n: '*' }).first())!.n);

  it('GET answers api_key, created_at and last_used_at all null when there is no key', async () => {
    const { agent } = await setup();
    const res = await agent.get('/v1/auth/me/api-key').expect(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.data).to.include({ api_key: null, created_at: null, last_used_at: null });
  });

  it('rotate returns the rpk_ plaintext once; GET shows a masked preview, created_at, and last_used_at after use', async () => {
    const { user, agent, csrf } = await setup();
    const res = await rotateBySession(agent, csrf).expect(200);
    const key = res.body.data.api_key as string;
    expect(key).to.match(/^rpk_[A-Za-z0-9_-]{40,}$/);

    const row = await db('api_keys').where({ user_id: user.id }).first();
    expect(row.key_hash).to.equal(sha256Hex(key));
    expect(JSON.stringify(row)).to.not.include(key);

    const view = await agent.get('/v1/auth/me/api-key').expect(200);
    const preview = view.body.data.api_key as string;
    expect(preview).to.be.a('string');
    expect(preview).to.not.include(key);
    expect(preview.startsWith('rpk_')).to.equal(true);
    expect(preview.length).to.be.lessThan(key.length / 2);
    expect(JSON.stringify(view.body)).to.not.include(key.slice(4, 20));
    expect(Date.parse(view.body.data.created_at as string)).to.be.within(clock.nowMs() - 10_000, clock.nowMs() + 1000);
    expect(view.body.data.last_used_at).to.equal(null);

    // Rotation answers never repeat the plaintext; GET again still shows only the preview.
    await expectKeyWorks(key, user.id);
    const after = await agent.get('/v1/auth/me/api-key').expect(200);
    expect(after.body.data.api_key).to.equal(preview);
    expect(after.body.data.last_used_at).to.be.a('string');
    expect(Date.parse(after.body.data.last_used_at as string)).to.be.within(clock.nowMs() - 10_000, clock.nowMs() + 1000);
  });

  it('the key authenticates reads and writes with Authorization: Bearer (no cookie, no CSRF)', async () => {
    const { user, agent, csrf } = await setup();
    const key = (await rotateBySession(agent, csrf).expect(200)).body.data.api_key as string;
    await expectKeyWorks(key, user.id);
    const patch = await newAgent().patch('/v1/auth/me').set(...bearer(key)).send({ full_name: 'Key Writer' }).expect(200);
    expect(patch.body.data.user.full_name).to.equal('Key Writer');
    // lower-case scheme is accepted too
    await newAgent().get('/v1/auth/me/api-key').set('Authorization', `bearer ${key}`).expect(200);
    // a wrong key of the right shape, and a malformed header
    await expectKeyRefused(`rpk_${'A'.repeat(43)}`);
    const malformed = await newAgent().get('/v1/auth/me/api-key').set('Authorization', key).expect(401);
    expect(malformed.body.error.code).to.equal('INVALID_TOKEN');
    const none = await newAgent().get('/v1/auth/me/api-key').expect(401);
    expect(none.body.error.code).to.equal('UNAUTHORIZED');
  });

  it('rotating revokes the previous key at once (old key 401 INVALID_TOKEN, new key works)', async () => {
    const { user, agent, csrf } = await setup();
    const first = (await rotateBySession(agent, csrf).expect(200)).body.data.api_key as string;
    const second = (await rotateByKey(first).expect(200)).body.data.api_key as string;
    expect(second).to.not.equal(first);
    await expectKeyRefused(first);
    await expectKeyWorks(second, user.id);
    expect(await liveKeys(user.id)).to.equal(1);
    const revoked = await db('api_keys').where({ key_hash: sha256Hex(first) }).first();
    expect(revoked.revoked_at).to.be.instanceOf(Date);
  });

  it('accepts labels up to 64 allowed characters starting with a letter or digit', async () => {
    const { user, agent, csrf } = await setup();
    for (const label of ['CI server', '9.deploy:prod_box-1', 'x'.repeat(64)]) {
      const res = await rotateBySession(agent, csrf, { label });
      expect(res.status, `${label}: ${JSON.stringify(res.body)}`).to.equal(200);
      expect((await db('api_keys').where({ user_id: user.id }).whereNull('revoked_at').first()).label).to.equal(label);
    }
  });

  it('a bad label answers 400 INVALID_BODY and leaves the current key unchanged and working', async () => {
    const { user, agent, csrf } = await setup();
    const key = (await rotateBySession(agent, csrf, { label: 'first' }).expect(200)).body.data.api_key as string;
    const snapshot = () => db('api_keys').where({ user_id: user.id }).select('id', 'key_hash', 'preview', 'label', 'created_at', 'revoked_at');
    const before = await snapshot();
    const bad: unknown[] = ['x'.repeat(65), ' leading space', '-dash-first', '_under', 'slash/inside', 'emoji 😀', 'semi;colon', '', 42, null];
    for (const label of bad) {
      const res = await rotateByKey(key, { label });
      expect(res.status, `${JSON.stringify(label)}: ${JSON.stringify(res.body)}`).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_BODY');
      expect(res.body.error.details.fieldErrors).to.have.property('label');
    }
    expect(await snapshot()).to.deep.equal(before);
    await expectKeyWorks(key, user.id);
  });

  it('a body that is a JSON array, or has unknown fields, answers 400 INVALID_BODY and keeps the key', async () => {
    const { user, agent, csrf } = await setup();
    const key = (await rotateBySession(agent, csrf).expect(200)).body.data.api_key as string;
    const array = await rotateByKey(key, [{ label: 'x' }]).expect(400);
    expect(array.body.error.code).to.equal('INVALID_BODY');
    const arraySession = await rotateBySession(agent, csrf, []).expect(400);
    expect(arraySession.body.error.code).to.equal('INVALID_BODY');
    const unknown = await rotateByKey(key, { label: 'ok', scope: 'all' }).expect(400);
    expect(unknown.body.error.code).to.equal('INVALID_BODY');
    expect(await liveKeys(user.id)).to.equal(1);
    await expectKeyWorks(key, user.id);
  });

  it('allows 5 rotations per hour, then 429 ROTATE_LIMITED with Retry-After while the current key keeps working', async () => {
    const { user, agent, csrf } = await setup();
    let key = '';
    for (let i = 0; i < 5; i++) {
      const res = await (key ? rotateByKey(key) : rotateBySession(agent, csrf));
      expect(res.status, `rotation ${i + 1}: ${JSON.stringify(res.body)}`).to.equal(200);
      key = res.body.data.api_key as string;
    }
    const limited = await rotateByKey(key);
    expect(limited.status).to.equal(429);
    expect(limited.body.error.code).to.equal('ROTATE_LIMITED');
    const retryAfter = limited.headers['retry-after'];
    expect(retryAfter).to.match(/^\d+$/);
    expect(Number(retryAfter)).to.be.within(3500, 3600);
    expect(JSON.stringify(limited.body)).to.not.match(/rpk_/);
    // The session is limited too (it is per account, not per credential).
    const bySession = await rotateBySession(agent, csrf).expect(429);
    expect(bySession.body.error.code).to.equal('ROTATE_LIMITED');

    await expectKeyWorks(key, user.id);
    expect(await liveKeys(user.id)).to.equal(1);
    expect((await db('api_keys').where({ user_id: user.id }).whereNull('revoked_at').first()).key_hash).to.equal(sha256Hex(key));

    clock.advance(30 * 60_000);
    expect((await rotateByKey(key).expect(429)).body.error.code).to.equal('ROTATE_LIMITED');
    clock.advance(30 * 60_000 + 1000);
    const again = await rotateByKey(key).expect(200);
    await expectKeyRefused(key);
    await expectKeyWorks(again.body.data.api_key as string, user.id);
  });

  it('two concurrent rotations leave exactly one live key', async () => {
    const { user, agent, csrf } = await setup();
    const key = (await rotateBySession(agent, csrf).expect(200)).body.data.api_key as string;
    const answers = await Promise.all([rotateByKey(key), rotateByKey(key), rotateBySession(agent, csrf)]);
    const issued = answers.filter((r) => r.status === 200).map((r) => r.body.data.api_key as string);
    for (const r of answers) expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 401]);
    expect(issued.length).to.be.greaterThan(0);
    expect(await liveKeys(user.id)).to.equal(1);
    let working = 0;
    for (const k of [key, ...issued]) if ((await meByKey(k)).status === 200) working += 1;
    expect(working).to.equal(1);
  });

  it('concurrent rotations cannot pass the hourly limit: after 4, three at once give one 200 and two 429', async () => {
    const { user, agent, csrf } = await setup();
    for (let i = 0; i < 4; i++) await rotateBySession(agent, csrf).expect(200);
    const answers = await Promise.all([rotateBySession(agent, csrf), rotateBySession(agent, csrf), rotateBySession(agent, csrf)]);
    const summary = answers.map((r) => `${r.status} ${r.body.error?.code ?? ''}`.trim()).sort();
    expect(summary).to.deep.equal(['200', '429 ROTATE_LIMITED', '429 ROTATE_LIMITED']);
    expect(await db('api_keys').where({ user_id: user.id }).count({ n: '*' }).first()).to.deep.equal({ n: 5 });
    expect(await liveKeys(user.id)).to.equal(1);
    const winner = answers.find((r) => r.status === 200)!.body.data.api_key as string;
    await expectKeyWorks(winner, user.id);
  });

  it('each rotation e-mails the owner the time and IP, never the key or its hash', async () => {
    const { user, agent, csrf } = await setup();
    const before = clock.nowMs();
    const first = (await rotateBySession(agent, csrf, { label: 'laptop' }).expect(200)).body.data.api_key as string;
    const second = (await rotateByKey(first).expect(200)).body.data.api_key as string;
    await runJobs(['mail']);
    const mails = mail.to(user.email);
    expect(mails).to.have.length(2);
    const rows = await db('api_keys').where({ user_id: user.id }).orderBy('created_at');
    expect(rows).to.have.length(2);
    for (const m of mails) {
      expect(m.to).to.deep.equal([user.email]);
      expect(m.subject).to.match(/api key/i);
      const stamp = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/.exec(m.text)?.[0];
      expect(stamp, m.text).to.be.a('string');
      expect(Date.parse(stamp!)).to.be.within(before - 1000, clock.nowMs() + 1000);
      expect(m.text).to.include(rows[0].created_ip as string);
      expect(m.text).to.match(/127\.0\.0\.1|::1/);
      for (const secret of [first, second, sha256Hex(first), sha256Hex(second), ...rows.map((r: { key_hash: string }) => r.key_hash)]) {
        expect(m.raw).to.not.include(secret);
        expect(m.text).to.not.include(secret);
      }
      expect(m.text).to.not.match(/rpk_/);
    }
  });

  it('a legacy 43-character key without prefix authenticates until rotated, then 401 INVALID_TOKEN', async () => {
    const { user } = await createUser();
    const legacy = await createLegacyKey(user.id);
    expect(legacy).to.match(/^[A-Za-z0-9_-]{43}$/);
    await expectKeyWorks(legacy, user.id);
    const view = await newAgent().get('/v1/auth/me/api-key').set(...bearer(legacy)).expect(200);
    expect(view.body.data.api_key).to.be.a('string').and.not.include(legacy);
    expect(view.body.data.last_used_at).to.be.a('string');

    const fresh = (await rotateByKey(legacy).expect(200)).body.data.api_key as string;
    expect(fresh.startsWith('rpk_')).to.equal(true);
    await expectKeyRefused(legacy);
    await expectKeyWorks(fresh, user.id);
  });
});
