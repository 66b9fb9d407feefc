/**
 * Deal templates (enterprise spec 2 "Template", 4.3, 5, 7, 8; issue 26): create, list
 * (sorted by name, paginated), change any subset (milestones replaced whole), delete; the
 * body rules (lengths, percentages summing to exactly 100 or every milestone an amount);
 * the 50-template limit; 409 TEMPLATE_BUSY while another save of the workspace runs (the
 * workspace lock held by another transaction, and two concurrent saves); roles and
 * scopes; idempotent replay; other workspaces' templates; 60 per minute; the events; and
 * `templateMilestones`, the conversion deal creation uses.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows } from '../../helpers/auth-signin-util.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, workspaceKey, type Cred } from '../../factories/enterprise.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { AppError } from '../../../shared/errors.js';
import { templateLockKey } from '../../../shared/deals/templates-repo.js';
import { templateMilestones, TEMPLATES_PER_WORKSPACE } from '../../../shared/deals/templates.js';

const P = '/v1/enterprise/templates';
const KEY = '6f1d2c3b-4a5e-4f60-8b7c-9d0e1f2a3b4c';

const pctBody = (name = 'Konstruksi 3 tahap', pcts = [30, 30, 40]) => ({
  name,
  description: 'Termin pembayaran proyek',
  milestones: pcts.map((p, i) => ({ title: `Tahap ${i + 1}`, amount_pct: p })),
});
const amountBody = (name = 'Pengadaan', amounts = [250_000, 750_000]) => ({
  name,
  milestones: amounts.map((a, i) => ({ title: `Pengiriman ${i + 1}`, amount: a, required_evidence: 'Surat jalan', due_offset_days: 7 * (i + 1) })),
});

/** Rows put straight into the table (the limit test, other workspaces). */
async function insertTemplates(workspaceId: string, createdBy: string, n: number, prefix = 'Direct'): Promise<string[]> {
  if (n === 0) return [];
  const now = clock.now();
  const rows = await db('deal_templates')
    .insert(
      Array.from({ length: n }, (_, i) => ({
        workspace_id: workspaceId,
        name: `${prefix} ${String(i).padStart(2, '0')}`,
        description: null,
        milestones: JSON.stringify([{ title: 'Satu-satunya', amount_pct: 100, required_evidence: null, due_offset_days: null }]),
        created_by: createdBy,
        created_at: now,
        updated_at: now,
      })),
    )
    .returning<{ id: string }[]>('id');
  return rows.map((r) => r.id);
}

function expectAppError(err: unknown, status: number, code: string, field?: string): void {
  expect(err).to.be.instanceOf(AppError);
  const e = err as AppError;
  expect(e.status).to.equal(status);
  expect(e.code).to.equal(code);
  if (field) expect((e.extras.details as { fieldErrors: Record<string, string[]> }).fieldErrors).to.have.property(field);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a refusal');
}

