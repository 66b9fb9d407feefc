/**
 * Deal notes (enterprise spec 4.7, 5, 7, 8): add (plain text stored exactly as given; 1 to
 * 5000 characters; refused with 400 INVALID_BODY on `body` when it carries a bank account
 * number, a password or one-time code, an API key or a long random token), list (newest
 * first, paginated), delete; 60 additions per minute per user; roles and scopes; another
 * workspace's deal or note answers 404; note.added / note.deleted in the deal's feed
 * without the note's text.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { countRows } from '../../helpers/auth-signin-util.js';
import { headersOf, workspaceKey } from '../../factories/enterprise.js';
import { insertNote, notesPath } from '../../factories/documents.js';
import { activeDeal, dealWorld, feedRows, type DealData, type DealWorld, type Headers } from '../../factories/deals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { SECRET_MESSAGES } from '../../../shared/documents/secrets.js';

const KEY = '3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a';

function expectError(res: Response, status: number, code: string, field?: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
  if (field) expect(res.body.error.details.fieldErrors, JSON.stringify(res.body.error)).to.have.property(field);
}

describe('enterprise deal notes', () => {
  const client = api();
  afterEach(() => clock.reset());

  const add = (h: Headers, dealId: string, b: object) => client.post(notesPath(dealId)).set(h).send(b);
  const list = (h: Headers, dealId: string, q = '') => client.get(`${notesPath(dealId)}${q}`).set(h);
  const del = (h: Headers, dealId: string, id: string) => client.delete(`${notesPath(dealId)}/${id}`).set(h);

  async function world(): Promise<{ w: DealWorld; d: DealData }> {
    const w = await dealWorld(client);
    return { w, d: await activeDeal(client, w) };
  }

  it('adds a note: 201 { id, deal_id, body, author, created_at }, the text exactly as sent, note.added without the text', async () => {
    const { w, d } = await world();
    clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));
    const text = '  Supplier minta revisi jadwal.\n<b>Tahap 2</b> & "tahap 3" mundur; total Rp 10.000.000 (DL-000123)  ';
    const res = await add(w.h.operator, d.deal.id, { body: text });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.headers['cache-control']).to.equal('private, no-store');
    expect(res.body.data).to.deep.equal({
      id: res.body.data.id,
      deal_id: d.deal.id,
      body: text,
      author: { id: w.users.operator.id, name: w.users.operator.full_name },
      created_at: clock.now().toISOString(),
    });
    expect((await db('deal_notes').where({ id: res.body.data.id }).first()).body).to.equal(text);
    const events = (await feedRows(w.workspace.id, d.deal.id)).filter((e) => e.event === 'note.added');
    expect(events).to.have.length(1);
    expect(events[0]).to.include({ entity_type: 'note', entity_id: res.body.data.id, deal_reference: d.deal.reference, actor_id: w.users.operator.id, livemode: false });
    expect(events[0]!.summary).to.not.include('Supplier');
  });

  it('lists newest first with pagination; viewers and read keys read', async () => {
    const { w, d } = await world();
    const t0 = clock.nowMs();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await insertNote(w.workspace.id, d.deal.id, w.owner.id, `Catatan ${i}`, new Date(t0 + i * 1000)));
    const other = await activeDeal(client, w);
    await insertNote(w.workspace.id, other.deal.id, w.owner.id, 'Catatan lain');
    const res = await list(w.h.viewer, d.deal.id);
    expect(res.status).to.equal(200);
    expect((res.body.data as { id: string }[]).map((n) => n.id)).to.deep.equal([...ids].reverse());
    expect(res.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 3, total_pages: 1 });
    expect(res.body.data[0]).to.deep.include({ body: 'Catatan 2', author: { id: w.owner.id, name: w.owner.full_name } });
    const p2 = await list(w.h.viewer, d.deal.id, '?page=2&limit=2');
    expect((p2.body.data as { id: string }[]).map((n) => n.id)).to.deep.equal([ids[0]]);
    expect(p2.body.pagination).to.deep.equal({ page: 2, limit: 2, total: 3, total_pages: 2 });
    expectError(await list(w.h.viewer, d.deal.id, '?limit=51'), 400, 'INVALID_QUERY');
    const key = await workspaceKey(w.workspace.id, { member: w.ownerMember, user: w.owner }, ['read']);
    const byKey = await list(headersOf({ kind: 'workspace_key', key: key.key }), d.deal.id);
    expect(byKey.status).to.equal(200);
    expect(byKey.body.data).to.have.length(3);
  });

  it('the body rules: missing, empty, blank and over 5000 characters are 400 INVALID_BODY; exactly 5000 is taken', async () => {
    const { w, d } = await world();
    for (const b of [{}, { body: '' }, { body: '   \n ' }, { body: 'x'.repeat(5001) }, { body: 5 }, { body: 'ok', extra: 1 }]) {
      expectError(await add(w.h.operator, d.deal.id, b), 400, 'INVALID_BODY', 'extra' in b ? 'extra' : 'body');
    }
    expect((await add(w.h.operator, d.deal.id, { body: 'x'.repeat(5000) })).status).to.equal(201);
    expect((await add(w.h.operator, d.deal.id, { body: 'x' })).status).to.equal(201);
  });

  it('refuses bank account numbers, passwords, keys and tokens with a message on body; amounts and references pass', async () => {
    const { w, d } = await world();
    const refused: [string, keyof typeof SECRET_MESSAGES][] = [
      ['Transfer ke BCA 1234567890 a.n. PT Maju', 'account_number'],
      ['rekening 123-456-7890-12', 'account_number'],
      ['login portal: password: rahasia', 'password'],
      ['kata sandi: rahasia123', 'password'],
      ['OTP 123456 dari bank', 'password'],
      ['pin: 1234', 'password'],
      ['pakai kunci rpe_abcdefghijklmnop', 'api_key'],
      ['stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc', 'api_key'],
      ['token sesi 9fK2mQ7xL4pR8vN3tB6wY1zA5cD', 'token'],
    ];
    for (const [text, kind] of refused) {
      const res = await add(w.h.operator, d.deal.id, { body: text });
      expectError(res, 400, 'INVALID_BODY', 'body');
      expect(res.body.error.details.fieldErrors.body, text).to.deep.equal([SECRET_MESSAGES[kind]]);
    }
    expect(await countRows('deal_notes', { deal_id: d.deal.id })).to.equal(0);
    expect(await countRows('workspace_events', { workspace_id: w.workspace.id, event: 'note.added' })).to.equal(0);
    for (const text of ['Pembayaran Rp 10.000.000 diterima', 'Lihat DL-000123, dikirim 2024-01-15 10:30', 'Kirim OTP ke pembeli setelah barang diterima']) {
      expect((await add(w.h.operator, d.deal.id, { body: text })).status, text).to.equal(201);
    }
  });

  it('issue 42: account numbers written with dots, dashes, spaces, a bank word or a currency are refused; grouped amounts, dates and short numbers pass', async () => {
    const { w, d } = await world();
    for (const text of ['Rek. 1234.5678.90 a.n. PT Maju', 'BRI 1234-5678-9012', 'Mandiri 1234 5678 9012', 'IDR 1234567890', 'Rp1500000000 ke rekening', 'rekening 0123.456.789']) {
      const res = await add(w.h.operator, d.deal.id, { body: text });
      expectError(res, 400, 'INVALID_BODY', 'body');
      expect(res.body.error.details.fieldErrors.body, text).to.deep.equal([SECRET_MESSAGES.account_number]);
    }
    expect(await countRows('deal_notes', { deal_id: d.deal.id })).to.equal(0);
    const passing = ['Termin 2 Rp 1.500.000.000 dibayar 15.01.2024 pukul 10.30', 'USD 1,000,000.50 (invoice 12345, PO-2024-001)', 'IDR 10 000 000 000 total kontrak', 'Harga Rp 1.500.000-2.000.000 per unit'];
    for (const text of passing) {
      const res = await add(w.h.operator, d.deal.id, { body: text });
      expect(res.status, `${text}: ${JSON.stringify(res.body)}`).to.equal(201);
      expect(res.body.data.body).to.equal(text);
    }
  });

  it('deletes a note: { id, deleted: true }, note.deleted; again, on another deal or malformed: 404', async () => {
    const { w, d } = await world();
    const other = await activeDeal(client, w);
    const id = await insertNote(w.workspace.id, d.deal.id, w.owner.id);
    expectError(await del(w.h.operator, other.deal.id, id), 404, 'NOT_FOUND');
    const res = await del(w.h.operator, d.deal.id, id);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data).to.deep.equal({ id, deleted: true });
    expect(await countRows('deal_notes', { id })).to.equal(0);
    const events = (await feedRows(w.workspace.id, d.deal.id)).filter((e) => e.event === 'note.deleted');
    expect(events).to.have.length(1);
    expect(events[0]).to.include({ entity_type: 'note', entity_id: id, actor_id: w.users.operator.id });
    expectError(await del(w.h.operator, d.deal.id, id), 404, 'NOT_FOUND');
    expectError(await del(w.h.operator, d.deal.id, 'nope'), 404, 'NOT_FOUND');
    expectError(await del(w.h.operator, 'nope', id), 404, 'NOT_FOUND');
  });

  it("another workspace's deal and note answer 404 NOT_FOUND on every route, and nothing of B changes", async () => {
    const a = await world();
    const b = await world();
    const bNote = await insertNote(b.w.workspace.id, b.d.deal.id, b.w.owner.id, 'B secret note');
    const before = await db('deal_notes').orderBy('id');
    const bEvents = await countRows('workspace_events', { workspace_id: b.w.workspace.id });
    expectError(await list(a.w.h.owner, b.d.deal.id), 404, 'NOT_FOUND');
    expectError(await add(a.w.h.owner, b.d.deal.id, { body: 'Milik saya' }), 404, 'NOT_FOUND');
    expectError(await del(a.w.h.owner, b.d.deal.id, bNote), 404, 'NOT_FOUND');
    expectError(await del(a.w.h.owner, a.d.deal.id, bNote), 404, 'NOT_FOUND');
    expectError(await list(a.w.h.owner, randomUUID()), 404, 'NOT_FOUND');
    expectError(await list(a.w.h.owner, 'nope'), 404, 'NOT_FOUND');
    const mine = await list(a.w.h.owner, a.d.deal.id);
    expect(JSON.stringify(mine.body)).to.not.include('B secret note');
    expect(await db('deal_notes').orderBy('id')).to.deep.equal(before);
    expect(await countRows('workspace_events', { workspace_id: b.w.workspace.id })).to.equal(bEvents);
  });

  it('viewers 403 FORBIDDEN on writes; read keys 403 SCOPE_REQUIRED; a read+write key writes as its creator', async () => {
    const { w, d } = await world();
    const id = await insertNote(w.workspace.id, d.deal.id, w.owner.id);
    expectError(await add(w.h.viewer, d.deal.id, { body: 'Tidak boleh' }), 403, 'FORBIDDEN');
    expectError(await del(w.h.viewer, d.deal.id, id), 403, 'FORBIDDEN');
    const read = headersOf({ kind: 'workspace_key', key: (await workspaceKey(w.workspace.id, { member: w.ownerMember, user: w.owner }, ['read'])).key });
    expectError(await add(read, d.deal.id, { body: 'Tidak boleh' }), 403, 'SCOPE_REQUIRED');
    expectError(await del(read, d.deal.id, id), 403, 'SCOPE_REQUIRED');
    expect(await countRows('deal_notes', { deal_id: d.deal.id })).to.equal(1);
    const write = headersOf({ kind: 'workspace_key', key: (await workspaceKey(w.workspace.id, { member: w.ownerMember, user: w.owner }, ['read', 'write'])).key });
    const made = await add(write, d.deal.id, { body: 'Lewat kunci' });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    expect(made.body.data.author).to.deep.equal({ id: w.owner.id, name: w.owner.full_name });
    expect((await del(write, d.deal.id, id)).status).to.equal(200);
  });

  it('Idempotency-Key: the same body replays the first answer and saves once', async () => {
    const { w, d } = await world();
    const keyed = (b: object) => client.post(notesPath(d.deal.id)).set(w.h.operator).set('Idempotency-Key', KEY).send(b);
    const first = await keyed({ body: 'Sekali saja' });
    expect(first.status).to.equal(201);
    const again = await keyed({ body: 'Sekali saja' });
    expect(again.headers['idempotent-replay']).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    expectError(await keyed({ body: 'Lain' }), 422, 'IDEMPOTENCY_KEY_CONFLICT');
    expect(await countRows('deal_notes', { deal_id: d.deal.id })).to.equal(1);
  });

  it('60 notes per minute per user (refused bodies count), then 429 RATE_LIMITED with Retry-After; another user and deletes are not counted', async () => {
    const { w, d } = await world();
    expect((await add(w.h.operator, d.deal.id, { body: 'Pertama' })).status).to.equal(201);
    for (let i = 1; i < 60; i++) expect((await add(w.h.operator, d.deal.id, { body: i % 2 === 0 ? '' : 'pin: 1234' })).status).to.equal(400);
    const res = await add(w.h.operator, d.deal.id, { body: 'Keenam puluh satu' });
    expectError(res, 429, 'RATE_LIMITED');
    expect(Number(res.headers['retry-after'])).to.be.within(1, 60);
    expect((await add(w.h.owner, d.deal.id, { body: 'Orang lain' })).status).to.equal(201);
    const id = await insertNote(w.workspace.id, d.deal.id, w.owner.id);
    expect((await del(w.h.operator, d.deal.id, id)).status).to.equal(200);
    expect(await countRows('deal_notes', { deal_id: d.deal.id })).to.equal(2);
  });
});
