/**
 * Workspace API keys (enterprise spec 4.10, section 5 rule 3): lifecycle, scopes, the
 * creator's role, the creator leaving, revoke with Idempotency-Key and its event, the
 * 10-key limit (also under parallel creation), last use at most once a minute, keys
 * refused on the key routes, the workspace header with a key.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows } from '../../helpers/auth-signin-util.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, workspaceKey, type Cred } from '../../factories/enterprise.js';
import { clock } from '../../../shared/clock.js';
import { sha256Hex } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';

const wk = (key: string): Cred => ({ kind: 'workspace_key', key });

describe('enterprise workspace API keys', () => {
  const client = api();

  async function setup() {
    const ws = await createWorkspace();
    const admin = await addMember(ws.workspace.id, 'admin');
    const session = await sessionOf(admin.user);
    return { ...ws, admin, session };
  }

  it('creates a key shown once, stores only its SHA-256 hash, lists it without the plaintext', async () => {
    const { workspace, admin, session } = await setup();
    const res = await client.post('/v1/enterprise/api-keys').set(headersOf(session)).send({ label: 'ERP sync', scopes: ['read'] });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const k = res.body.data;
    expect(k.key).to.match(/^rpe_[A-Za-z0-9_-]{43}$/);
    expect(k).to.include({ label: 'ERP sync', status: 'active', last_used_at: null });
    expect(k.scopes).to.deep.equal(['read']);
    expect(k.created_by).to.deep.equal({ id: admin.user.id, name: admin.user.full_name });
    expect((k.key as string).startsWith(k.key_preview as string)).to.equal(true);
    expect(k.key_preview).to.have.length(12);
    const row = await db('workspace_api_keys').where({ id: k.id }).first();
    expect(row.key_hash).to.equal(sha256Hex(k.key as string));
    expect(JSON.stringify(row)).to.not.include((k.key as string).slice(4));
    const list = await client.get('/v1/enterprise/api-keys').set(headersOf(session));
    expect(list.status).to.equal(200);
    expect(list.body.data.limit).to.equal(10);
    expect(list.body.data.items).to.have.length(1);
    expect(list.body.data.items[0]).to.not.have.property('key');
    expect(list.body.data.items[0].id).to.equal(k.id);
    const events = await db('workspace_events').where({ workspace_id: workspace.id, event: 'api_key.created' });
    expect(events).to.have.length(1);
  });

  it('validates label and scopes (400 INVALID_BODY with fieldErrors)', async () => {
    const { session } = await setup();
    for (const bad of [{ label: 'x', scopes: ['read'] }, { label: 'ok label', scopes: ['write'] }, { label: 'ok label', scopes: [] }, { label: 'ok label' }]) {
      const res = await client.post('/v1/enterprise/api-keys').set(headersOf(session)).send(bad);
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_BODY');
      expect(Object.keys(res.body.error.details.fieldErrors as object)).to.have.length.greaterThan(0);
    }
  });

  it('a read key reads as a viewer and gets 403 SCOPE_REQUIRED on any write', async () => {
    const { workspace, admin } = await setup();
    const { key } = await workspaceKey(workspace.id, admin, ['read']);
    expect((await client.get('/v1/enterprise/members').set(headersOf(wk(key)))).status).to.equal(200);
    expect((await client.get('/v1/enterprise/settings').set(headersOf(wk(key)))).status).to.equal(200);
    const w = await client.post('/v1/enterprise/counterparties').set(headersOf(wk(key))).send({ name: 'Supplier' });
    expect(w.status).to.equal(403);
    expect(w.body.error.code).to.equal('SCOPE_REQUIRED');
    expect(await countRows('counterparties')).to.equal(0);
  });

  it("a read+write key acts with its creator's current role", async () => {
    const { workspace } = await setup();
    const fin = await addMember(workspace.id, 'admin');
    const { key } = await workspaceKey(workspace.id, fin, ['read', 'write']);
    const ok = await client.post('/v1/enterprise/counterparties').set(headersOf(wk(key))).send({ name: 'Supplier A' });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
    await db('workspace_members').where({ id: fin.member.id }).update({ role: 'viewer' });
    const refused = await client.post('/v1/enterprise/counterparties').set(headersOf(wk(key))).send({ name: 'Supplier B' });
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('FORBIDDEN');
    // Dashboard-only routes stay closed to keys whatever the role.
    const settings = await client.patch('/v1/enterprise/settings').set(headersOf(wk(key))).send({ dispute_sla_hours: 10 });
    expect(settings.body.error.code).to.equal('KEY_NOT_ALLOWED');
  });

  it('removing the creator revokes their keys (api_key.revoked) and the key answers 401 INVALID_TOKEN', async () => {
    const { workspace, session } = await setup();
    const leaver = await addMember(workspace.id, 'admin');
    const { id, key } = await workspaceKey(workspace.id, leaver, ['read', 'write']);
    expect((await client.get('/v1/enterprise/members').set(headersOf(wk(key)))).status).to.equal(200);
    const del = await client.delete(`/v1/enterprise/members/${leaver.member.id}`).set(headersOf(session));
    expect(del.status, JSON.stringify(del.body)).to.equal(200);
    const after = await client.get('/v1/enterprise/members').set(headersOf(wk(key)));
    expect(after.status).to.equal(401);
    expect(after.body.error.code).to.equal('INVALID_TOKEN');
    const revoked = await db('workspace_events').where({ workspace_id: workspace.id, event: 'api_key.revoked', entity_id: id });
    expect(revoked).to.have.length(1);
    expect((await db('workspace_api_keys').where({ id }).first()).revoked_at).to.not.equal(null);
  });

  it('a creator who is no longer active makes the key inactive (401): left out of the list, counted in inactive_count, keeping its slot until revoked', async () => {
    const { workspace, admin, owner: ownerUser, ownerMember } = await setup();
    const { id, key } = await workspaceKey(workspace.id, admin, ['read']);
    await db('workspace_members').where({ id: admin.member.id }).update({ status: 'suspended' });
    const res = await client.get('/v1/enterprise/settings').set(headersOf(wk(key)));
    expect(res.status).to.equal(401);
    expect(res.body.error.code).to.equal('INVALID_TOKEN');
    const owner = await sessionOf(ownerUser);
    const active = await workspaceKey(workspace.id, { member: ownerMember, user: ownerUser }, ['read']);
    // 4.10 "List: active keys newest first": the inactive key is left out, counted as holding a slot.
    const list = await client.get('/v1/enterprise/api-keys').set(headersOf(owner));
    expect(list.status).to.equal(200);
    expect((list.body.data.items as { id: string; status: string }[]).map((k) => [k.id, k.status])).to.deep.equal([[active.id, 'active']]);
    expect(list.body.data).to.include({ limit: 10, inactive_count: 1 });
    expect(await countRows('workspace_api_keys', { workspace_id: workspace.id, revoked_at: null })).to.equal(2);
    // It can still be revoked by id (freeing its slot); a revoked key is neither listed nor counted.
    expect((await client.delete(`/v1/enterprise/api-keys/${id}`).set(headersOf(owner))).status).to.equal(200);
    const after = await client.get('/v1/enterprise/api-keys').set(headersOf(owner));
    expect(after.body.data.items).to.have.length(1);
    expect(after.body.data.inactive_count).to.equal(0);
  });

  it('the list shows active keys only: revoked and inactive keys are left out, an inactive key listed again once its creator is active', async () => {
    const { workspace, admin, owner: ownerUser } = await setup();
    const owner = await sessionOf(ownerUser);
    const a = await workspaceKey(workspace.id, admin, ['read']);
    const b = await workspaceKey(workspace.id, admin, ['read', 'write']);
    expect((await client.delete(`/v1/enterprise/api-keys/${a.id}`).set(headersOf(owner))).status).to.equal(200);
    const ids = async () => ((await client.get('/v1/enterprise/api-keys').set(headersOf(owner))).body.data.items as { id: string }[]).map((k) => k.id);
    expect(await ids()).to.deep.equal([b.id]);
    await db('workspace_members').where({ id: admin.member.id }).update({ status: 'suspended' });
    expect(await ids()).to.deep.equal([]);
    await db('workspace_members').where({ id: admin.member.id }).update({ status: 'active' });
    expect(await ids()).to.deep.equal([b.id]);
  });

  it("a suspended or closed creator's account refuses the key (403 SUSPENDED / ACCOUNT_INACTIVE, the key's wording)", async () => {
    const { workspace, admin } = await setup();
    const { key } = await workspaceKey(workspace.id, admin, ['read']);
    await db('users').where({ id: admin.user.id }).update({ status: 'suspended' });
    const suspended = await client.get('/v1/enterprise/settings').set(headersOf(wk(key)));
    expect([suspended.status, suspended.body.error.code, suspended.body.error.message]).to.deep.equal([
      403,
      'SUSPENDED',
      'The account behind this key is suspended; contact support',
    ]);
    expect(suspended.headers['cache-control']).to.equal('private, no-store');
    await db('users').where({ id: admin.user.id }).update({ status: 'closed' });
    const closed = await client.get('/v1/enterprise/settings').set(headersOf(wk(key)));
    expect([closed.status, closed.body.error.code, closed.body.error.message]).to.deep.equal([
      403,
      'ACCOUNT_INACTIVE',
      'The account behind this key is closed or being deleted',
    ]);
  });

  it('revoke: Idempotency-Key replays, the key stops at once, one api_key.revoked event, unknown key 404', async () => {
    const { workspace, admin, session } = await setup();
    const { id, key } = await workspaceKey(workspace.id, admin, ['read']);
    const idem = 'b3f1c1d2-1111-4aaa-8bbb-123456789abc';
    const first = await client.delete(`/v1/enterprise/api-keys/${id}`).set(headersOf(session)).set('Idempotency-Key', idem);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.data).to.deep.equal({ id, revoked: true });
    const again = await client.delete(`/v1/enterprise/api-keys/${id}`).set(headersOf(session)).set('Idempotency-Key', idem);
    expect(again.status).to.equal(200);
    expect(again.headers['idempotent-replay']).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    const used = await client.get('/v1/enterprise/settings').set(headersOf(wk(key)));
    expect(used.status).to.equal(401);
    expect(used.body.error.code).to.equal('INVALID_TOKEN');
    expect(await db('workspace_events').where({ workspace_id: workspace.id, event: 'api_key.revoked' })).to.have.length(1);
    const twice = await client.delete(`/v1/enterprise/api-keys/${id}`).set(headersOf(session));
    expect(twice.status).to.equal(404);
    expect(twice.body.error.code).to.equal('NOT_FOUND');
    expect((await client.delete('/v1/enterprise/api-keys/not-a-uuid').set(headersOf(session))).body.error.code).to.equal('NOT_FOUND');
  });

  it("cannot revoke another workspace's key (404) and the key keeps working", async () => {
    const { session } = await setup();
    const other = await createWorkspace();
    const { id, key } = await workspaceKey(other.workspace.id, { member: other.ownerMember, user: other.owner }, ['read']);
    const res = await client.delete(`/v1/enterprise/api-keys/${id}`).set(headersOf(session));
    expect(res.status).to.equal(404);
    expect((await client.get('/v1/enterprise/settings').set(headersOf(wk(key)))).status).to.equal(200);
  });

  it('409 KEY_LIMIT at 10 unrevoked keys; parallel creations never pass it; revoking frees a slot', async () => {
    const { workspace, admin, session } = await setup();
    const made: string[] = [];
    for (let i = 0; i < 8; i += 1) made.push((await workspaceKey(workspace.id, admin)).id);
    const racing = await Promise.all([0, 1, 2, 3].map((i) => client.post('/v1/enterprise/api-keys').set(headersOf(session)).send({ label: `race ${i}`, scopes: ['read'] })));
    expect(racing.filter((r) => r.status === 201)).to.have.length(2);
    for (const r of racing.filter((x) => x.status !== 201)) expect(r.body.error.code).to.equal('KEY_LIMIT');
    expect(await countRows('workspace_api_keys', { workspace_id: workspace.id, revoked_at: null })).to.equal(10);
    const over = await client.post('/v1/enterprise/api-keys').set(headersOf(session)).send({ label: 'one more', scopes: ['read'] });
    expect(over.status).to.equal(409);
    expect(over.body.error.code).to.equal('KEY_LIMIT');
    expect((await client.delete(`/v1/enterprise/api-keys/${made[0]}`).set(headersOf(session))).status).to.equal(200);
    expect((await client.post('/v1/enterprise/api-keys').set(headersOf(session)).send({ label: 'one more', scopes: ['read'] })).status).to.equal(201);
  });

  it('records last use at most once a minute', async () => {
    const { workspace, admin } = await setup();
    const { id, key } = await workspaceKey(workspace.id, admin);
    const t0 = new Date('2026-11-27T10:00:00Z');
    clock.set(t0);
    await client.get('/v1/enterprise/settings').set(headersOf(wk(key)));
    const lastUsed = async () => ((await db('workspace_api_keys').where({ id }).first()).last_used_at as Date).toISOString();
    expect(await lastUsed()).to.equal(t0.toISOString());
    clock.advance(59_000);
    await client.get('/v1/enterprise/settings').set(headersOf(wk(key)));
    expect(await lastUsed()).to.equal(t0.toISOString());
    clock.advance(1_000);
    await client.get('/v1/enterprise/settings').set(headersOf(wk(key)));
    expect(await lastUsed()).to.equal(new Date(t0.getTime() + 60_000).toISOString());
  });

  it('keys of both kinds get 403 KEY_NOT_ALLOWED on the key routes', async () => {
    const { workspace, admin } = await setup();
    const { id, key } = await workspaceKey(workspace.id, admin, ['read', 'write']);
    for (const cred of [wk(key), await personalKeyOf(admin.user)]) {
      expect((await client.get('/v1/enterprise/api-keys').set(headersOf(cred))).body.error.code).to.equal('KEY_NOT_ALLOWED');
      expect((await client.post('/v1/enterprise/api-keys').set(headersOf(cred)).send({ label: 'abc', scopes: ['read'] })).body.error.code).to.equal('KEY_NOT_ALLOWED');
      expect((await client.delete(`/v1/enterprise/api-keys/${id}`).set(headersOf(cred))).body.error.code).to.equal('KEY_NOT_ALLOWED');
    }
  });

  it('a key needs no workspace header; another workspace id answers 403 NO_WORKSPACE, a malformed one 400 INVALID_ACCOUNT', async () => {
    const { workspace, admin } = await setup();
    const other = await createWorkspace();
    const { key } = await workspaceKey(workspace.id, admin);
    expect((await client.get('/v1/enterprise/settings').set(headersOf(wk(key), workspace.id))).status).to.equal(200);
    const wrong = await client.get('/v1/enterprise/settings').set(headersOf(wk(key), other.workspace.id));
    expect(wrong.status).to.equal(403);
    expect(wrong.body.error.code).to.equal('NO_WORKSPACE');
    const bad = await client.get('/v1/enterprise/settings').set(headersOf(wk(key), 'nope'));
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal('INVALID_ACCOUNT');
  });

  it('an unknown rpe_ key is 401 INVALID_TOKEN; outside /v1/enterprise a workspace key is 401 WORKSPACE_KEY_ONLY', async () => {
    const { workspace, admin } = await setup();
    const { key } = await workspaceKey(workspace.id, admin);
    const unknown = await client.get('/v1/enterprise/settings').set(headersOf(wk(`${key.slice(0, -2)}xx`)));
    expect(unknown.status).to.equal(401);
    expect(unknown.body.error.code).to.equal('INVALID_TOKEN');
    const elsewhere = await client.get('/api/escrows').set(headersOf(wk(key)));
    expect(elsewhere.status).to.equal(401);
    expect(elsewhere.body.error.code).to.equal('WORKSPACE_KEY_ONLY');
  });

  it('60 requests per minute across the three key routes', async () => {
    const { session } = await setup();
    for (let i = 0; i < 60; i += 1) expect((await client.get('/v1/enterprise/api-keys').set(headersOf(session))).status).to.equal(200);
    const res = await client.post('/v1/enterprise/api-keys').set(headersOf(session)).send({ label: 'late', scopes: ['read'] });
    expect(res.status).to.equal(429);
    expect(res.body.error.code).to.equal('RATE_LIMITED');
  });
});
