import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { db, pgErrorCode } from '../../../shared/db.js';
import { createUser, signIn } from '../../factories/users.js';
import { bearer, newAgent } from '../../helpers/auth-account-support.js';

function expectError(res: Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
}

/** An admin signed in through the API, plus the admin's personal key. */
async function adminSetup() {
  const { user: admin, password } = await createUser({ role: 'admin' });
  const agent = newAgent();
  const csrf = await signIn(agent, admin.email, password);
  const key = (await agent.post('/v1/auth/me/api-key/rotate').set('X-CSRF-Token', csrf).send({}).expect(200)).body.data
    .api_key as string;
  const post = (path: string, body: object = {}) => agent.post(path).set('X-CSRF-Token', csrf).send(body);
  return { admin, agent, csrf, key, post };
}

/** A normal user with a session and a key. */
async function userSetup() {
  const { user, password } = await createUser();
  const agent = newAgent();
  const csrf = await signIn(agent, user.email, password);
  const key = (await agent.post('/v1/auth/me/api-key/rotate').set('X-CSRF-Token', csrf).send({}).expect(200)).body.data
    .api_key as string;
  return { user, password, agent, csrf, key };
}

describe('accounts: staff suspend and reactivate (/v1/admin/users/:id)', () => {
  it('suspends a user: the answer shows is_suspended; the user’s session, key and sign-in get 403 SUSPENDED', async () => {
    const staff = await adminSetup();
    const target = await userSetup();

    const res = await staff.post(`/v1/admin/users/${target.user.id}/suspend`, { note: 'chargeback investigation' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.data.user).to.include({ id: target.user.id, is_suspended: true, email: target.user.email });
    expect((await db('users').where({ id: target.user.id }).first()).status).to.equal('suspended');
    // Suspension ends the account's sessions; the holder of one still hears 403 SUSPENDED.
    expect(await db('sessions').where({ user_id: target.user.id }).whereNull('revoked_at').count({ n: '*' }).first()).to.deep.equal({ n: 0 });

    expectError(await target.agent.get('/v1/auth/me/api-key'), 403, 'SUSPENDED');
    expectError(await target.agent.get('/v1/auth/me'), 403, 'SUSPENDED');
    expectError(await target.agent.patch('/v1/auth/me').set('X-CSRF-Token', target.csrf).send({ full_name: 'X' }), 403, 'SUSPENDED');
    expectError(await newAgent().get('/v1/auth/me/api-key').set(...bearer(target.key)), 403, 'SUSPENDED');
    expectError(
      await newAgent().post('/v1/auth/me/api-key/rotate').set(...bearer(target.key)).send({}),
      403,
      'SUSPENDED',
    );
    expectError(await newAgent().post('/v1/auth/login').send({ email: target.user.email, password: target.password }), 403, 'SUSPENDED');
    // A wrong password still answers like any wrong password (nothing about the account leaks).
    expectError(await newAgent().post('/v1/auth/login').send({ email: target.user.email, password: 'Wrong1Password' }), 401, 'INVALID_CREDENTIALS');
  });

  it('reactivate restores the account: the key and sign-in work again; sessions ended by the suspension stay ended', async () => {
    const staff = await adminSetup();
    const target = await userSetup();
    await staff.post(`/v1/admin/users/${target.user.id}/suspend`, { note: 'check' }).expect(200);

    const res = await staff.post(`/v1/admin/users/${target.user.id}/reactivate`, { note: 'cleared' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.user).to.include({ id: target.user.id, is_suspended: false });
    expect((await db('users').where({ id: target.user.id }).first()).status).to.equal('active');

    await newAgent().get('/v1/auth/me/api-key').set(...bearer(target.key)).expect(200);
    const fresh = newAgent();
    const login = await fresh.post('/v1/auth/login').send({ email: target.user.email, password: target.password });
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    await fresh.get('/v1/auth/me/api-key').expect(200);
    // The sessions the suspension ended stay ended.
    expectError(await target.agent.get('/v1/auth/me/api-key'), 401, 'SESSION_EXPIRED');
  });

  it('an admin’s personal key (Bearer) may act too', async () => {
    const staff = await adminSetup();
    const { user } = await createUser();
    const res = await newAgent().post(`/v1/admin/users/${user.id}/suspend`).set(...bearer(staff.key)).send({ note: 'by key' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.user.is_suspended).to.equal(true);
    await newAgent().post(`/v1/admin/users/${user.id}/reactivate`).set(...bearer(staff.key)).send({}).expect(200);
  });

  it('suspending twice answers 409 INVALID_STATE; reactivating an active account too', async () => {
    const staff = await adminSetup();
    const { user } = await createUser();
    expectError(await staff.post(`/v1/admin/users/${user.id}/reactivate`), 409, 'INVALID_STATE');
    await staff.post(`/v1/admin/users/${user.id}/suspend`).expect(200);
    expectError(await staff.post(`/v1/admin/users/${user.id}/suspend`), 409, 'INVALID_STATE');
    // only the one real move is audited
    const rows = await db('staff_audit').where({ target_id: user.id });
    expect(rows.map((r: { action: string }) => r.action)).to.deep.equal(['user.suspend']);
  });

  it('two concurrent suspends: one 200, one 409 INVALID_STATE, one audit row', async () => {
    const staff = await adminSetup();
    const { user } = await createUser();
    const answers = await Promise.all([
      staff.post(`/v1/admin/users/${user.id}/suspend`, { note: 'a' }),
      newAgent().post(`/v1/admin/users/${user.id}/suspend`).set(...bearer(staff.key)).send({ note: 'b' }),
    ]);
    const summary = answers.map((r) => `${r.status} ${r.body.error?.code ?? ''}`.trim()).sort();
    expect(summary).to.deep.equal(['200', '409 INVALID_STATE']);
    expect(await db('staff_audit').where({ target_id: user.id }).count({ n: '*' }).first()).to.deep.equal({ n: 1 });
  });

  it('an unknown user answers 404 USER_NOT_FOUND', async () => {
    const staff = await adminSetup();
    expectError(await staff.post(`/v1/admin/users/${randomUUID()}/suspend`), 404, 'USER_NOT_FOUND');
    expectError(await staff.post(`/v1/admin/users/${randomUUID()}/reactivate`), 404, 'USER_NOT_FOUND');
    const notUuid = await staff.post('/v1/admin/users/not-a-uuid/suspend');
    expect(notUuid.status).to.equal(404);
    expect(await db('staff_audit').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
  });

  it('a normal user gets 403 FORBIDDEN (session or key); no credentials get 401', async () => {
    const caller = await userSetup();
    const { user: victim } = await createUser();
    expectError(
      await caller.agent.post(`/v1/admin/users/${victim.id}/suspend`).set('X-CSRF-Token', caller.csrf).send({}),
      403,
      'FORBIDDEN',
    );
    expectError(await newAgent().post(`/v1/admin/users/${victim.id}/suspend`).set(...bearer(caller.key)).send({}), 403, 'FORBIDDEN');
    expectError(await newAgent().post(`/v1/admin/users/${victim.id}/suspend`).send({}), 401, 'UNAUTHORIZED');
    expectError(await newAgent().post(`/v1/admin/users/${victim.id}/suspend`).set(...bearer(`rpk_${'Z'.repeat(43)}`)).send({}), 401, 'INVALID_TOKEN');
    expect((await db('users').where({ id: victim.id }).first()).status).to.equal('active');
    expect(await db('staff_audit').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
  });

  it('an admin session without the CSRF header gets 403 CSRF_FAILED', async () => {
    const staff = await adminSetup();
    const { user } = await createUser();
    expectError(await staff.agent.post(`/v1/admin/users/${user.id}/suspend`).send({}), 403, 'CSRF_FAILED');
    expect((await db('users').where({ id: user.id }).first()).status).to.equal('active');
  });

  it('an admin suspending their own account gets 400 INVALID_ACTION', async () => {
    const staff = await adminSetup();
    expectError(await staff.post(`/v1/admin/users/${staff.admin.id}/suspend`, { note: 'oops' }), 400, 'INVALID_ACTION');
    expect((await db('users').where({ id: staff.admin.id }).first()).status).to.equal('active');
    await staff.agent.get('/v1/auth/me').expect(200);
  });

  it('a note longer than 2000 characters or an unknown field answers 400 INVALID_BODY', async () => {
    const staff = await adminSetup();
    const { user } = await createUser();
    expectError(await staff.post(`/v1/admin/users/${user.id}/suspend`, { note: 'n'.repeat(2001) }), 400, 'INVALID_BODY');
    expectError(await staff.post(`/v1/admin/users/${user.id}/suspend`, { reason: 'x' }), 400, 'INVALID_BODY');
    expect((await db('users').where({ id: user.id }).first()).status).to.equal('active');
    await staff.post(`/v1/admin/users/${user.id}/suspend`, { note: 'n'.repeat(2000) }).expect(200);
  });

  it('every action writes a staff_audit row with actor, action, target and note', async () => {
    const staff = await adminSetup();
    const { user } = await createUser();
    await staff.post(`/v1/admin/users/${user.id}/suspend`, { note: 'fraud report #42' }).expect(200);
    await newAgent().post(`/v1/admin/users/${user.id}/reactivate`).set(...bearer(staff.key)).send({ note: 'resolved' }).expect(200);
    await staff.post(`/v1/admin/users/${user.id}/suspend`).expect(200);
    const rows = await db('staff_audit').orderBy('id');
    expect(rows.map((r: Record<string, unknown>) => ({ actor_id: r.actor_id, action: r.action, target_type: r.target_type, target_id: r.target_id, note: r.note }))).to.deep.equal([
      { actor_id: staff.admin.id, action: 'user.suspend', target_type: 'user', target_id: user.id, note: 'fraud report #42' },
      { actor_id: staff.admin.id, action: 'user.reactivate', target_type: 'user', target_id: user.id, note: 'resolved' },
      { actor_id: staff.admin.id, action: 'user.suspend', target_type: 'user', target_id: user.id, note: null },
    ]);
    for (const r of rows) expect(r.created_at).to.be.instanceOf(Date);
  });

  it('staff_audit is append-only: UPDATE and DELETE are refused by the database', async () => {
    const staff = await adminSetup();
    const { user } = await createUser();
    await staff.post(`/v1/admin/users/${user.id}/suspend`, { note: 'original' }).expect(200);

    let updateError: unknown;
    try {
      await db('staff_audit').where({ target_id: user.id }).update({ note: 'rewritten' });
    } catch (err) {
      updateError = err;
    }
    expect(updateError, 'UPDATE staff_audit must fail').to.be.instanceOf(Error);
    expect(pgErrorCode(updateError)).to.equal('42501');

    let deleteError: unknown;
    try {
      await db('staff_audit').where({ target_id: user.id }).del();
    } catch (err) {
      deleteError = err;
    }
    expect(deleteError, 'DELETE FROM staff_audit must fail').to.be.instanceOf(Error);
    expect(pgErrorCode(deleteError)).to.equal('42501');

    const rows = await db('staff_audit').where({ target_id: user.id });
    expect(rows.map((r: { note: string }) => r.note)).to.deep.equal(['original']);
  });
});

describe('accounts: queue dashboard access (/admin/queues)', () => {
  it('no session answers 401', async () => {
    const res = await newAgent().get('/admin/queues');
    expect(res.status).to.equal(401);
    expect(res.body.error.code).to.equal('UNAUTHORIZED');
  });

  it('a normal user’s session answers 403 FORBIDDEN', async () => {
    const { agent } = await userSetup();
    const res = await agent.get('/admin/queues');
    expect(res.status).to.equal(403);
    expect(res.body.error.code).to.equal('FORBIDDEN');
  });

  it('an admin session answers 200 HTML', async () => {
    const { agent } = await adminSetup();
    const res = await agent.get('/admin/queues');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^text\/html/);
    expect(res.text).to.match(/<html/i);
  });

  it('an admin’s personal key (Bearer) answers 401: the dashboard takes a session only', async () => {
    const { key } = await adminSetup();
    const res = await newAgent().get('/admin/queues').set(...bearer(key));
    expect(res.status).to.equal(401);
    expect(res.body.error.code).to.equal('UNAUTHORIZED');
    const api = await newAgent().get('/admin/queues/api/queues').set(...bearer(key));
    expect(api.status).to.equal(401);
  });

  it('a suspended admin’s session is refused (403 SUSPENDED)', async () => {
    const { admin, agent } = await adminSetup();
    await db('users').where({ id: admin.id }).update({ status: 'suspended' });
    const res = await agent.get('/admin/queues');
    expect(res.status).to.equal(403);
    expect(res.body.error.code).to.equal('SUSPENDED');
  });
});
