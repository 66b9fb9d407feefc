/**
 * Counterparty verification links (enterprise spec 4.2, 5, 7; decisions D10, 0017):
 * POST /v1/enterprise/counterparties/:id/kyb-invite (the answer, another workspace, a
 * verified counterparty, a new link revoking the old one, the e-mail), the
 * /v1/kyb/invite/:token routes (the first user claims the link, a race of two users,
 * malformed, forged, revoked and expired tokens, which credentials each route takes), the
 * whole application through the link up to the staff decision, and the staff's
 * POST /v1/admin/enterprise/counterparties/:id/verify.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { createUser } from '../../factories/users.js';
import { createUploadRow } from '../../factories/uploads.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, workspaceKey, type Cred } from '../../factories/enterprise.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { decryptSecret } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import { INVITE_TTL_DAYS, tokenOf } from '../../../shared/kyb/invites.js';
import type { MemberRow } from '../../../shared/enterprise/repo.js';
import type { UserRow } from '../../../shared/users/repo.js';

const E = '/v1/enterprise';
const I = '/v1/kyb/invite';
const DAY = 86_400_000;

type Client = ReturnType<typeof api>;
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

function send(client: Client, method: Method, path: string, headers: Record<string, string>, body?: Record<string, unknown>) {
  const req = method === 'GET' ? client.get(path) : method === 'POST' ? client.post(path) : method === 'PATCH' ? client.patch(path) : client.delete(path);
  req.set(headers);
  return body === undefined ? req : req.send(body);
}

function expectError(res: Response, status: number, code: string): void {
  const label = `${res.status} ${JSON.stringify(res.body)}`;
  expect(res.status, label).to.equal(status);
  expect(res.body.success, label).to.equal(false);
  expect(res.body.error.code, label).to.equal(code);
  expect(res.body, label).to.not.have.property('data');
}

function expectOk(res: Response, status = 200): void {
  expect(res.status, `${res.status} ${JSON.stringify(res.body).slice(0, 600)}`).to.equal(status);
  expect(res.body.success).to.equal(true);
}

/** A complete draft of a PT with one director (what the invite PATCH takes, as the workspace PATCH does). */
const COMPLETE = {
  company: { entity_type: 'pt', nib: '9876543210987', npwp: '123456789012345', address: 'Jl. Gatot Subroto 5, Jakarta', industry: 'Logistics', monthly_volume: '100m_to_1b' },
  people: [{ full_name: 'Sari Wulandari', position: 'Direktur Utama', roles: ['director', 'shareholder'], id_type: 'nik', id_number: '3171234567890456', nationality: 'ID', ownership_pct: 70 }],
  bank: { bank_name: 'Bank Mandiri', bank_account_holder: 'PT Pemasok Jaya', account_number: '1300012345678' },
};

const kybInvite = (cpId: string) => `${E}/counterparties/${cpId}/kyb-invite`;

