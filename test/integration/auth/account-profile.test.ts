import { expect } from 'chai';
import type { Response } from 'supertest';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { createUser, signIn } from '../../factories/users.js';
import { bearer, newAgent } from '../../helpers/auth-account-support.js';

describe('accounts: profile (PATCH /v1/auth/me)', () => {
  /** A user with a personal key (from the rotate endpoint) and a signed-in session. */
  async function setup(options: Parameters<typeof createUser>[0] = {}) {
    const { user, password } = await createUser(options);
    const agent = newAgent();
    const csrf = await signIn(agent, user.email, password);
    const rotated = await agent.post('/v1/auth/me/api-key/rotate').set('X-CSRF-Token', csrf).send({}).expect(200);
    const key = rotated.body.data.api_key as string;
    const patchByKey = (body: unknown) => newAgent().patch('/v1/auth/me').set(...bearer(key)).send(body as object);
    const patchBySession = (body: unknown) => agent.patch('/v1/auth/me').set('X-CSRF-Token', csrf).send(body as object);
    return { user, password, agent, csrf, key, patchByKey, patchBySession };
  }

  function expectInvalidBody(res: Response, field?: string): void {
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error.code).to.equal('INVALID_BODY');
    expect(res.body.error.details).to.have.keys('formErrors', 'fieldErrors');
    if (field) expect(res.body.error.details.fieldErrors).to.have.property(field);
  }

  it('changes full_name (API key) and the change is stored and shown by GET /v1/auth/me', async () => {
    const { user, agent, patchByKey } = await setup();
    const res = await patchByKey({ full_name: '  Budi Santoso ' }).expect(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.data.user).to.include({ id: user.id, full_name: 'Budi Santoso' });
    const me = await agent.get('/v1/auth/me').expect(200);
    expect(me.body.data.user.full_name).to.equal('Budi Santoso');
    expect((await db('users').where({ id: user.id }).first()).full_name).to.equal('Budi Santoso');
  });

  it('changes username (session + CSRF), stored lower-case', async () => {
    const { user, patchBySession } = await setup();
    const res = await patchBySession({ username: 'New.Handle_9' }).expect(200);
    expect(res.body.data.user.username).to.equal('new.handle_9');
    expect((await db('users').where({ id: user.id }).first()).username).to.equal('new.handle_9');
    // Keeping one's own name (in another case) is not a conflict.
    await patchBySession({ username: 'NEW.HANDLE_9' }).expect(200);
  });

  it('changes phone and clears it with null', async () => {
    const { user, patchByKey } = await setup();
    const set = await patchByKey({ phone: '+62 812-3456-7890' }).expect(200);
    expect(set.body.data.user.phone).to.equal('+62 812-3456-7890');
    expectInvalidBody(await patchByKey({ phone: 'call me maybe' }), 'phone');
    expect((await db('users').where({ id: user.id }).first()).phone).to.equal('+62 812-3456-7890');
    const cleared = await patchByKey({ phone: null }).expect(200);
    expect(cleared.body.data.user.phone).to.equal(null);
  });

  it('changes the three social handles and clears them with empty strings', async () => {
    const { patchByKey } = await setup();
    const set = await patchByKey({ social_instagram: 'toko.budi', social_shopee: 'budi-shop', social_tiktokshop: 'budi_tt' }).expect(200);
    expect(set.body.data.user).to.include({ social_instagram: 'toko.budi', social_shopee: 'budi-shop', social_tiktokshop: 'budi_tt' });
    const cleared = await patchByKey({ social_instagram: '', social_shopee: null }).expect(200);
    expect(cleared.body.data.user).to.include({ social_instagram: null, social_shopee: null, social_tiktokshop: 'budi_tt' });
  });

  it('switches two_factor_method to email (sign-in then asks for a code) and back to none', async () => {
    const { user, password, patchByKey } = await setup();
    const on = await patchByKey({ two_factor_method: 'email' }).expect(200);
    expect(on.body.data.user.two_factor_method).to.equal('email');
    const login = await newAgent().post('/v1/auth/login').send({ email: user.email, password }).expect(200);
    expect(login.body.data).to.include({ requires_2fa: true, method: 'email' });

    const off = await patchByKey({ two_factor_method: 'none', current_password: password }).expect(200);
    expect(off.body.data.user.two_factor_method).to.equal('none');
    const again = await newAgent().post('/v1/auth/login').send({ email: user.email, password }).expect(200);
    expect(again.body.data.user.id).to.equal(user.id);
  });

  it('answers 400 INVALID_BODY for an unknown two_factor_method', async () => {
    const { user, patchByKey } = await setup();
    for (const method of ['sms', 'totp', '', null]) {
      expectInvalidBody(await patchByKey({ two_factor_method: method }), 'two_factor_method');
    }
    expect((await db('users').where({ id: user.id }).first()).two_factor_method).to.equal('none');
  });

  it('dashboard_tour_completed true sets a timestamp and false clears it', async () => {
    const { patchBySession } = await setup();
    const before = clock.nowMs();
    const done = await patchBySession({ dashboard_tour_completed: true }).expect(200);
    const at = done.body.data.user.dashboard_tour_completed_at as string;
    expect(at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(at)).to.be.within(before - 1000, clock.nowMs() + 1000);
    const undone = await patchBySession({ dashboard_tour_completed: false }).expect(200);
    expect(undone.body.data.user.dashboard_tour_completed_at).to.equal(null);
  });

  it('answers 400 INVALID_USERNAME for a bad username and keeps the old one', async () => {
    const { user, patchByKey } = await setup();
    for (const username of ['ab', 'no spaces', 'x'.repeat(31), 'dash-ed']) {
      const res = await patchByKey({ username });
      expect(res.status, username).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_USERNAME');
    }
    expect((await db('users').where({ id: user.id }).first()).username).to.equal(user.username);
  });

  it('answers 409 USERNAME_TAKEN for another account’s username in any case', async () => {
    await createUser({ username: 'already_here' });
    const { user, patchByKey } = await setup();
    const res = await patchByKey({ username: 'Already_Here' }).expect(409);
    expect(res.body.error.code).to.equal('USERNAME_TAKEN');
    expect((await db('users').where({ id: user.id }).first()).username).to.equal(user.username);
  });

  it('answers 400 INVALID_BODY for an empty body, an unknown field and a JSON array', async () => {
    const { user, patchByKey, patchBySession } = await setup();
    const empty = await patchByKey({});
    expectInvalidBody(empty);
    expect(empty.body.error.details.formErrors).to.have.length.greaterThan(0);
    expectInvalidBody(await patchBySession({}));
    expectInvalidBody(await patchByKey({ full_name: 'Fine', role: 'admin' }), 'role');
    expectInvalidBody(await patchByKey({ email: 'other@example.com' }), 'email');
    expectInvalidBody(await patchByKey([{ full_name: 'Array' }]));
    const row = await db('users').where({ id: user.id }).first();
    expect(row).to.include({ role: 'user', email: user.email, full_name: user.full_name });
  });

  it('needs credentials and, with a session, the CSRF header', async () => {
    const { agent } = await setup();
    const anon = await newAgent().patch('/v1/auth/me').send({ full_name: 'X' }).expect(401);
    expect(anon.body.error.code).to.equal('UNAUTHORIZED');
    const noCsrf = await agent.patch('/v1/auth/me').send({ full_name: 'X' }).expect(403);
    expect(noCsrf.body.error.code).to.equal('CSRF_FAILED');
    const wrongCsrf = await agent.patch('/v1/auth/me').set('X-CSRF-Token', 'not-the-token').send({ full_name: 'X' }).expect(403);
    expect(wrongCsrf.body.error.code).to.equal('CSRF_FAILED');
  });
});
