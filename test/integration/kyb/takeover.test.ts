/**
 * Issue 42, point 1: a counterparty's identity data stays with the counterparty (decision
 * 0017, "Issue 42" addendum). Black-box through HTTP with the real upload worker:
 * - the takeover: the representative claims the link, enters a director with a NIK and the
 *   bank account, uploads the director's KTP; the workspace admin re-issues the link and
 *   opens it with his own account: refused (the link is bound to the representative), no
 *   document link, no field of hers; she goes on with the new link;
 * - a fresh start (`fresh_start: true`): the next claimant, the admin himself here, gets an
 *   application with nothing of hers (no people, numbers, bank, documents, history), her
 *   old document ids answer 404 and her files are let go; refused while staff review; after
 *   a decision the decided version stays for staff and version n+1 opens empty;
 * - an edit already past the link check when a fresh start lands writes nothing;
 * - the invite e-mail: the platform's words and the workspace's display name as a plain
 *   name (no URL, e-mail address, line break or control character, at most 60 characters),
 *   never the counterparty's name;
 * - the daily cap: INVITES_PER_WORKSPACE_PER_DAY links a workspace may make in 24 hours;
 *   the next is 429 RATE_LIMITED with Retry-After, and nothing is made, changed or sent.
 */
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import * as H from '../../helpers/hostile-files.js';
import { createUser } from '../../factories/users.js';
import { createUploadRow } from '../../factories/uploads.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, type Cred } from '../../factories/enterprise.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { decryptSecret } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import { AppError } from '../../../shared/errors.js';
import { INVITE_TTL_DAYS, INVITES_PER_WORKSPACE_PER_DAY, openInvite } from '../../../shared/kyb/invites.js';
import * as kyb from '../../../shared/kyb/service.js';
import type { UserRow } from '../../../shared/users/repo.js';
import { pathOf, startUploads, type Harness } from '../uploads/support.js';

const E = '/v1/enterprise';
const I = '/v1/kyb/invite';
const HOUR = 3_600_000;

/** What the representative enters: none of it may reach anyone else through a link. */
const DIRECTOR = 'Budi Hartono Wiranegara';
const NIK = '3171098765432109';
const ACCOUNT = '7788990011223';
const ADDRESS = 'Jl. Rahasia Pemasok No. 9, Surabaya';
const DRAFT = {
  company: { entity_type: 'pt', nib: '9876543210987', npwp: '123456789012345', address: ADDRESS, industry: 'Logistics', monthly_volume: '100m_to_1b' },
  people: [{ full_name: DIRECTOR, position: 'Direktur Utama', roles: ['director'], id_type: 'nik', id_number: NIK, nationality: 'ID', ownership_pct: 80 }],
  bank: { bank_name: 'Bank Mandiri', bank_account_holder: 'Rekening Atas Nama Budi', account_number: ACCOUNT },
};
/** Text of hers that must not appear in any answer to someone else (the company's name is the counterparty's, which the workspace typed). */
const HERS = [DIRECTOR, NIK, ACCOUNT, ADDRESS, 'Rekening Atas Nama Budi', 'Bank Mandiri', '123456789012345', '9876543210987', 'Dewi Kusumawati'];

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

function expectNothingOfHers(res: Response, what: string): void {
  const text = JSON.stringify(res.body);
  for (const s of HERS) expect(text, `${what}: ${s}`).to.not.include(s);
}

