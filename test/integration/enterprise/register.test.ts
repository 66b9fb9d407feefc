/**
 * Workspace registration and GET /me (enterprise spec 4.1): validation (entity types, NIB
 * and country rules, bot check), one transaction for workspace + owner + KYB draft, the
 * owned-workspace limit, TRY_AGAIN while another sign-up of the same user runs (a real
 * race), the per-user and per-IP hourly limits, keys refused, Cache-Control.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows, freshIp, proxiedApi } from '../../helpers/auth-signin-util.js';
import { FakeTurnstile, GOOD_TOKEN } from '../../helpers/turnstile.js';
import { createUser } from '../../factories/users.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, workspaceKey, type Cred } from '../../factories/enterprise.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';

const body = (over: Record<string, unknown> = {}) => ({
  legal_name: 'PT Maju Bersama',
  display_name: 'Maju',
  entity_type: 'pt',
  nib: '9120001234567',
  ...over,
});

describe('enterprise registration and /me', () => {
  const client = api();
  const post = (cred: Cred, b: Record<string, unknown>) => client.post('/v1/enterprise/register').set(headersOf(cred)).send(b);

  it('opens a sandbox workspace, the owner membership and KYB draft version 1 in one go', async () => {
    const { user } = await createUser();
    const s = await sessionOf(user);
    const res = await post(s, body());
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.headers['cache-control']).to.equal('private, no-store');
    const d = res.body.data;
    expect(d.account).to.include({ display_name: 'Maju', legal_name: 'PT Maju Bersama', country_code: 'ID', kyb_status: 'not_started', is_sandbox: true, risk_tier: 'standard' });
    expect(d.account.settings).to.have.keys('four_eyes_threshold', 'dispute_sla_hours', 'watchlist', 'account_manager');
    expect(d.membership.role).to.equal('owner');
    expect(d.kyb_application).to.include({ version: 1, status: 'draft', legal_name: 'PT Maju Bersama', entity_type: 'pt', nib: '9120001234567' });
    const member = await db('workspace_members').where({ id: d.membership.id }).first();
    expect(member).to.include({ user_id: user.id, status: 'active', workspace_id: d.account.id });
    const events = await db('workspace_events').where({ workspace_id: d.account.id });
    expect(events.map((e: { event: string; seq: string }) => [e.event, Number(e.seq)])).to.deep.equal([['workspace.created', 1]]);

    const me = await client.get('/v1/enterprise/me').set(headersOf(s));
    expect(me.status).to.equal(200);
    expect(me.headers['cache-control']).to.equal('private, no-store');
    expect(me.body.data.account.id).to.equal(d.account.id);
    expect(me.body.data.membership).to.include({ id: d.membership.id, role: 'owner' });
    expect(me.body.data.memberships).to.deep.equal([{ account_id: d.account.id, display_name: 'Maju', role: 'owner' }]);
    expect(me.body.data.invites).to.deep.equal([]);
  });

  it('/me without any workspace answers nulls and lists pending invites', async () => {
    const { user } = await createUser();
    const s = await sessionOf(user);
    const empty = await client.get('/v1/enterprise/me').set(headersOf(s));
    expect(empty.body.data).to.deep.equal({ account: null, membership: null, memberships: [], invites: [] });
    const { workspace, owner, ownerMember } = await createWorkspace(undefined, 'Invitee Co');
    await db('workspace_members').insert({
      workspace_id: workspace.id,
      user_id: user.id,
      role: 'finance',
      status: 'invited',
      invited_by: owner.id,
      created_at: clock.now(),
      updated_at: clock.now(),
    });
    void ownerMember;
    const me = await client.get('/v1/enterprise/me').set(headersOf(s));
    expect(me.body.data.account).to.equal(null);
    expect(me.body.data.invites).to.have.length(1);
    expect(me.body.data.invites[0]).to.include({ display_name: 'Invitee Co', role: 'finance', invited_by_name: owner.full_name });
    expect(me.body.data.invites[0].member_id).to.be.a('string');
  });

  describe('validation (400 INVALID_BODY with fieldErrors)', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['unknown entity type', { entity_type: 'llc' }, 'entity_type'],
      ['NIB of 12 digits', { nib: '912000123456' }, 'nib'],
      ['NIB with letters for an Indonesian entity', { nib: '91200012345AB' }, 'nib'],
      ['Indonesian entity abroad', { country_code: 'SG' }, 'country_code'],
      ['foreign entity in Indonesia', { entity_type: 'foreign', nib: 'SG-2019-0001', country_code: 'ID' }, 'country_code'],
      ['foreign entity without a country', { entity_type: 'foreign', nib: 'SG-2019-0001' }, 'country_code'],
      ['foreign registration number of 2 chars', { entity_type: 'foreign', nib: 'AB', country_code: 'SG' }, 'nib'],
      ['foreign registration number of 41 chars', { entity_type: 'foreign', nib: 'A'.repeat(41), country_code: 'SG' }, 'nib'],
      ['legal name of 1 char', { legal_name: 'P' }, 'legal_name'],
      ['display name of 121 chars', { display_name: 'x'.repeat(121) }, 'display_name'],
      ['missing NIB', { nib: undefined }, 'nib'],
    ];
    for (const [name, over, field] of cases) {
      it(name, async () => {
        const { user } = await createUser();
        const res = await post(await sessionOf(user), body(over));
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.error.code).to.equal('INVALID_BODY');
        expect(res.body.error.details.fieldErrors).to.have.property(field);
        expect(await countRows('workspaces')).to.equal(0);
      });
    }

    it('accepts every entity type with its own rules; country defaults to ID', async () => {
      for (const t of ['pt', 'pt_perorangan', 'cv', 'firma', 'koperasi', 'ud']) {
        const res = await post(await sessionOf((await createUser()).user), body({ entity_type: t }));
        expect(res.status, t).to.equal(201);
        expect(res.body.data.account.country_code).to.equal('ID');
      }
      const s = await sessionOf((await createUser()).user);
      const f = await post(s, body({ entity_type: 'foreign', nib: 'UEN 201912345K', country_code: 'sg' }));
      expect(f.status, JSON.stringify(f.body)).to.equal(201);
      expect(f.body.data.account.country_code).to.equal('SG');
    });

    it('a foreign registration number is any 3 to 40 printable characters (spec 4.1 sets only the length)', async () => {
      for (const nib of ['No_12345', 'C-123(2)', 'HRB 12345 B', 'Reg#2019/07', 'ÄB-1234']) {
        const s = await sessionOf((await createUser()).user);
        const res = await post(s, body({ entity_type: 'foreign', nib, country_code: 'DE' }));
        expect(res.status, `${nib}: ${JSON.stringify(res.body)}`).to.equal(201);
        expect(res.body.data.kyb_application.nib).to.equal(nib);
      }
      const s = await sessionOf((await createUser()).user);
      const bad = await post(s, body({ entity_type: 'foreign', nib: 'AB\u0000123', country_code: 'DE' }));
      expect(bad.status).to.equal(400);
      expect(bad.body.error.details.fieldErrors).to.have.property('nib');
    });
  });

  describe('bot check', () => {
    const turnstile = new FakeTurnstile();
    beforeEach(() => turnstile.start());
    afterEach(() => turnstile.stop());

    it('requires the token, refuses a bad one with 403 TURNSTILE_FAILED, accepts a good one', async () => {
      const { user } = await createUser();
      const s = await sessionOf(user);
      const missing = await post(s, body());
      expect(missing.status).to.equal(400);
      expect(missing.body.error.details.fieldErrors).to.have.property('turnstile_token');
      const bad = await post(s, body({ turnstile_token: 'nope' }));
      expect(bad.status).to.equal(403);
      expect(bad.body.error.code).to.equal('TURNSTILE_FAILED');
      expect(await countRows('workspaces')).to.equal(0);
      const good = await post(s, body({ turnstile_token: GOOD_TOKEN }));
      expect(good.status).to.equal(201);
    });
  });

  it('API keys of both kinds get 403 KEY_NOT_ALLOWED on register and /me', async () => {
    const { workspace, owner, ownerMember } = await createWorkspace();
    const personal = await personalKeyOf(owner);
    const wk = await workspaceKey(workspace.id, { member: ownerMember, user: owner }, ['read', 'write']);
    for (const cred of [personal, { kind: 'workspace_key', key: wk.key } as Cred]) {
      const r = await post(cred, body());
      expect(r.status).to.equal(403);
      expect(r.body.error.code).to.equal('KEY_NOT_ALLOWED');
      expect(r.headers['cache-control']).to.equal('private, no-store');
      const m = await client.get('/v1/enterprise/me').set(headersOf(cred));
      expect(m.body.error.code).to.equal('KEY_NOT_ALLOWED');
    }
    expect(await countRows('workspaces')).to.equal(1);
  });

  it('no credentials: 401 UNAUTHORIZED with Cache-Control', async () => {
    const r = await client.post('/v1/enterprise/register').send(body());
    expect(r.status).to.equal(401);
    expect(r.body.error.code).to.equal('UNAUTHORIZED');
    expect(r.headers['cache-control']).to.equal('private, no-store');
  });

  it('409 WORKSPACE_LIMIT at 3 owned workspaces (membership as non-owner does not count)', async () => {
    const { user } = await createUser();
    const s = await sessionOf(user);
    const other = await createWorkspace();
    await addMember(other.workspace.id, 'admin', user);
    for (let i = 0; i < 3; i += 1) expect((await post(s, body())).status).to.equal(201);
    const res = await post(s, body());
    expect(res.status).to.equal(409);
    expect(res.body.error.code).to.equal('WORKSPACE_LIMIT');
    expect(await countRows('workspaces')).to.equal(4);
  });

  it('the limit is an operator setting', async () => {
    await db('settings').insert({ key: 'enterprise_max_owned_workspaces', value: JSON.stringify(1), updated_at: clock.now() });
    const { user } = await createUser();
    const s = await sessionOf(user);
    expect((await post(s, body())).status).to.equal(201);
    expect((await post(s, body())).body.error.code).to.equal('WORKSPACE_LIMIT');
  });

  it('409 TRY_AGAIN while another sign-up of the same user runs (lock held)', async () => {
    const { user } = await createUser();
    const s = await sessionOf(user);
    const trx = await db.transaction();
    try {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`enterprise-register:${user.id}`]);
      const res = await post(s, body());
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('TRY_AGAIN');
    } finally {
      await trx.rollback();
    }
    expect(await countRows('workspaces')).to.equal(0);
    expect((await post(s, body())).status).to.equal(201);
  });

  it('parallel sign-ups of one user never pass the limit: one wins, the rest TRY_AGAIN or WORKSPACE_LIMIT', async () => {
    const { user } = await createUser();
    const s = await sessionOf(user);
    expect((await post(s, body())).status).to.equal(201);
    expect((await post(s, body())).status).to.equal(201);
    const results = await Promise.all([0, 1, 2].map(() => post(s, body())));
    const codes = results.map((r) => (r.status === 201 ? 'created' : (r.body.error.code as string)));
    expect(codes.filter((c) => c === 'created')).to.have.length.at.most(1);
    for (const c of codes) expect(['created', 'TRY_AGAIN', 'WORKSPACE_LIMIT']).to.include(c);
    const owned = await db('workspace_members').where({ user_id: user.id, role: 'owner' }).count<{ count: string }[]>('* as count');
    expect(Number(owned[0]!.count)).to.be.at.most(3);
    expect(Number(owned[0]!.count)).to.equal(2 + codes.filter((c) => c === 'created').length);
    // Workspace, membership and KYB draft were made together or not at all.
    expect(await countRows('kyb_applications')).to.equal(await countRows('workspaces'));
  });

  it('5 sign-ups per hour per user (invalid ones count), then 429 RATE_LIMITED with Retry-After', async () => {
    const { user } = await createUser();
    const s = await sessionOf(user);
    for (let i = 0; i < 5; i += 1) expect((await post(s, body({ nib: 'x' }))).status).to.equal(400);
    const res = await post(s, body());
    expect(res.status).to.equal(429);
    expect(res.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(res.headers['retry-after'])).to.be.greaterThan(60);
  });

  it('10 sign-ups per hour per address across users', async () => {
    const proxied = proxiedApi();
    const ip = freshIp();
    const send = async () => {
      const { user } = await createUser();
      return proxied.post('/v1/enterprise/register').set(headersOf(await sessionOf(user))).set('X-Forwarded-For', ip).send(body({ nib: 'x' }));
    };
    for (let i = 0; i < 10; i += 1) expect((await send()).status).to.equal(400);
    const res = await send();
    expect(res.status).to.equal(429);
    const other = await createUser();
    const elsewhere = await proxied.post('/v1/enterprise/register').set(headersOf(await sessionOf(other.user))).set('X-Forwarded-For', freshIp()).send(body());
    expect(elsewhere.status).to.equal(201);
  });
});