describe('kyb: counterparty verification links', function () {
  this.timeout(30_000);
  const client = api();

  afterEach(() => clock.reset());

  interface Setup {
    workspaceId: string;
    owner: UserRow;
    ownerMember: MemberRow;
    ownerSession: Cred;
    cpId: string;
  }

  /** A workspace (owner with a session) and one counterparty, made through the API. */
  async function setup(cp: { name?: string; email?: string } = {}): Promise<Setup> {
    const { workspace, owner, ownerMember } = await createWorkspace(undefined, 'Acme Logistik');
    const ownerSession = await sessionOf(owner);
    const res = await client.post(`${E}/counterparties`).set(headersOf(ownerSession)).send({ name: cp.name ?? 'PT Pemasok Jaya', ...(cp.email ? { email: cp.email } : {}) });
    expectOk(res, 201);
    return { workspaceId: workspace.id, owner, ownerMember, ownerSession, cpId: res.body.data.id as string };
  }

  interface MadeInvite {
    id: string;
    token: string;
    url: string;
    expires_at: string;
    created_at: string;
    counterparty_id: string;
  }

  async function makeInvite(s: Setup): Promise<MadeInvite> {
    const res = await client.post(kybInvite(s.cpId)).set(headersOf(s.ownerSession)).send({});
    expectOk(res, 201);
    return res.body.data as MadeInvite;
  }

  /** A signed-in user who is not a member of the workspace (the counterparty's person). */
  async function outsider(name = 'Sari Wulandari'): Promise<{ user: UserRow; session: Cred; key: Cred }> {
    const { user } = await createUser({ fullName: name });
    return { user, session: await sessionOf(user), key: await personalKeyOf(user) };
  }

  const staffSession = async () => sessionOf((await createUser({ role: 'admin' })).user);
  const cpRow = async (id: string) => (await db('counterparties').where({ id }).first()) as { kyb_status: string };
  const inviteRow = async (id: string) => (await db('kyb_invites').where({ id }).first()) as { claimed_by: string | null; revoked_at: Date | null };

  /** Fills the draft through the link and attaches every required document (the uploads are the claimant's own). */
  async function completeThroughLink(token: string, who: { user: UserRow; session: Cred }): Promise<void> {
    const h = headersOf(who.session);
    const p = await client.patch(`${I}/${token}`).set(h).send(COMPLETE);
    expectOk(p);
    expect(p.body.data.progress.steps).to.deep.equal({ company: true, people: true, bank: true, documents: false });
    const person = p.body.data.application.people[0].id as string;
    for (const [doc_type, person_id] of [['akta_pendirian'], ['sk_kemenkumham'], ['bank_proof'], ['ktp', person]] as [string, string?][]) {
      const up = await createUploadRow(who.user.id, { purpose: 'kyb' });
      expectOk(await client.post(`${I}/${token}/documents`).set(h).send({ upload_id: up.id, doc_type, person_id }), 201);
    }
  }

  describe('POST /v1/enterprise/counterparties/:id/kyb-invite', () => {
    it('answers 201 { id, counterparty_id, token, url, expires_at, created_at }: a signed token, the dashboard link, 7 days; opens the application as version 1', async () => {
      clock.set(new Date('2026-12-03T08:00:00.000Z'));
      const s = await setup();
      const res = await client.post(kybInvite(s.cpId)).set(headersOf(s.ownerSession)).send({});
      expectOk(res, 201);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      const d = res.body.data;
      expect(d).to.have.all.keys('id', 'counterparty_id', 'token', 'url', 'expires_at', 'created_at');
      expect(d.counterparty_id).to.equal(s.cpId);
      expect(d.token).to.match(new RegExp(`^${d.id}\\.[A-Za-z0-9_-]{43}$`));
      expect(d.url).to.equal(`${config.publicBaseUrl}/kyb/invite/${d.token}`);
      expect(d.created_at).to.equal('2026-12-03T08:00:00.000Z');
      expect(d.expires_at).to.equal('2026-12-10T08:00:00.000Z');
      expect(INVITE_TTL_DAYS).to.equal(7);

      const apps = await db('kyb_applications').where({ counterparty_id: s.cpId });
      expect(apps).to.have.length(1);
      expect(apps[0]).to.include({ version: 1, status: 'draft', legal_name: 'PT Pemasok Jaya', country_code: 'ID', workspace_id: s.workspaceId });
      const events = await client.get(`${E}/events?event=counterparty.kyb_invited`).set(headersOf(s.ownerSession));
      expectOk(events);
      expect(events.body.data).to.have.length(1);
      expect(events.body.data[0]).to.include({ entity_type: 'counterparty', entity_id: s.cpId, livemode: false });
      expect(JSON.stringify(events.body)).to.not.include(d.token);
    });

    it("another workspace's counterparty, an unknown id or a malformed one: 404 NOT_FOUND; nothing is made", async () => {
      const a = await setup({ name: 'PT Milik A' });
      const b = await setup({ name: 'PT Rahasia B', email: 'rahasia@b.example' });
      for (const id of [b.cpId, randomUUID(), 'not-a-uuid']) {
        const res = await client.post(kybInvite(id)).set(headersOf(a.ownerSession)).send({});
        expectError(res, 404, 'NOT_FOUND');
        expect(JSON.stringify(res.body)).to.not.include('PT Rahasia B');
      }
      expect(await db('kyb_invites')).to.deep.equal([]);
      expect(await db('kyb_applications').whereNotNull('counterparty_id')).to.deep.equal([]);
      expect(await db('outbound_emails')).to.deep.equal([]);
    });

    it('a verified counterparty gets no new link: 409 INVALID_STATE; its live link keeps working', async () => {
      const s = await setup();
      const first = await makeInvite(s);
      await db('counterparties').where({ id: s.cpId }).update({ kyb_status: 'verified' });
      expectError(await client.post(kybInvite(s.cpId)).set(headersOf(s.ownerSession)).send({}), 409, 'INVALID_STATE');
      expect(await db('kyb_invites').where({ counterparty_id: s.cpId })).to.have.length(1);
      expect((await inviteRow(first.id)).revoked_at).to.equal(null);
    });

    it("a new link revokes the old one (404 INVITE_INVALID) and is bound to the application's holder: she continues the same application; anyone else 403 INVITE_CLAIMED", async () => {
      const s = await setup();
      const first = await makeInvite(s);
      const alice = await outsider('Alice');
      expectOk(await client.patch(`${I}/${first.token}`).set(headersOf(alice.session)).send({ company: { industry: 'Textiles' } }));

      const second = await makeInvite(s);
      expect(second.id).to.not.equal(first.id);
      expect((await inviteRow(first.id)).revoked_at).to.not.equal(null);
      expect((await inviteRow(second.id)).claimed_by, 'bound at creation').to.equal(alice.user.id);
      expectError(await client.get(`${I}/${first.token}`).set(headersOf(alice.session)), 404, 'INVITE_INVALID');
      expectError(await client.get(`${I}/${first.token}`).set(headersOf((await outsider()).session)), 404, 'INVITE_INVALID');

      // Whoever opens the new link first: it is Alice's already.
      const bob = await outsider('Bob');
      const refused = await client.get(`${I}/${second.token}`).set(headersOf(bob.session));
      expectError(refused, 403, 'INVITE_CLAIMED');
      expect(JSON.stringify(refused.body)).to.not.include('Textiles');
      const got = await client.get(`${I}/${second.token}`).set(headersOf(alice.session));
      expectOk(got);
      expect(got.body.data.application).to.include({ version: 1, status: 'draft', industry: 'Textiles' });
      expect(await db('kyb_applications').where({ counterparty_id: s.cpId })).to.have.length(1);
      expect((await inviteRow(second.id)).claimed_by).to.equal(alice.user.id);
    });

    it("a counterparty with an e-mail address gets the link by e-mail (sealed body naming the workspace and the link, never the counterparty's name); one without gets none", async () => {
      const s = await setup({ email: 'finance@pemasok.example' });
      const inv = await makeInvite(s);
      const rows = (await db('outbound_emails').orderBy('created_at')) as { to_address: string; template: string; subject: string; body_sealed: string; user_id: string | null }[];
      expect(rows).to.have.length(1);
      expect(rows[0]).to.include({ to_address: 'finance@pemasok.example', template: 'kyb-invite', user_id: null });
      expect(rows[0]!.subject).to.include('Acme Logistik');
      const body = decryptSecret(rows[0]!.body_sealed);
      expect(body).to.include(inv.url);
      expect(body).to.include('Acme Logistik');
      expect(body + rows[0]!.subject).to.not.include('Pemasok');
      expect(body).to.include('7');
      expect(await db('outbox').where({ job: 'mail.send' })).to.have.length(1);

      // A second link is mailed again (the first no longer works).
      const again = await makeInvite(s);
      const after = (await db('outbound_emails').orderBy('created_at')) as { body_sealed: string }[];
      expect(after).to.have.length(2);
      expect(decryptSecret(after[1]!.body_sealed)).to.include(again.url);

      const quiet = await setup({ name: 'PT Tanpa Surel' });
      await makeInvite(quiet);
      expect(await db('outbound_emails')).to.have.length(2);
    });

    it('needs an admin with a session: finance 403 FORBIDDEN, a personal key 403 KEY_NOT_ALLOWED, a workspace key 403 KEY_NOT_ALLOWED', async () => {
      const s = await setup();
      const finance = await addMember(s.workspaceId, 'finance');
      expectError(await client.post(kybInvite(s.cpId)).set(headersOf(await sessionOf(finance.user))).send({}), 403, 'FORBIDDEN');
      expectError(await client.post(kybInvite(s.cpId)).set(headersOf(await personalKeyOf(s.owner))).send({}), 403, 'KEY_NOT_ALLOWED');
      const wk = await workspaceKey(s.workspaceId, { member: s.ownerMember, user: s.owner }, ['read', 'write']);
      expectError(await client.post(kybInvite(s.cpId)).set(headersOf({ kind: 'workspace_key', key: wk.key })).send({}), 403, 'KEY_NOT_ALLOWED');
      const admin = await addMember(s.workspaceId, 'admin');
      expectOk(await client.post(kybInvite(s.cpId)).set(headersOf(await sessionOf(admin.user))).send({}), 201);
    });
  });

  describe('/v1/kyb/invite/:token', () => {
    it('the first user to open the link claims it and gets the full view; they may open it again; another user 403 INVITE_CLAIMED on every route', async () => {
      const s = await setup();
      const inv = await makeInvite(s);
      const sari = await outsider('Sari Wulandari');
      const res = await client.get(`${I}/${inv.token}`).set(headersOf(sari.session));
      expectOk(res);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      const d = res.body.data;
      expect(d.view).to.equal('full');
      expect(d.subject).to.deep.include({ type: 'counterparty', id: s.cpId, name: 'PT Pemasok Jaya', kyb_status: 'not_started', is_sandbox: null });
      expect(d.subject.invited_by).to.deep.equal({ id: s.owner.id, name: s.owner.full_name });
      expect(d.application).to.include({ version: 1, status: 'draft', legal_name: 'PT Pemasok Jaya' });
      expect(d.can_edit).to.equal(true);
      expect(d.review.due_by).to.equal(null);
      const row = await db('kyb_invites').where({ id: inv.id }).first();
      expect(row.claimed_by).to.equal(sari.user.id);
      expect(row.claimed_at).to.be.instanceOf(Date);
      expectOk(await client.get(`${I}/${inv.token}`).set(headersOf(sari.session)));

      const other = await outsider('Someone Else');
      const attempts: [Method, string, Cred, Record<string, unknown> | undefined][] = [
        ['GET', `${I}/${inv.token}`, other.session, undefined],
        ['PATCH', `${I}/${inv.token}`, other.session, { company: { industry: 'Mine now' } }],
        ['POST', `${I}/${inv.token}/documents`, other.key, { upload_id: (await createUploadRow(other.user.id, { purpose: 'kyb' })).id, doc_type: 'bank_proof' }],
        ['POST', `${I}/${inv.token}/submit`, other.key, {}],
        ['GET', `${I}/${inv.token}/documents/${randomUUID()}/url`, other.key, undefined],
        ['DELETE', `${I}/${inv.token}/documents/${randomUUID()}`, other.key, undefined],
      ];
      for (const [method, path, cred, body] of attempts) {
        const r = await send(client, method, path, headersOf(cred), body);
        expectError(r, 403, 'INVITE_CLAIMED');
        expect(JSON.stringify(r.body), `${method} ${path}`).to.not.include('PT Pemasok Jaya');
      }
      // The upload route refuses too (the link is checked before the file is read).
      expectError(await client.post(`${I}/${inv.token}/uploads`).set(headersOf(other.key)).attach('file', Buffer.from('%PDF-1.4'), { filename: 'a.pdf', contentType: 'application/pdf' }), 403, 'INVITE_CLAIMED');
      expect((await db('kyb_applications').where({ counterparty_id: s.cpId }).first()).industry).to.equal(null);
      expect((await inviteRow(inv.id)).claimed_by).to.equal(sari.user.id);
    });

    it('two users racing to claim one link: exactly one 200 and one 403 INVITE_CLAIMED, and the row names the winner', async () => {
      const s = await setup();
      for (let round = 0; round < 5; round++) {
        // A fresh start each round: a re-issued link would be bound to the last round's winner.
        const made = await client.post(kybInvite(s.cpId)).set(headersOf(s.ownerSession)).send({ fresh_start: true });
        expectOk(made, 201);
        const inv = made.body.data as MadeInvite;
        const [a, b] = [await outsider(`Racer A${round}`), await outsider(`Racer B${round}`)];
        const [ra, rb] = await Promise.all([client.get(`${I}/${inv.token}`).set(headersOf(a.session)), client.get(`${I}/${inv.token}`).set(headersOf(b.session))]);
        const statuses = [ra.status, rb.status].sort();
        expect(statuses, `${JSON.stringify(ra.body)} ${JSON.stringify(rb.body)}`).to.deep.equal([200, 403]);
        const loser = ra.status === 403 ? ra : rb;
        expect(loser.body.error.code).to.equal('INVITE_CLAIMED');
        const winner = ra.status === 200 ? a : b;
        expect((await inviteRow(inv.id)).claimed_by).to.equal(winner.user.id);
      }
    });

    it('malformed, forged, unknown and revoked tokens: 404 INVITE_INVALID; nothing is claimed', async () => {
      const s = await setup();
      const inv = await makeInvite(s);
      const { session } = await outsider();
      const [id, sig] = inv.token.split('.') as [string, string];
      const flip = (c: string) => (c === 'A' ? 'B' : 'A');
      const malformed = ['abc', id, `${id}.`, `${id}.${sig.slice(1)}`, `${id}.${sig}x`, `${id}.${sig}.${sig}`, `${id.toUpperCase()}.${sig}`, `${id}_${sig}`, `${id}.${sig.slice(0, 42)}=`];
      const forged = [
        `${id}.${flip(sig[0]!)}${sig.slice(1)}`,
        `${id}.${sig.slice(0, 20)}${flip(sig[20]!)}${sig.slice(21)}`,
        `${id}.${sig.slice(0, 42)}${flip(sig[42]!)}`,
        // The last character's two low bits are base64url padding: a change there must not pass either.
        `${id}.${sig.slice(0, 42)}${'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(sig[42]!) ^ 1]}`,
        // Another invite's id with this one's signature, and a correctly signed id that names no invite.
        `${randomUUID()}.${sig}`,
        tokenOf(randomUUID()),
      ];
      for (const token of [...malformed, ...forged]) {
        const res = await client.get(`${I}/${encodeURIComponent(token)}`).set(headersOf(session));
        expectError(res, 404, 'INVITE_INVALID');
        expect(res.headers['cache-control'], token).to.equal('private, no-store');
      }
      expect((await inviteRow(inv.id)).claimed_by).to.equal(null);
      // The genuine token still works.
      expectOk(await client.get(`${I}/${inv.token}`).set(headersOf(session)));
    });

    it(`expires after ${INVITE_TTL_DAYS} days: 410 INVITE_EXPIRED for its claimant and for anyone else, on every route; a new link works`, async () => {
      const s = await setup();
      const inv = await makeInvite(s);
      const sari = await outsider();
      expectOk(await client.get(`${I}/${inv.token}`).set(headersOf(sari.session)));

      clock.advance(INVITE_TTL_DAYS * DAY - 1000);
      // Sessions idle out long before a week: sign in again at the new time.
      const still = await sessionOf(sari.user);
      expectOk(await client.get(`${I}/${inv.token}`).set(headersOf(still)));

      clock.advance(2000);
      const late = await sessionOf(sari.user);
      expectError(await client.get(`${I}/${inv.token}`).set(headersOf(late)), 410, 'INVITE_EXPIRED');
      expectError(await client.patch(`${I}/${inv.token}`).set(headersOf(late)).send({ company: { industry: 'Late' } }), 410, 'INVITE_EXPIRED');
      expectError(await client.post(`${I}/${inv.token}/submit`).set(headersOf(sari.key)).send({}), 410, 'INVITE_EXPIRED');
      expectError(await client.post(`${I}/${inv.token}/documents`).set(headersOf(sari.key)).send({ upload_id: randomUUID(), doc_type: 'bank_proof' }), 410, 'INVITE_EXPIRED');
      expectError(await client.get(`${I}/${inv.token}`).set(headersOf(await sessionOf((await createUser()).user))), 410, 'INVITE_EXPIRED');

      // A new link (bound to Sari, who holds the application) works, and expires the same way.
      const again = await client.post(kybInvite(s.cpId)).set(headersOf(await sessionOf(s.owner))).send({});
      expectOk(again, 201);
      expectOk(await client.get(`${I}/${again.body.data.token}`).set(headersOf(await sessionOf(sari.user))));
      clock.advance(INVITE_TTL_DAYS * DAY + 1000);
      expectError(await client.get(`${I}/${again.body.data.token}`).set(headersOf(await sessionOf(sari.user))), 410, 'INVITE_EXPIRED');

      // An unclaimed link expires the same way.
      const fresh = await client.post(kybInvite(s.cpId)).set(headersOf(await sessionOf(s.owner))).send({ fresh_start: true });
      expectOk(fresh, 201);
      clock.advance(INVITE_TTL_DAYS * DAY + 1000);
      const newcomer = await outsider();
      expectError(await client.get(`${I}/${fresh.body.data.token}`).set(headersOf(newcomer.session)), 410, 'INVITE_EXPIRED');
      expect((await inviteRow(fresh.body.data.id)).claimed_by).to.equal(null);
      clock.reset();
    });

    it('GET and PATCH are dashboard only (personal key 403 KEY_NOT_ALLOWED, nothing claimed); uploads, documents, links, removal and submit take a personal key', async () => {
      const s = await setup();
      const inv = await makeInvite(s);
      const sari = await outsider();
      const key = headersOf(sari.key);
      expectError(await client.get(`${I}/${inv.token}`).set(key), 403, 'KEY_NOT_ALLOWED');
      expectError(await client.patch(`${I}/${inv.token}`).set(key).send({ company: { industry: 'Logistics' } }), 403, 'KEY_NOT_ALLOWED');
      expect((await inviteRow(inv.id)).claimed_by, 'a refused GET claims nothing').to.equal(null);

      // The upload route passes access with the key (no file here: 400 INVALID_BODY; the uploads tests send real files).
      const up = await client.post(`${I}/${inv.token}/uploads`).set(key);
      expectError(up, 400, 'INVALID_BODY');
      expect((await inviteRow(inv.id)).claimed_by, 'the key user claimed the link').to.equal(sari.user.id);

      const upload = await createUploadRow(sari.user.id, { purpose: 'kyb' });
      const att = await client.post(`${I}/${inv.token}/documents`).set(key).send({ upload_id: upload.id, doc_type: 'bank_proof' });
      expectOk(att, 201);
      expect(att.body.data.view).to.equal('full');
      const docId = att.body.data.application.documents[0].id as string;
      const link = await client.get(`${I}/${inv.token}/documents/${docId}/url`).set(key);
      expectOk(link);
      expect(link.body.data).to.have.all.keys('url', 'expires_at');
      expectError(await client.post(`${I}/${inv.token}/submit`).set(key).send({}), 400, 'APPLICATION_INCOMPLETE');
      const del = await client.delete(`${I}/${inv.token}/documents/${docId}`).set(key);
      expectOk(del);
      expect(del.body.data.application.documents).to.deep.equal([]);
    });

    it('a workspace key (rpe_) on any /v1/kyb route: 401 WORKSPACE_KEY_ONLY', async () => {
      const s = await setup();
      const inv = await makeInvite(s);
      const wk = headersOf({ kind: 'workspace_key', key: (await workspaceKey(s.workspaceId, { member: s.ownerMember, user: s.owner }, ['read', 'write'])).key });
      const routes: [Method, string, Record<string, unknown> | undefined][] = [
        ['GET', `${I}/${inv.token}`, undefined],
        ['PATCH', `${I}/${inv.token}`, { company: { industry: 'x' } }],
        ['POST', `${I}/${inv.token}/uploads`, {}],
        ['POST', `${I}/${inv.token}/documents`, { upload_id: randomUUID(), doc_type: 'bank_proof' }],
        ['DELETE', `${I}/${inv.token}/documents/${randomUUID()}`, undefined],
        ['GET', `${I}/${inv.token}/documents/${randomUUID()}/url`, undefined],
        ['POST', `${I}/${inv.token}/submit`, {}],
      ];
      for (const [method, path, body] of routes) expectError(await send(client, method, path, wk, body), 401, 'WORKSPACE_KEY_ONLY');
      expect((await inviteRow(inv.id)).claimed_by).to.equal(null);
      // And without any credential: 401 UNAUTHORIZED.
      for (const [method, path, body] of routes) expectError(await send(client, method, path, {}, body), 401, 'UNAUTHORIZED');
    });

    it('the whole application through the link: submit (counterparty pending), locked (409 APPLICATION_LOCKED), staff approve (verified); the claimant hears the outcome', async () => {
      const s = await setup();
      const inv = await makeInvite(s);
      const sari = await outsider();
      const h = headersOf(sari.session);
      expectOk(await client.get(`${I}/${inv.token}`).set(h));
      await completeThroughLink(inv.token, sari);

      const ready = await client.get(`${I}/${inv.token}`).set(h);
      expect(ready.body.data.progress).to.deep.include({ complete: true, done: 4, missing_documents: [] });
      const bank = ready.body.data.application.bank;
      expect(bank).to.deep.equal({ bank_name: 'Bank Mandiri', bank_account_holder: 'PT Pemasok Jaya', account_number_last4: '5678', has_account_number: true });
      expect(JSON.stringify(ready.body)).to.not.include('1300012345678').and.not.include('3171234567890456');

      const sub = await client.post(`${I}/${inv.token}/submit`).set(h).send({});
      expectOk(sub);
      expect(sub.body.data.application.status).to.equal('submitted');
      expect(sub.body.data.subject.kyb_status).to.equal('pending');
      expect(sub.body.data.can_edit).to.equal(false);
      expect(sub.body.data.review.due_by).to.be.a('string');
      expect((await cpRow(s.cpId)).kyb_status).to.equal('pending');
      const listed = await client.get(`${E}/counterparties`).set(headersOf(s.ownerSession));
      expect((listed.body.data as { id: string; kyb_status: string }[]).find((c) => c.id === s.cpId)?.kyb_status).to.equal('pending');

      // Locked once submitted: every edit through the link.
      expectError(await client.patch(`${I}/${inv.token}`).set(h).send({ company: { industry: 'Changed' } }), 409, 'APPLICATION_LOCKED');
      const extra = await createUploadRow(sari.user.id, { purpose: 'kyb' });
      expectError(await client.post(`${I}/${inv.token}/documents`).set(h).send({ upload_id: extra.id, doc_type: 'akta_perubahan' }), 409, 'APPLICATION_LOCKED');
      expectError(await client.delete(`${I}/${inv.token}/documents/${sub.body.data.application.documents[0].id}`).set(h), 409, 'APPLICATION_LOCKED');
      expectError(await client.post(`${I}/${inv.token}/submit`).set(h).send({}), 409, 'APPLICATION_LOCKED');

      const staff = await staffSession();
      const ap = await client.post(`/v1/admin/enterprise/kyb/${sub.body.data.application.id}/approve`).set(headersOf(staff)).send({ risk_tier: 'low' });
      expectOk(ap);
      expect(ap.body.data.subject).to.include({ type: 'counterparty', id: s.cpId, kyb_status: 'verified' });
      expect(ap.body.data.application).to.include({ status: 'approved', risk_tier_assigned: 'low' });
      expect((await cpRow(s.cpId)).kyb_status).to.equal('verified');
      // A counterparty's approval leaves the workspace as it was (still a sandbox, its own KYB untouched).
      expect(await db('workspaces').where({ id: s.workspaceId }).first()).to.include({ is_sandbox: true, kyb_status: 'not_started' });

      const after = await client.get(`${I}/${inv.token}`).set(h);
      expect(after.body.data.application.status).to.equal('approved');
      expect(after.body.data.subject.kyb_status).to.equal('verified');
      expect(after.body.data.can_edit).to.equal(false);
      expectError(await client.patch(`${I}/${inv.token}`).set(h).send({ company: { industry: 'Changed' } }), 409, 'APPLICATION_LOCKED');
      expectError(await client.post(kybInvite(s.cpId)).set(headersOf(s.ownerSession)).send({}), 409, 'INVALID_STATE');
      const mail = await db('outbound_emails').where({ user_id: sari.user.id });
      expect(mail, 'the claimant is told the outcome').to.have.length(1);
    });

    it('staff request changes on a counterparty: it stays pending and a new draft version opens with the notes and the documents; the link edits and resubmits it', async () => {
      const s = await setup();
      const inv = await makeInvite(s);
      const sari = await outsider();
      const h = headersOf(sari.session);
      await completeThroughLink(inv.token, sari);
      const sub = await client.post(`${I}/${inv.token}/submit`).set(h).send({});
      expectOk(sub);

      const staff = await staffSession();
      const rc = await client
        .post(`/v1/admin/enterprise/kyb/${sub.body.data.application.id}/request-changes`)
        .set(headersOf(staff))
        .send({ change_requests: [{ field: 'company.address', note: 'Use the registered address from the deed' }] });
      expectOk(rc);
      expect(rc.body.data.application.status).to.equal('changes_requested');
      expect(rc.body.data.subject.kyb_status).to.equal('pending');
      expect(rc.body.data.next_version).to.include({ version: 2, status: 'draft' });
      expect((await cpRow(s.cpId)).kyb_status).to.equal('pending');

      const v2 = await client.get(`${I}/${inv.token}`).set(h);
      expectOk(v2);
      const d = v2.body.data;
      expect(d.application).to.include({ version: 2, status: 'draft', id: rc.body.data.next_version.id, address: COMPLETE.company.address });
      expect(d.application.change_requests).to.deep.equal([{ field: 'company.address', note: 'Use the registered address from the deed' }]);
      expect(d.application.documents).to.have.length(4);
      expect(d.subject.kyb_status).to.equal('pending');
      expect(d.can_edit).to.equal(true);
      expect((d.history as { version: number; status: string }[]).map((v) => [v.version, v.status])).to.deep.include.members([
        [1, 'changes_requested'],
        [2, 'draft'],
      ]);

      expectOk(await client.patch(`${I}/${inv.token}`).set(h).send({ company: { address: 'Jl. Gatot Subroto Kav. 5, Jakarta Selatan' } }));
      const again = await client.post(`${I}/${inv.token}/submit`).set(h).send({});
      expectOk(again);
      expect(again.body.data.application).to.include({ version: 2, status: 'submitted' });
      expect((await cpRow(s.cpId)).kyb_status).to.equal('pending');
    });
  });

  describe('POST /v1/admin/enterprise/counterparties/:id/verify', () => {
    it('verifies: { counterparty } verified, event counterparty.verified with actor_label and no actor; 409 INVALID_STATE the second time', async () => {
      const s = await setup();
      const staff = await staffSession();
      const res = await client.post(`/v1/admin/enterprise/counterparties/${s.cpId}/verify`).set(headersOf(staff)).send({ note: 'Checked by phone' });
      expectOk(res);
      expect(res.body.data.counterparty).to.include({ id: s.cpId, name: 'PT Pemasok Jaya', kyb_status: 'verified' });
      expect((await cpRow(s.cpId)).kyb_status).to.equal('verified');

      const feed = await client.get(`${E}/events?event=counterparty.verified`).set(headersOf(s.ownerSession));
      expectOk(feed);
      expect(feed.body.data).to.have.length(1);
      const ev = feed.body.data[0];
      expect(ev).to.include({ event: 'counterparty.verified', entity_type: 'counterparty', entity_id: s.cpId, actor: null, livemode: false });
      expect(ev.actor_label).to.be.a('string').and.not.equal('');
      expect(JSON.stringify(ev)).to.not.include('Checked by phone');
      expect(await db('staff_audit').where({ action: 'counterparty.verified', target_id: s.cpId })).to.have.length(1);

      expectError(await client.post(`/v1/admin/enterprise/counterparties/${s.cpId}/verify`).set(headersOf(staff)).send({}), 409, 'INVALID_STATE');
      expectError(await client.post(`/v1/admin/enterprise/counterparties/${randomUUID()}/verify`).set(headersOf(staff)).send({}), 404, 'NOT_FOUND');
    });

    it('a submitted application is approved with it (standard tier); its link is revoked (404 INVITE_INVALID)', async () => {
      const s = await setup();
      const inv = await makeInvite(s);
      const sari = await outsider();
      await completeThroughLink(inv.token, sari);
      const sub = await client.post(`${I}/${inv.token}/submit`).set(headersOf(sari.session)).send({});
      expectOk(sub);
      expectOk(await client.post(`/v1/admin/enterprise/counterparties/${s.cpId}/verify`).set(headersOf(await staffSession())).send({}));
      const app = await db('kyb_applications').where({ id: sub.body.data.application.id }).first();
      expect(app).to.include({ status: 'approved', risk_tier_assigned: 'standard' });
      expectError(await client.get(`${I}/${inv.token}`).set(headersOf(sari.session)), 404, 'INVITE_INVALID');
      expect((await db('counterparties').where({ id: s.cpId }).first()).kyb_status).to.equal('verified');
    });

    it('verifying a counterparty whose application is a draft revokes the link: a later submit cannot lower it from verified', async () => {
      const s = await setup();
      const inv = await makeInvite(s);
      const sari = await outsider();
      await completeThroughLink(inv.token, sari);
      expectOk(await client.post(`/v1/admin/enterprise/counterparties/${s.cpId}/verify`).set(headersOf(await staffSession())).send({}));
      expectError(await client.post(`${I}/${inv.token}/submit`).set(headersOf(sari.session)).send({}), 404, 'INVITE_INVALID');
      expect((await db('counterparties').where({ id: s.cpId }).first()).kyb_status).to.equal('verified');
    });

    it('not staff: 403 FORBIDDEN (the workspace owner, with a session or a personal key); nothing changes', async () => {
      const s = await setup();
      for (const cred of [s.ownerSession, await personalKeyOf(s.owner), (await outsider()).session]) {
        expectError(await client.post(`/v1/admin/enterprise/counterparties/${s.cpId}/verify`).set(headersOf(cred)).send({}), 403, 'FORBIDDEN');
      }
      expect((await cpRow(s.cpId)).kyb_status).to.equal('not_started');
      expect(await db('workspace_events').where({ event: 'counterparty.verified' })).to.deep.equal([]);
    });
  });
});