describe('deal templates', () => {
  const client = api();

  async function setup() {
    const ws = await createWorkspace();
    const operator = await addMember(ws.workspace.id, 'operator');
    const viewer = await addMember(ws.workspace.id, 'viewer');
    return { ...ws, operator, viewer, s: await sessionOf(operator.user) };
  }

  const post = (cred: Cred, body: unknown) => client.post(P).set(headersOf(cred)).send(body as object);
  const patch = (cred: Cred, id: string, body: unknown) => client.patch(`${P}/${id}`).set(headersOf(cred)).send(body as object);
  const del = (cred: Cred, id: string) => client.delete(`${P}/${id}`).set(headersOf(cred));

  describe('create and read', () => {
    it('creates a percentage template: 201 with the answer shape, the row and a template.created event', async () => {
      const { workspace, operator, s } = await setup();
      const res = await post(s, pctBody());
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      const t = res.body.data;
      expect(Object.keys(t as object).sort()).to.deep.equal(['created_at', 'created_by', 'description', 'id', 'milestones', 'name', 'updated_at']);
      expect(t).to.include({ name: 'Konstruksi 3 tahap', description: 'Termin pembayaran proyek' });
      expect(t.created_by).to.deep.equal({ id: operator.user.id, name: operator.user.full_name });
      expect(t.milestones).to.deep.equal([
        { title: 'Tahap 1', amount_pct: 30, required_evidence: null, due_offset_days: null },
        { title: 'Tahap 2', amount_pct: 30, required_evidence: null, due_offset_days: null },
        { title: 'Tahap 3', amount_pct: 40, required_evidence: null, due_offset_days: null },
      ]);
      expect(Math.abs(Date.parse(t.created_at as string) - clock.now().getTime())).to.be.below(5000);
      expect(t.updated_at).to.equal(t.created_at);
      const row = await db('deal_templates').where({ id: t.id }).first();
      expect(row).to.include({ workspace_id: workspace.id, created_by: operator.user.id });
      const events = await db('workspace_events').where({ workspace_id: workspace.id, event: 'template.created' });
      expect(events).to.have.length(1);
      expect(events[0]).to.include({ entity_type: 'template', entity_id: t.id, actor_id: operator.user.id, livemode: false });
    });

    it('creates an amount template with evidence and due offsets; trims text; no description is null', async () => {
      const { s } = await setup();
      const res = await post(s, { ...amountBody('  Pengadaan  '), description: '' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data.name).to.equal('Pengadaan');
      expect(res.body.data.description).to.equal(null);
      expect(res.body.data.milestones).to.deep.equal([
        { title: 'Pengiriman 1', amount: 250_000, required_evidence: 'Surat jalan', due_offset_days: 7 },
        { title: 'Pengiriman 2', amount: 750_000, required_evidence: 'Surat jalan', due_offset_days: 14 },
      ]);
      const bare = await post(s, { name: 'Tanpa deskripsi', milestones: [{ title: 'Semua', amount_pct: 100 }] });
      expect(bare.status).to.equal(201);
      expect(bare.body.data.description).to.equal(null);
    });

    it('takes the limits exactly: names of 2 and 120, description 500, 20 milestones, amounts 10,000 and 50,000,000,000, offsets 0 and 365, evidence 300', async () => {
      const { s } = await setup();
      const twenty = Array.from({ length: 20 }, (_, i) => ({ title: `M${i}`, amount_pct: 5, due_offset_days: i === 0 ? 0 : 365, required_evidence: 'e'.repeat(300) }));
      expect((await post(s, { name: 'ab', description: 'd'.repeat(500), milestones: twenty })).status).to.equal(201);
      const amounts = { name: 'n'.repeat(120), milestones: [{ title: 't'.repeat(180), amount: 10_000 }, { title: 'Besar', amount: 50_000_000_000 }] };
      const res = await post(s, amounts);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data.milestones[1].amount).to.equal(50_000_000_000);
    });

    it('lists sorted by name (case-insensitive) with pagination; viewers and read keys may read', async () => {
      const { workspace, viewer, s } = await setup();
      for (const name of ['gamma', 'Beta', 'alpha']) expect((await post(s, pctBody(name))).status).to.equal(201);
      const res = await client.get(P).set(headersOf(await sessionOf(viewer.user)));
      expect(res.status).to.equal(200);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      expect((res.body.data as { name: string }[]).map((t) => t.name)).to.deep.equal(['alpha', 'Beta', 'gamma']);
      expect(res.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 3, total_pages: 1 });
      expect(res.body.data[0].milestones).to.have.length(3);
      const p2 = await client.get(`${P}?page=2&limit=2`).set(headersOf(s));
      expect((p2.body.data as { name: string }[]).map((t) => t.name)).to.deep.equal(['gamma']);
      expect(p2.body.pagination).to.deep.equal({ page: 2, limit: 2, total: 3, total_pages: 2 });
      const bad = await client.get(`${P}?limit=51`).set(headersOf(s));
      expect(bad.status).to.equal(400);
      expect(bad.body.error.code).to.equal('INVALID_QUERY');
      const key = await workspaceKey(workspace.id, viewer, ['read']);
      const byKey = await client.get(P).set(headersOf({ kind: 'workspace_key', key: key.key }));
      expect(byKey.status).to.equal(200);
      expect(byKey.body.data).to.have.length(3);
    });
  });

  describe('body rules (400 INVALID_BODY with fieldErrors)', () => {
    const ms = (...items: Record<string, unknown>[]) => items.map((m, i) => ({ title: `Tahap ${i + 1}`, ...m }));
    const cases: [string, Record<string, unknown>, string][] = [
      ['no name', { milestones: ms({ amount_pct: 100 }) }, 'name'],
      ['a name of 1 character', { name: 'x', milestones: ms({ amount_pct: 100 }) }, 'name'],
      ['a name of 121 characters', { name: 'n'.repeat(121), milestones: ms({ amount_pct: 100 }) }, 'name'],
      ['a blank name', { name: '   ', milestones: ms({ amount_pct: 100 }) }, 'name'],
      ['a description of 501 characters', { name: 'Ok', description: 'd'.repeat(501), milestones: ms({ amount_pct: 100 }) }, 'description'],
      ['no milestones', { name: 'Ok' }, 'milestones'],
      ['an empty milestone list', { name: 'Ok', milestones: [] }, 'milestones'],
      ['21 milestones', { name: 'Ok', milestones: Array.from({ length: 21 }, (_, i) => ({ title: `M${i}`, amount: 10_000 })) }, 'milestones'],
      ['a title of 1 character', { name: 'Ok', milestones: [{ title: 'x', amount_pct: 100 }] }, 'milestones.0.title'],
      ['a title of 181 characters', { name: 'Ok', milestones: [{ title: 't'.repeat(181), amount_pct: 100 }] }, 'milestones.0.title'],
      ['no title', { name: 'Ok', milestones: [{ amount_pct: 100 }] }, 'milestones.0.title'],
      ['amount_pct 0', { name: 'Ok', milestones: ms({ amount_pct: 0 }, { amount_pct: 100 }) }, 'milestones.0.amount_pct'],
      ['amount_pct 101', { name: 'Ok', milestones: ms({ amount_pct: 101 }) }, 'milestones.0.amount_pct'],
      ['a fractional amount_pct', { name: 'Ok', milestones: ms({ amount_pct: 50.5 }, { amount_pct: 49.5 }) }, 'milestones.0.amount_pct'],
      ['amount_pct as a string', { name: 'Ok', milestones: ms({ amount_pct: '100' }) }, 'milestones.0.amount_pct'],
      ['percentages summing to 99', { name: 'Ok', milestones: ms({ amount_pct: 33 }, { amount_pct: 33 }, { amount_pct: 33 }) }, 'milestones'],
      ['percentages summing to 101', { name: 'Ok', milestones: ms({ amount_pct: 34 }, { amount_pct: 33 }, { amount_pct: 34 }) }, 'milestones'],
      ['one percentage under 100', { name: 'Ok', milestones: ms({ amount_pct: 90 }) }, 'milestones'],
      ['percentages and amounts mixed', { name: 'Ok', milestones: ms({ amount_pct: 100 }, { amount: 50_000 }) }, 'milestones'],
      ['both amount_pct and amount on one milestone', { name: 'Ok', milestones: ms({ amount_pct: 100, amount: 50_000 }) }, 'milestones.0'],
      ['neither amount_pct nor amount', { name: 'Ok', milestones: ms({}) }, 'milestones.0'],
      ['an amount of 9,999', { name: 'Ok', milestones: ms({ amount: 9_999 }) }, 'milestones.0.amount'],
      ['an amount above 50,000,000,000', { name: 'Ok', milestones: ms({ amount: 50_000_000_001 }) }, 'milestones.0.amount'],
      ['a fractional amount', { name: 'Ok', milestones: ms({ amount: 10_000.5 }) }, 'milestones.0.amount'],
      ['an amount as a string', { name: 'Ok', milestones: ms({ amount: '10000' }) }, 'milestones.0.amount'],
      ['evidence of 301 characters', { name: 'Ok', milestones: ms({ amount: 10_000, required_evidence: 'e'.repeat(301) }) }, 'milestones.0.required_evidence'],
      ['a due offset of -1', { name: 'Ok', milestones: ms({ amount: 10_000, due_offset_days: -1 }) }, 'milestones.0.due_offset_days'],
      ['a due offset of 366', { name: 'Ok', milestones: ms({ amount: 10_000, due_offset_days: 366 }) }, 'milestones.0.due_offset_days'],
      ['a fractional due offset', { name: 'Ok', milestones: ms({ amount: 10_000, due_offset_days: 1.5 }) }, 'milestones.0.due_offset_days'],
      ['an unknown field', { name: 'Ok', milestones: ms({ amount_pct: 100 }), colour: 'red' }, 'colour'],
      ['an unknown milestone field', { name: 'Ok', milestones: ms({ amount_pct: 100, currency: 'IDR' }) }, 'milestones.0.currency'],
    ];

    for (const [label, body, field] of cases) {
      it(`refuses ${label} (${field})`, async () => {
        const { workspace, s } = await setup();
        const res = await post(s, body);
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.error.code).to.equal('INVALID_BODY');
        expect(res.body.error.details.fieldErrors, JSON.stringify(res.body.error.details)).to.have.property(field);
        expect(await countRows('deal_templates', { workspace_id: workspace.id })).to.equal(0);
        expect(await countRows('workspace_events', { workspace_id: workspace.id, event: 'template.created' })).to.equal(0);
      });
    }

    it('says what the percentages add up to', async () => {
      const { s } = await setup();
      const res = await post(s, pctBody('Ok', [33, 33, 33]));
      expect(res.body.error.details.fieldErrors.milestones).to.deep.equal(['the amount_pct values must add up to exactly 100 (they add up to 99)']);
    });
  });

  describe('update and delete', () => {
    it('changes any subset; milestones are replaced whole; template.updated in the feed', async () => {
      const { workspace, owner, s } = await setup();
      const created = (await post(await sessionOf(owner), pctBody())).body.data;
      clock.advance(60_000);
      const named = await patch(s, created.id, { name: 'Nama baru' });
      expect(named.status, JSON.stringify(named.body)).to.equal(200);
      expect(named.body.data).to.include({ id: created.id, name: 'Nama baru', description: created.description, created_at: created.created_at });
      expect(named.body.data.milestones).to.deep.equal(created.milestones);
      expect(named.body.data.created_by).to.deep.equal({ id: owner.id, name: owner.full_name });
      expect(Date.parse(named.body.data.updated_at as string) - Date.parse(created.updated_at as string)).to.be.at.least(60_000);
      const swapped = await patch(s, created.id, { milestones: [{ title: 'Sekaligus', amount: 1_000_000 }], description: null });
      expect(swapped.status).to.equal(200);
      expect(swapped.body.data.milestones).to.deep.equal([{ title: 'Sekaligus', amount: 1_000_000, required_evidence: null, due_offset_days: null }]);
      expect(swapped.body.data.description).to.equal(null);
      expect(swapped.body.data.name).to.equal('Nama baru');
      const events = await db('workspace_events').where({ workspace_id: workspace.id, event: 'template.updated' }).orderBy('seq');
      expect(events.map((e: { summary: string }) => e.summary)).to.deep.equal(['Template Nama baru changed: name', 'Template Nama baru changed: description, milestones']);
      expect(events.every((e: { livemode: boolean; entity_id: string }) => !e.livemode && e.entity_id === created.id)).to.equal(true);
    });

    it('applies the body rules to a change and keeps the template when refused', async () => {
      const { s } = await setup();
      const created = (await post(s, pctBody())).body.data;
      for (const bad of [{}, { name: 'x' }, { milestones: [{ title: 'Satu', amount_pct: 99 }] }, { milestones: [{ title: 'A', amount_pct: 50 }, { title: 'B', amount: 50_000 }] }, { milestones: [] }]) {
        const res = await patch(s, created.id, bad);
        expect(res.status, JSON.stringify(bad)).to.equal(400);
        expect(res.body.error.code).to.equal('INVALID_BODY');
      }
      const list = await client.get(P).set(headersOf(s));
      expect(list.body.data[0]).to.deep.equal(created);
    });

    it('deletes: { id, deleted: true }, the row is gone, template.deleted; a second delete is 404', async () => {
      const { workspace, s } = await setup();
      const created = (await post(s, pctBody())).body.data;
      const res = await del(s, created.id);
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({ id: created.id, deleted: true });
      expect(await countRows('deal_templates', { id: created.id })).to.equal(0);
      const events = await db('workspace_events').where({ workspace_id: workspace.id, event: 'template.deleted' });
      expect(events).to.have.length(1);
      expect(events[0]).to.include({ entity_id: created.id, livemode: false });
      const again = await del(s, created.id);
      expect(again.status).to.equal(404);
      expect(again.body.error.code).to.equal('NOT_FOUND');
    });

    it("404 NOT_FOUND for a malformed id and for another workspace's template, which stays as it was", async () => {
      const { s } = await setup();
      const other = await createWorkspace();
      const [theirs] = await insertTemplates(other.workspace.id, other.owner.id, 1, 'Rahasia B');
      const before = await db('deal_templates').where({ id: theirs }).first();
      for (const id of ['not-a-uuid', '12345', theirs!, '5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3']) {
        const p = await patch(s, id, { name: 'Punya saya' });
        expect(p.status, `PATCH ${id}`).to.equal(404);
        expect(p.body.error.code).to.equal('NOT_FOUND');
        const d = await del(s, id);
        expect(d.status, `DELETE ${id}`).to.equal(404);
        expect(d.body.error.code).to.equal('NOT_FOUND');
      }
      expect(await db('deal_templates').where({ id: theirs }).first()).to.deep.equal(before);
      const list = await client.get(P).set(headersOf(s));
      expect(list.body.data).to.deep.equal([]);
      expect(JSON.stringify(list.body)).to.not.include('Rahasia B');
      expect(await countRows('workspace_events', { workspace_id: other.workspace.id, entity_type: 'template' })).to.equal(0);
    });
  });

  describe('limits and concurrency', () => {
    it(`${TEMPLATES_PER_WORKSPACE} per workspace: the 50th is made, the 51st is 409 TEMPLATE_LIMIT; a delete makes room`, async () => {
      const { workspace, operator, s } = await setup();
      expect(TEMPLATES_PER_WORKSPACE).to.equal(50);
      await insertTemplates(workspace.id, operator.user.id, 49);
      const fiftieth = await post(s, pctBody('Kelima puluh'));
      expect(fiftieth.status, JSON.stringify(fiftieth.body)).to.equal(201);
      const over = await post(s, pctBody('Kelima puluh satu'));
      expect(over.status).to.equal(409);
      expect(over.body.error.code).to.equal('TEMPLATE_LIMIT');
      expect(await countRows('deal_templates', { workspace_id: workspace.id })).to.equal(50);
      // Another workspace is not counted against this one.
      const other = await createWorkspace();
      expect((await post(await sessionOf(other.owner), pctBody())).status).to.equal(201);
      expect((await del(s, fiftieth.body.data.id)).status).to.equal(200);
      expect((await post(s, pctBody('Kelima puluh satu'))).status).to.equal(201);
    });

    it('409 TEMPLATE_BUSY on create, update and delete while another save of the workspace holds its lock; other workspaces go on', async () => {
      const { workspace, s } = await setup();
      const created = (await post(s, pctBody())).body.data;
      const other = await createWorkspace();
      const trx = await db.transaction();
      try {
        await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [templateLockKey(workspace.id)]);
        const started = Date.now();
        for (const res of [await post(s, pctBody('Kedua')), await patch(s, created.id, { name: 'Baru' }), await del(s, created.id)]) {
          expect(res.status, JSON.stringify(res.body)).to.equal(409);
          expect(res.body.error.code).to.equal('TEMPLATE_BUSY');
        }
        expect(Date.now() - started, 'refused at once, not after waiting').to.be.below(3000);
        expect((await post(await sessionOf(other.owner), pctBody())).status).to.equal(201);
      } finally {
        await trx.rollback();
      }
      const rows = await db('deal_templates').where({ workspace_id: workspace.id });
      expect(rows.map((r: { name: string }) => r.name)).to.deep.equal([created.name]);
      expect(await countRows('workspace_events', { workspace_id: workspace.id, entity_type: 'template' })).to.equal(1);
      expect((await patch(s, created.id, { name: 'Baru' })).status).to.equal(200);
    });

    it('two concurrent creations for one workspace: one 201, one 409 TEMPLATE_BUSY', async () => {
      const { workspace, s } = await setup();
      // The workspace row locked here holds whichever save takes the template lock first
      // inside its transaction (its insert's foreign key check and its event both need the
      // row), with the lock held, until the other save has been answered; then the row is
      // let go. Which request wins is up to the race; that one wins and one is refused is not.
      const hold = await db.transaction();
      let released = false;
      const release = async () => {
        if (released) return;
        released = true;
        await hold.commit();
      };
      try {
        await hold('workspaces').where({ id: workspace.id }).forUpdate().first();
        const a = post(s, pctBody('Paralel A')).then((res) => res);
        const b = post(s, pctBody('Paralel B')).then((res) => res);
        const first = await Promise.race([a, b]);
        await release();
        const answers = await Promise.all([a, b]);
        expect(first.status, JSON.stringify(first.body)).to.equal(409);
        expect(answers.map((r) => r.status).sort()).to.deep.equal([201, 409]);
        const busy = answers.find((r) => r.status === 409)!;
        expect(busy.body.error.code).to.equal('TEMPLATE_BUSY');
        const made = answers.find((r) => r.status === 201)!;
        expect(await db('deal_templates').where({ workspace_id: workspace.id }).pluck('id')).to.deep.equal([made.body.data.id]);
        expect(await countRows('workspace_events', { workspace_id: workspace.id, event: 'template.created' })).to.equal(1);
      } finally {
        await release();
      }
    });

    it('60 creations per minute per user (invalid bodies count), then 429 RATE_LIMITED with Retry-After; changes count on their own', async () => {
      const { s } = await setup();
      const created = (await post(s, pctBody())).body.data;
      for (let i = 1; i < 60; i++) expect((await post(s, { name: 'x' })).status).to.equal(400);
      const res = await post(s, pctBody('Keenam puluh satu'));
      expect(res.status).to.equal(429);
      expect(res.body.error.code).to.equal('RATE_LIMITED');
      expect(Number(res.headers['retry-after'])).to.be.within(1, 60);
      expect((await patch(s, created.id, { name: 'Masih bisa' })).status).to.equal(200);
    });
  });

  describe('access', () => {
    it('viewers get 403 FORBIDDEN on every write; read keys 403 SCOPE_REQUIRED; a read+write key of an operator writes', async () => {
      const { workspace, viewer, operator, s } = await setup();
      const created = (await post(s, pctBody())).body.data;
      const viewerSession = await sessionOf(viewer.user);
      const viewerKey = await personalKeyOf(viewer.user);
      for (const cred of [viewerSession, viewerKey]) {
        for (const res of [await post(cred, pctBody('Tidak')), await patch(cred, created.id, { name: 'Tidak' }), await del(cred, created.id)]) {
          expect(res.status).to.equal(403);
          expect(res.body.error.code).to.equal('FORBIDDEN');
        }
      }
      const readKey: Cred = { kind: 'workspace_key', key: (await workspaceKey(workspace.id, operator, ['read'])).key };
      for (const res of [await post(readKey, pctBody('Tidak')), await patch(readKey, created.id, { name: 'Tidak' }), await del(readKey, created.id)]) {
        expect(res.status).to.equal(403);
        expect(res.body.error.code).to.equal('SCOPE_REQUIRED');
      }
      expect(await db('deal_templates').where({ workspace_id: workspace.id }).pluck('name')).to.deep.equal([created.name]);
      const writeKey: Cred = { kind: 'workspace_key', key: (await workspaceKey(workspace.id, operator, ['read', 'write'])).key };
      const made = await post(writeKey, pctBody('Lewat kunci'));
      expect(made.status, JSON.stringify(made.body)).to.equal(201);
      expect(made.body.data.created_by).to.deep.equal({ id: operator.user.id, name: operator.user.full_name });
      expect((await patch(writeKey, made.body.data.id, { name: 'Lewat kunci 2' })).status).to.equal(200);
      expect((await del(writeKey, made.body.data.id)).status).to.equal(200);
      const anonymous = await client.get(P);
      expect(anonymous.status).to.equal(401);
    });

    it('Idempotency-Key: the same body replays the first answer (Idempotent-Replay: true) and saves once; another body is 422', async () => {
      const { workspace, s } = await setup();
      const keyed = (body: unknown, key = KEY) => client.post(P).set(headersOf(s)).set('Idempotency-Key', key).send(body as object);
      const first = await keyed(pctBody());
      expect(first.status).to.equal(201);
      const again = await keyed(pctBody());
      expect(again.status).to.equal(201);
      expect(again.headers['idempotent-replay']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      const other = await keyed(pctBody('Lain'));
      expect(other.status).to.equal(422);
      expect(other.body.error.code).to.equal('IDEMPOTENCY_KEY_CONFLICT');
      expect(await countRows('deal_templates', { workspace_id: workspace.id })).to.equal(1);
      expect(await countRows('workspace_events', { workspace_id: workspace.id, event: 'template.created' })).to.equal(1);
      // A keyed delete replays its answer instead of answering 404 the second time.
      const delKey = '7a2e3d4c-5b6f-4a71-9c8d-0e1f2a3b4c5d';
      const d1 = await client.delete(`${P}/${first.body.data.id}`).set(headersOf(s)).set('Idempotency-Key', delKey);
      const d2 = await client.delete(`${P}/${first.body.data.id}`).set(headersOf(s)).set('Idempotency-Key', delKey);
      expect(d1.status).to.equal(200);
      expect(d2.status).to.equal(200);
      expect(d2.headers['idempotent-replay']).to.equal('true');
      expect(d2.body).to.deep.equal(d1.body);
      expect(await countRows('workspace_events', { workspace_id: workspace.id, event: 'template.deleted' })).to.equal(1);
    });

    it('a refused keyed save (TEMPLATE_BUSY) stores nothing: the retry with the same key runs', async () => {
      const { workspace, s } = await setup();
      const keyed = () => client.post(P).set(headersOf(s)).set('Idempotency-Key', KEY).send(pctBody());
      const trx = await db.transaction();
      try {
        await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [templateLockKey(workspace.id)]);
        const busy = await keyed();
        expect(busy.status).to.equal(409);
        expect(busy.body.error.code).to.equal('TEMPLATE_BUSY');
      } finally {
        await trx.rollback();
      }
      const retry = await keyed();
      expect(retry.status).to.equal(201);
      expect(retry.headers['idempotent-replay']).to.equal(undefined);
      expect(await countRows('deal_templates', { workspace_id: workspace.id })).to.equal(1);
    });
  });

  describe('templateMilestones (deal creation from a template)', () => {
    async function templateOf(body: unknown): Promise<{ workspaceId: string; id: string }> {
      const { workspace, s } = await setup();
      const res = await post(s, body);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return { workspaceId: workspace.id, id: res.body.data.id as string };
    }

    it('33/33/34 of 100,001: each share floored, the remainder on the last (33,000 / 33,000 / 34,001)', async () => {
      const t = await templateOf({ name: 'Tiga', milestones: [{ title: 'Tahap A', amount_pct: 33, required_evidence: 'Foto', due_offset_days: 0 }, { title: 'Tahap B', amount_pct: 33 }, { title: 'Tahap C', amount_pct: 34, due_offset_days: 30 }] });
      const got = await templateMilestones(db, t.workspaceId, t.id, 100_001);
      expect(got).to.deep.equal([
        { title: 'Tahap A', amount: 33_000, required_evidence: 'Foto', due_offset_days: 0 },
        { title: 'Tahap B', amount: 33_000, required_evidence: null, due_offset_days: null },
        { title: 'Tahap C', amount: 34_001, required_evidence: null, due_offset_days: 30 },
      ]);
      expect(got.reduce((sum, m) => sum + m.amount, 0)).to.equal(100_001);
      const inTrx = await db.transaction(async (trx) => templateMilestones(trx, t.workspaceId, t.id, 3_000_000));
      expect(inTrx.map((m) => m.amount)).to.deep.equal([990_000, 990_000, 1_020_000]);
    });

    it('an amount template: the total must equal its sum, else 400 INVALID_BODY on total_amount', async () => {
      const t = await templateOf(amountBody('Dua', [250_000, 750_000]));
      const got = await templateMilestones(db, t.workspaceId, t.id, 1_000_000);
      expect(got).to.deep.equal([
        { title: 'Pengiriman 1', amount: 250_000, required_evidence: 'Surat jalan', due_offset_days: 7 },
        { title: 'Pengiriman 2', amount: 750_000, required_evidence: 'Surat jalan', due_offset_days: 14 },
      ]);
      for (const wrong of [999_999, 1_000_001, 2_000_000]) {
        const err = await rejection(templateMilestones(db, t.workspaceId, t.id, wrong));
        expectAppError(err, 400, 'INVALID_BODY', 'total_amount');
      }
    });

    it('a converted amount below 10,000 (or a total that is not whole rupiah) is 400 INVALID_BODY on total_amount', async () => {
      const t = await templateOf({ name: 'Kecil', milestones: [{ title: 'Tahap A', amount_pct: 1 }, { title: 'Tahap B', amount_pct: 99 }] });
      expectAppError(await rejection(templateMilestones(db, t.workspaceId, t.id, 999_999)), 400, 'INVALID_BODY', 'total_amount');
      expect((await templateMilestones(db, t.workspaceId, t.id, 1_000_000)).map((m) => m.amount)).to.deep.equal([10_000, 990_000]);
      for (const bad of [0, -5, 1000.5, Number.NaN]) {
        expectAppError(await rejection(templateMilestones(db, t.workspaceId, t.id, bad)), 400, 'INVALID_BODY', 'total_amount');
      }
      const big = await templateOf({ name: 'Besar', milestones: [{ title: 'Semua', amount_pct: 100 }] });
      expectAppError(await rejection(templateMilestones(db, big.workspaceId, big.id, 50_000_000_001)), 400, 'INVALID_BODY', 'total_amount');
    });

    it("404 NOT_FOUND for an unknown id, a malformed id and another workspace's template", async () => {
      const t = await templateOf(pctBody());
      const other = await createWorkspace();
      for (const [ws, id] of [
        [t.workspaceId, '5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3'],
        [t.workspaceId, 'nope'],
        [other.workspace.id, t.id],
      ] as const) {
        expectAppError(await rejection(templateMilestones(db, ws, id, 1_000_000)), 404, 'NOT_FOUND');
      }
    });
  });
});
