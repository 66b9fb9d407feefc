/**
 * Issue 42 (review R3; decision 0020 "Issue 42: one tenant's counterparties"): a workspace
 * holds at most COUNTERPARTIES_PER_WORKSPACE counterparties; the count is taken under the
 * workspace lock, so creates racing for the last places never pass it.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows } from '../../helpers/auth-signin-util.js';
import { createWorkspace, headersOf, sessionOf } from '../../factories/enterprise.js';
import { db } from '../../../shared/db.js';
import { COUNTERPARTIES_PER_WORKSPACE } from '../../../shared/enterprise/counterparties.js';

describe('issue 42: counterparties per workspace are capped', () => {
  const client = api();

  it('409 COUNTERPARTY_LIMIT at the cap; parallel creates never pass it; another workspace is not affected', async function () {
    this.timeout(60_000);
    expect(COUNTERPARTIES_PER_WORKSPACE).to.equal(10_000);
    const { workspace, owner } = await createWorkspace();
    const h = headersOf(await sessionOf(owner));
    // All but two places taken (the same rows the API writes, inserted in one statement to save time).
    await db.raw(
      `INSERT INTO counterparties (workspace_id, name, country_code, relationship, kyb_status, created_by, created_at, updated_at)
       SELECT ?, 'PT Mitra ' || g, 'ID', 'seller', 'not_started', ?, now(), now() FROM generate_series(1, ?) g`,
      [workspace.id, owner.id, COUNTERPARTIES_PER_WORKSPACE - 2],
    );
    const body = (i: number) => ({ name: `PT Balapan ${i}`, country_code: 'ID', relationship: 'seller' });
    const racing = await Promise.all([0, 1, 2, 3].map((i) => client.post('/v1/enterprise/counterparties').set(h).send(body(i))));
    expect(racing.map((r) => r.status).sort()).to.deep.equal([201, 201, 409, 409]);
    for (const r of racing.filter((x) => x.status === 409)) {
      expect(r.body.error.code).to.equal('COUNTERPARTY_LIMIT');
      expect(r.body.error.message).to.contain('10000');
    }
    expect(await countRows('counterparties', { workspace_id: workspace.id })).to.equal(COUNTERPARTIES_PER_WORKSPACE);
    const over = await client.post('/v1/enterprise/counterparties').set(h).set('X-Service-Lang', 'en').send(body(9));
    expect(over.status).to.equal(409);
    expect(over.body.error).to.deep.equal({ code: 'COUNTERPARTY_LIMIT', message: 'A workspace can have at most 10000 counterparties' });
    expect(await countRows('workspace_events', { workspace_id: workspace.id, event: 'counterparty.created' })).to.equal(2);

    const other = await createWorkspace();
    const ok = await client.post('/v1/enterprise/counterparties').set(headersOf(await sessionOf(other.owner))).send(body(0));
    expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
  });
});