describe('kyb: a counterparty’s identity data stays with the counterparty (issue 42)', function () {
  this.timeout(60_000);
  let harness: Harness;
  const client = api();

  before(async () => {
    harness = await startUploads();
  });
  after(async () => {
    await harness.stop();
  });
  beforeEach(() => harness.clear());
  afterEach(() => clock.reset());

  interface Setup {
    workspaceId: string;
    owner: UserRow;
    admin: { user: UserRow; session: Cred };
    cpId: string;
  }

  /** A workspace (owner, and an admin who will try the takeover) and one counterparty with an e-mail address. */
  async function setup(name = 'Acme Logistik'): Promise<Setup> {
    const { workspace, owner } = await createWorkspace(undefined, name);
    const ownerSession = await sessionOf(owner);
    const cp = await client.post(`${E}/counterparties`).set(headersOf(ownerSession)).send({ name: 'PT Pemasok Rahasia', email: 'finance@pemasok.example' });
    expectOk(cp, 201);
    const admin = await addMember(workspace.id, 'admin');
    return { workspaceId: workspace.id, owner, admin: { user: admin.user, session: await sessionOf(admin.user) }, cpId: cp.body.data.id as string };
  }

  const invite = (s: Setup, body: Record<string, unknown> = {}) => client.post(`${E}/counterparties/${s.cpId}/kyb-invite`).set(headersOf(s.admin.session)).send(body);

  async function inviteOk(s: Setup, body: Record<string, unknown> = {}): Promise<{ id: string; token: string }> {
    const res = await invite(s, body);
    expectOk(res, 201);
    expect(res.body.data).to.have.all.keys('id', 'counterparty_id', 'token', 'url', 'expires_at', 'created_at');
    return res.body.data as { id: string; token: string };
  }

  async function representative(): Promise<{ user: UserRow; session: Cred; key: Cred }> {
    const { user } = await createUser({ fullName: 'Dewi Kusumawati' });
    return { user, session: await sessionOf(user), key: await personalKeyOf(user) };
  }

  /** She claims the link, fills people, bank and company, uploads the director's KTP (a real JPEG through the sanitiser) and attaches it. */
  async function fillAsRepresentative(token: string, rep: { session: Cred }): Promise<{ ktpDocId: string; uploadId: string; personId: string }> {
    const h = headersOf(rep.session);
    expectOk(await client.get(`${I}/${token}`).set(h));
    const p = await client.patch(`${I}/${token}`).set(h).send(DRAFT);
    expectOk(p);
    const personId = p.body.data.application.people[0].id as string;
    const up = await client.post(`${I}/${token}/uploads`).set(h).attach('file', await H.photo('jpeg'), { filename: 'ktp-budi.jpg', contentType: 'image/jpeg' });
    expectOk(up, 201);
    const att = await client.post(`${I}/${token}/documents`).set(h).send({ upload_id: up.body.data.upload_id, doc_type: 'ktp', person_id: personId });
    expectOk(att, 201);
    const ktp = (att.body.data.application.documents as { id: string; doc_type: string }[]).find((d) => d.doc_type === 'ktp')!;
    return { ktpDocId: ktp.id, uploadId: up.body.data.upload_id as string, personId };
  }

  const fetchLinked = (url: string, cred: Cred) =>
    client
      .get(pathOf(url))
      .set(headersOf(cred))
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });

  describe('re-issuing a link binds it to the person who holds the application', () => {
    it('the takeover: the admin re-issues the link and opens it with his own account: 403 INVITE_CLAIMED on every route, no document link, nothing of hers; she goes on with the new link', async () => {
      const s = await setup();
      const first = await inviteOk(s);
      const rep = await representative();
      const { ktpDocId } = await fillAsRepresentative(first.token, rep);
      const hersLink = await client.get(`${I}/${first.token}/documents/${ktpDocId}/url`).set(headersOf(rep.session));
      expectOk(hersLink);

      const second = await inviteOk(s);
      const mine = headersOf(s.admin.session);
      const adminKey = headersOf(await personalKeyOf(s.admin.user));
      const upload = await createUploadRow(s.admin.user.id, { purpose: 'kyb' });
      const tries: [string, () => Promise<Response>][] = [
        ['GET', () => client.get(`${I}/${second.token}`).set(mine)],
        ['PATCH', () => client.patch(`${I}/${second.token}`).set(mine).send({ company: { industry: 'Taken over' } })],
        ['document link (session)', () => client.get(`${I}/${second.token}/documents/${ktpDocId}/url`).set(mine)],
        ['document link (personal key)', () => client.get(`${I}/${second.token}/documents/${ktpDocId}/url`).set(adminKey)],
        ['attach', () => client.post(`${I}/${second.token}/documents`).set(adminKey).send({ upload_id: upload.id, doc_type: 'bank_proof' })],
        ['remove', () => client.delete(`${I}/${second.token}/documents/${ktpDocId}`).set(adminKey)],
        ['submit', () => client.post(`${I}/${second.token}/submit`).set(adminKey).send({})],
        ['upload', () => client.post(`${I}/${second.token}/uploads`).set(adminKey).attach('file', Buffer.from('%PDF-1.4'), { filename: 'x.pdf', contentType: 'application/pdf' })],
      ];
      for (const [what, call] of tries) {
        const res = await call();
        expectError(res, 403, 'INVITE_CLAIMED');
        expectNothingOfHers(res, what);
      }
      // The old link is revoked for everyone; her signed file link is hers alone.
      expectError(await client.get(`${I}/${first.token}`).set(mine), 404, 'INVITE_INVALID');
      const stolen = await fetchLinked(hersLink.body.data.url as string, s.admin.session);
      expect(stolen.status).to.equal(403);
      expect(JSON.parse((stolen.body as Buffer).toString('utf8')).error.code).to.equal('LINK_NOT_YOURS');
      // The owner fares no better.
      expectError(await client.get(`${I}/${second.token}`).set(headersOf(await sessionOf(s.owner))), 403, 'INVITE_CLAIMED');

      // Nothing changed, and the new link is hers.
      const row = await db('kyb_applications').where({ counterparty_id: s.cpId }).first();
      expect(row).to.include({ industry: 'Logistics', holder_id: rep.user.id });
      expect(await db('kyb_documents').where({ application_id: row.id })).to.have.length(1);
      const back = await client.get(`${I}/${second.token}`).set(headersOf(rep.session));
      expectOk(back);
      expect(back.body.data.application.people[0]).to.include({ full_name: DIRECTOR, id_number_last4: NIK.slice(-4) });
      const again = await client.get(`${I}/${second.token}/documents/${ktpDocId}/url`).set(headersOf(rep.session));
      expectOk(again);
      expect((await fetchLinked(again.body.data.url as string, rep.session)).status).to.equal(200);
    });
  });

  describe('fresh_start: true', () => {
    it('gives the next claimant (the admin himself) an application without any of her data: no people, numbers, bank, company details, documents or history; her document ids 404; her files are let go', async () => {
      const s = await setup();
      const first = await inviteOk(s);
      const rep = await representative();
      const { ktpDocId, uploadId } = await fillAsRepresentative(first.token, rep);
      const before = await db('kyb_applications').where({ counterparty_id: s.cpId });

      const fresh = await inviteOk(s, { fresh_start: true });
      const mine = headersOf(s.admin.session);
      const view = await client.get(`${I}/${fresh.token}`).set(mine);
      expectOk(view);
      expectNothingOfHers(view, 'fresh view');
      const app = view.body.data.application;
      expect(app).to.include({ version: 1, status: 'draft', legal_name: 'PT Pemasok Rahasia', country_code: 'ID', entity_type: null, nib: null, npwp: null, address: null, industry: null });
      expect(app.people).to.deep.equal([]);
      expect(app.documents).to.deep.equal([]);
      expect(app.change_requests).to.deep.equal([]);
      expect(app.bank).to.deep.equal({ bank_name: null, bank_account_holder: null, account_number_last4: null, has_account_number: false });
      expect(view.body.data.history).to.have.length(1);
      expectError(await client.get(`${I}/${fresh.token}/documents/${ktpDocId}/url`).set(mine), 404, 'NOT_FOUND');

      // Stored: nothing of hers left on the draft, her KTP's file unbound for the daily purge; nobody else holds it now.
      const rows = await db('kyb_applications').where({ counterparty_id: s.cpId });
      expect(rows.map((r: { id: string }) => r.id)).to.deep.equal(before.map((r: { id: string }) => r.id));
      expect(rows[0]).to.include({ holder_id: s.admin.user.id, bank_account_number_sealed: null, bank_account_last4: null });
      expect(rows[0].people).to.deep.equal([]);
      expect(await db('uploads').where({ id: uploadId }).first()).to.include({ bound_kind: null, bound_id: null });

      // Her old link is revoked; the new one is the admin's.
      expectError(await client.get(`${I}/${first.token}`).set(headersOf(rep.session)), 404, 'INVITE_INVALID');
      expectError(await client.get(`${I}/${fresh.token}`).set(headersOf(rep.session)), 403, 'INVITE_CLAIMED');
    });

    it('refused while staff review her submission (409 APPLICATION_LOCKED, nothing made or sent); after a rejection the decided version stays for staff and version 2 opens empty, its history without hers', async () => {
      const s = await setup();
      const first = await inviteOk(s);
      const rep = await representative();
      const { personId } = await fillAsRepresentative(first.token, rep);
      for (const doc_type of ['akta_pendirian', 'sk_kemenkumham', 'bank_proof']) {
        const up = await createUploadRow(rep.user.id, { purpose: 'kyb' });
        expectOk(await client.post(`${I}/${first.token}/documents`).set(headersOf(rep.session)).send({ upload_id: up.id, doc_type }), 201);
      }
      const sub = await client.post(`${I}/${first.token}/submit`).set(headersOf(rep.session)).send({});
      expectOk(sub);
      const invites = await db('kyb_invites').where({ counterparty_id: s.cpId });
      const mails = await db('outbound_emails');

      expectError(await invite(s, { fresh_start: true }), 409, 'APPLICATION_LOCKED');
      expect(await db('kyb_invites').where({ counterparty_id: s.cpId })).to.deep.equal(invites);
      expect(await db('outbound_emails')).to.have.length(mails.length);

      const staff = headersOf(await sessionOf((await createUser({ role: 'admin' })).user));
      const reason = `KTP of ${DIRECTOR} does not match the NIK`;
      expectOk(await client.post(`/v1/admin/enterprise/kyb/${sub.body.data.application.id}/reject`).set(staff).send({ reason }));

      const fresh = await inviteOk(s, { fresh_start: true });
      const view = await client.get(`${I}/${fresh.token}`).set(headersOf(s.admin.session));
      expectOk(view);
      expectNothingOfHers(view, 'version 2');
      expect(JSON.stringify(view.body)).to.not.include(reason);
      expect(view.body.data.application).to.include({ version: 2, status: 'draft', nib: null });
      expect(view.body.data.application.people).to.deep.equal([]);
      expect((view.body.data.history as { version: number }[]).map((h) => h.version)).to.deep.equal([2]);
      expect(view.body.data.subject.kyb_status).to.equal('pending');

      // Version 1 is as staff decided it, with her data and documents (the staff console reads it).
      const v1 = await db('kyb_applications').where({ counterparty_id: s.cpId, version: 1 }).first();
      expect(v1).to.include({ status: 'rejected', holder_id: rep.user.id, decision_reason: reason });
      expect((v1.people as { id: string }[]).map((p) => p.id)).to.deep.equal([personId]);
      expect(await db('kyb_documents').where({ application_id: v1.id })).to.have.length(4);
    });

    it('an edit of hers already past the link check when the fresh start lands writes nothing (404 INVITE_INVALID)', async () => {
      const s = await setup();
      const first = await inviteOk(s);
      const rep = await representative();
      expectOk(await client.get(`${I}/${first.token}`).set(headersOf(rep.session)));
      // Her request has opened the link (as the route's middleware does) before the fresh start commits.
      const subject = await openInvite(first.token, { userId: rep.user.id });
      await inviteOk(s, { fresh_start: true });
      const caller = { userId: rep.user.id, userName: rep.user.full_name, full: true, mayEdit: true };
      for (const write of [() => kyb.saveDraft(undefined, caller, subject, DRAFT as kyb.DraftInput), () => kyb.viewOf(subject, caller), () => kyb.submit(undefined, caller, subject)]) {
        const err = await write().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).to.be.instanceOf(AppError);
        expect((err as AppError).code).to.equal('INVITE_INVALID');
      }
      const row = await db('kyb_applications').where({ counterparty_id: s.cpId }).first();
      expect(row).to.include({ holder_id: null, address: null });
      expect(row.people).to.deep.equal([]);
    });

    it('is a boolean: anything else is 400 INVALID_BODY and nothing is made', async () => {
      const s = await setup();
      for (const body of [{ fresh_start: 'yes' }, { fresh_start: 1 }, { other: true }]) expectError(await invite(s, body), 400, 'INVALID_BODY');
      expect(await db('kyb_invites').where({ counterparty_id: s.cpId })).to.deep.equal([]);
    });
  });

  describe('the invite e-mail', () => {
    it('carries the display name as a plain name only: a URL, an e-mail address, line breaks and control characters are neutralised, the length clamped; no counterparty name', async () => {
      const s = await setup();
      const hostile = 'Bank BCA\r\nBcc: victim@evil.example\nLogin at https://evil.example/reset?x=1 \u202Eevil.com\u0007 www.phish.co.id ' + 'Z'.repeat(200);
      await db('workspaces').where({ id: s.workspaceId }).update({ display_name: hostile });
      const made = await inviteOk(s);
      const mail = (await db('outbound_emails').where({ template: 'kyb-invite' }).first()) as { subject: string; body_sealed: string; to_address: string };
      expect(mail.to_address).to.equal('finance@pemasok.example');
      const body = decryptSecret(mail.body_sealed);
      for (const text of [mail.subject, body]) {
        for (const bad of ['evil.example', 'evil.com', 'phish.co', '@evil', 'https://evil', 'Bcc:', '\r', '\u202E', '\u0007', 'Pemasok', 'Rahasia']) expect(text, bad).to.not.include(bad);
      }
      expect(mail.subject).to.not.include('\n');
      // The name as it stands in the body: one line of letters, digits, spaces and name punctuation, at most 60 characters.
      const names = [...body.matchAll(/Workspace "([^"]*)"|workspace "([^"]*)"/g)].map((m) => m[1] ?? m[2]!);
      expect(names).to.have.length(2);
      for (const n of names) {
        expect(n).to.match(/^[\p{L}\p{N} &'(),.-]{1,60}$/u);
        expect(n.startsWith('Bank BCA Bcc victim evil example')).to.equal(true);
      }
      // The only links in the mail are the platform's own: its address and the verification link.
      const urls = body.match(/https?:\/\/\S+/g) ?? [];
      expect(urls).to.include(`${config.publicBaseUrl}/kyb/invite/${made.token}`);
      for (const u of urls) expect(u.startsWith(config.publicBaseUrl), u).to.equal(true);
    });
  });

  describe(`at most ${INVITES_PER_WORKSPACE_PER_DAY} links a workspace per 24 hours`, () => {
    it('the next is 429 RATE_LIMITED with Retry-After until the oldest counted link is a day old: nothing made, cleared or sent; other workspaces are not touched', async () => {
      const t0 = new Date('2026-12-03T08:00:00.000Z');
      clock.set(t0);
      const s = await setup();
      s.admin.session = await sessionOf(s.admin.user);
      const first = await inviteOk(s);
      const rep = await representative();
      await fillAsRepresentative(first.token, rep);
      clock.set(new Date(t0.getTime() + HOUR));
      s.admin.session = await sessionOf(s.admin.user);
      for (let i = 1; i < INVITES_PER_WORKSPACE_PER_DAY; i++) await inviteOk(s);
      const counts = async () => ({
        invites: (await db('kyb_invites').where({ workspace_id: s.workspaceId })).length,
        mails: (await db('outbound_emails').where({ template: 'kyb-invite' })).length,
        events: (await db('workspace_events').where({ workspace_id: s.workspaceId, event: 'counterparty.kyb_invited' })).length,
      });
      const full = await counts();
      expect(full).to.deep.equal({ invites: INVITES_PER_WORKSPACE_PER_DAY, mails: INVITES_PER_WORKSPACE_PER_DAY, events: INVITES_PER_WORKSPACE_PER_DAY });
      const held = await db('kyb_applications').where({ counterparty_id: s.cpId }).first();

      for (const body of [{}, { fresh_start: true }]) {
        const res = await invite(s, body);
        expectError(res, 429, 'RATE_LIMITED');
        expect(res.headers['retry-after']).to.equal(String(23 * 3600));
      }
      expect(await counts()).to.deep.equal(full);
      expect(await db('kyb_applications').where({ counterparty_id: s.cpId }).first(), 'the fresh start cleared nothing').to.deep.equal(held);

      // A second before the first link is a day old: still refused; then there is room for one.
      clock.set(new Date(t0.getTime() + 24 * HOUR - 1000));
      s.admin.session = await sessionOf(s.admin.user);
      const late = await invite(s);
      expectError(late, 429, 'RATE_LIMITED');
      expect(late.headers['retry-after']).to.equal('1');
      clock.set(new Date(t0.getTime() + 24 * HOUR + 1000));
      s.admin.session = await sessionOf(s.admin.user);
      await inviteOk(s);
      expectError(await invite(s), 429, 'RATE_LIMITED');

      // Another workspace has its own count.
      const other = await setup('Lain Workspace');
      await inviteOk(other);
      expect(INVITE_TTL_DAYS).to.equal(7);
    });
  });
});
