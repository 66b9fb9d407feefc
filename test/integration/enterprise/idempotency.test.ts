/**
 * Enterprise idempotency (enterprise spec section 5 rule 6): same key and body replays
 * the first answer with Idempotent-Replay: true and changes nothing more; another body
 * is 422 IDEMPOTENCY_KEY_CONFLICT; a retry while the first runs is 409
 * IDEMPOTENCY_KEY_IN_FLIGHT; keys expire after 24 hours; replays are per workspace and
 * credential.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows } from '../../helpers/auth-signin-util.js';
import { addMember, createWorkspace, headersOf, sessionOf, workspaceKey, type Cred } from '../../factories/enterprise.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';

const KEY = '0d6f4c1e-8a2b-4c3d-9e4f-5a6b7c8d9e0f';

describe('enterprise idempotency', () => {
  const client = api();
  const create = (cred: Cred, body: Record<string, unknown>, key = KEY) =>
    client.post('/v1/enterprise/counterparties').set(headersOf(cred)).set('Idempotency-Key', key).send(body);

  it('replays the first answer once stored; another body is 422; nothing is done twice', async () => {
    const { workspace, owner } = await createWorkspace();
    const s = await sessionOf(owner);
    const first = await create(s, { name: 'PT Satu' });
    expect(first.status).to.equal(201);
    const again = await create(s, { name: 'PT Satu' });
    expect(again.status).to.equal(201);
    expect(again.headers['idempotent-replay']).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers['cache-control']).to.equal('private, no-store');
    const other = await create(s, { name: 'PT Dua' });
    expect(other.status).to.equal(422);
    expect(other.body.error.code).to.equal('IDEMPOTENCY_KEY_CONFLICT');
    expect(await countRows('counterparties')).to.equal(1);
    expect(await countRows('workspace_events', { workspace_id: workspace.id, event: 'counterparty.created' })).to.equal(1);
    const bad = await create(s, { name: 'PT Tiga' }, 'not-a-uuid');
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal('IDEMPOTENCY_KEY_INVALID');
  });

  it('409 IDEMPOTENCY_KEY_IN_FLIGHT while the first call with the key still runs', async () => {
    const { workspace, owner } = await createWorkspace();
    const s = await sessionOf(owner);
    // The first call holds this lock for its transaction's life (shared/idempotency.ts openKey).
    const ref = `ent:${workspace.id}:u:${owner.id}|POST /v1/enterprise/counterparties|${KEY}`;
    const trx = await db.transaction();
    try {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [ref]);
      const res = await create(s, { name: 'PT Satu' });
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('IDEMPOTENCY_KEY_IN_FLIGHT');
    } finally {
      await trx.rollback();
    }
    expect(await countRows('counterparties')).to.equal(0);
    expect((await create(s, { name: 'PT Satu' })).status).to.equal(201);
  });

  it('a key is forgotten after 24 hours', async () => {
    const { owner } = await createWorkspace();
    const s = await sessionOf(owner);
    expect((await create(s, { name: 'PT Satu' })).status).to.equal(201);
    clock.advance(24 * 3600 * 1000 + 1000);
    // The session idled out meanwhile; the same user signs in again (the key's scope is the user).
    const later = await create(await sessionOf(owner), { name: 'PT Satu' });
    expect(later.status).to.equal(201);
    expect(later.headers['idempotent-replay']).to.equal(undefined);
    expect(await countRows('counterparties')).to.equal(2);
  });

  it('replays belong to one workspace and one credential', async () => {
    const a = await createWorkspace();
    const b = await createWorkspace();
    const admin = await addMember(a.workspace.id, 'admin');
    const key = await workspaceKey(a.workspace.id, admin, ['read', 'write']);
    expect((await create(await sessionOf(a.owner), { name: 'PT Satu' })).status).to.equal(201);
    const byKey = await create({ kind: 'workspace_key', key: key.key }, { name: 'PT Satu' });
    expect(byKey.status).to.equal(201);
    expect(byKey.headers['idempotent-replay']).to.equal(undefined);
    const inB = await create(await sessionOf(b.owner), { name: 'PT Satu' });
    expect(inB.status).to.equal(201);
    expect(inB.headers['idempotent-replay']).to.equal(undefined);
    expect(await countRows('counterparties', { workspace_id: a.workspace.id })).to.equal(2);
    expect(await countRows('counterparties', { workspace_id: b.workspace.id })).to.equal(1);
  });

  it('a refused call is not stored: the retry runs again', async () => {
    const { owner } = await createWorkspace();
    const s = await sessionOf(owner);
    const missing = '5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3';
    const path = `/v1/enterprise/counterparties/${missing}`;
    const first = await client.patch(path).set(headersOf(s)).set('Idempotency-Key', KEY).send({ name: 'X Y' });
    expect(first.status).to.equal(404);
    const again = await client.patch(path).set(headersOf(s)).set('Idempotency-Key', KEY).send({ name: 'X Y' });
    expect(again.status).to.equal(404);
    expect(again.headers['idempotent-replay']).to.equal(undefined);
  });
});
