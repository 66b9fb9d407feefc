/**
 * E-mail of workspace members (shared/enterprise/mail.ts): an invite e-mails the invitee
 * once, in the invite's transaction; `mailOptedInMembers` mails only active members who
 * opted in (notify_email) and whose account is active, from `minRole` up; bodies are
 * stored sealed, and a rolled-back change leaves no e-mail and no job.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { MailSink } from '../../helpers/smtp.js';
import { createUser } from '../../factories/users.js';
import { addMember, createWorkspace, headersOf, sessionOf } from '../../factories/enterprise.js';
import { config } from '../../../shared/config.js';
import { decryptSecret } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import { mailOptedInMembers, mailUser, type MemberMail } from '../../../shared/enterprise/mail.js';

interface EmailRow {
  id: string;
  user_id: string | null;
  to_address: string;
  template: string;
  subject: string;
  body_sealed: string | null;
}

const emails = (where: Record<string, unknown> = {}) => db('outbound_emails').where(where).orderBy('created_at').select<EmailRow[]>('*');

const KEY = '3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';

describe('enterprise member e-mail', () => {
  const client = api();

  describe('invites', () => {
    const sink = new MailSink();
    before(async () => {
      await sink.start();
    });
    after(async () => {
      await sink.stop();
    });
    beforeEach(() => sink.clear());

    it('POST /v1/enterprise/members queues exactly one e-mail, to the invitee, naming the workspace; the mail worker delivers it', async () => {
      const { workspace, owner } = await createWorkspace(undefined, 'Acme Logistik');
      await addMember(workspace.id, 'admin'); // an opted-in member: an invite is not theirs to hear about by e-mail
      const { user: invitee } = await createUser({ fullName: 'Ina Vitee' });
      const inv = await client.post('/v1/enterprise/members').set(headersOf(await sessionOf(owner))).send({ email: invitee.email, role: 'finance' });
      expect(inv.status, JSON.stringify(inv.body)).to.equal(201);
      const invId = (await db('workspace_members').where({ user_id: invitee.id, status: 'invited' }).first<{ id: string }>('id')).id;

      const rows = await emails();
      expect(rows, JSON.stringify(rows)).to.have.length(1);
      const [mail] = rows;
      expect(mail).to.include({ user_id: invitee.id, to_address: invitee.email, template: 'enterprise.member-invited' });
      expect(mail!.subject).to.include('Acme Logistik');
      expect(mail!.subject).to.include('You are invited to Acme Logistik');

      // Sealed at rest; the plaintext names the workspace, the role, the inviter and how to accept.
      expect(mail!.body_sealed).to.be.a('string');
      for (const plain of ['Acme Logistik', 'finance', owner.full_name, '/accept', 'Ina Vitee']) expect(mail!.body_sealed).to.not.include(plain);
      const text = decryptSecret(mail!.body_sealed!);
      for (const part of ['"Acme Logistik"', 'finance', owner.full_name, 'Ina Vitee', `POST ${config.publicBaseUrl}/v1/enterprise/invites/${invId}/accept`]) {
        expect(text).to.include(part);
      }
      expect(text.indexOf('mengundang Anda')).to.be.within(0, text.indexOf('invited you') - 1); // Indonesian first

      // Its job is in the outbox, and delivery sends it to the invitee alone.
      const jobs = await db('outbox').where({ job: 'mail.send' }).select<{ payload: { emailId: string } }[]>('payload');
      expect(jobs.map((j) => j.payload.emailId)).to.deep.equal([mail!.id]);
      const ran = await runJobs(['mail']);
      expect(ran.map((r) => [r.name, r.error])).to.deep.equal([['mail.send', undefined]]);
      expect(sink.messages.map((m) => m.to)).to.deep.equal([[invitee.email]]);
      expect(sink.messages[0]!.subject).to.include('Acme Logistik');
      expect(sink.messages[0]!.text).to.include(owner.full_name);
      expect((await emails())[0]!.body_sealed).to.equal(null); // dropped once sent
    });

    it('the invitee is mailed even with e-mail turned off in another workspace; a refused invite and a replay queue nothing more', async () => {
      const { workspace, owner } = await createWorkspace(undefined, 'Beta');
      const s = await sessionOf(owner);
      const { user: invitee } = await createUser();
      const other = await createWorkspace(undefined, 'Elsewhere');
      const there = await addMember(other.workspace.id, 'viewer', invitee);
      await db('workspace_members').where({ id: there.member.id }).update({ notify_email: false });

      const send = () => client.post('/v1/enterprise/members').set(headersOf(s)).set('Idempotency-Key', KEY).send({ email: invitee.email, role: 'viewer' });
      const first = await send();
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      const replay = await send();
      expect(replay.headers['idempotent-replay']).to.equal('true');
      // A second invite while one is pending, and one to an address no account uses, answer alike and send nothing (R1).
      const again = await client.post('/v1/enterprise/members').set(headersOf(s)).send({ email: invitee.email, role: 'viewer' });
      expect(again.status).to.equal(201);
      const unknown = await client.post('/v1/enterprise/members').set(headersOf(s)).send({ email: 'nobody@example.com', role: 'viewer' });
      expect(unknown.status).to.equal(201);

      expect((await emails()).map((e) => [e.user_id, e.subject])).to.deep.equal([[invitee.id, 'Undangan ke Beta / You are invited to Beta']]);
      expect(await countRows('outbox', { job: 'mail.send' })).to.equal(1);
      void workspace;
    });
  });

  describe('mailOptedInMembers and mailUser', () => {
    const mail = (template: string): MemberMail => ({ template, subject: 'Ringkasan / Summary', text: 'Isi rahasia 4711\nSecret body 4711\n' });
    const send = (workspaceId: string, template: string, filter?: Parameters<typeof mailOptedInMembers>[3]) =>
      db.transaction((trx) => mailOptedInMembers(trx, workspaceId, mail(template), filter));
    const recipients = async (template: string) => (await emails({ template })).map((e) => e.user_id).sort();

    /** A workspace with one member of each kind that must or must not hear. */
    async function crowd() {
      const { workspace, owner } = await createWorkspace();
      const admin = await addMember(workspace.id, 'admin');
      const operator = await addMember(workspace.id, 'operator');
      const optedOut = await addMember(workspace.id, 'finance');
      await db('workspace_members').where({ id: optedOut.member.id }).update({ notify_email: false });
      const invited = await addMember(workspace.id, 'admin', undefined, 'invited');
      const removed = await addMember(workspace.id, 'owner');
      await db('workspace_members').where({ id: removed.member.id }).update({ status: 'removed', removed_at: new Date() });
      const suspended = await addMember(workspace.id, 'admin');
      await db('workspace_members').where({ id: suspended.member.id }).update({ status: 'suspended' });
      const closedAccount = await addMember(workspace.id, 'owner', (await createUser({ status: 'suspended' })).user);
      const elsewhere = await createWorkspace(); // its owner is opted in, but in another workspace
      return { workspace, owner, admin, operator, others: [optedOut, invited, removed, suspended, closedAccount].map((m) => m.user.id).concat(elsewhere.owner.id) };
    }

    it('queues only for active, opted-in members with an active account, and returns how many', async () => {
      const { workspace, owner, admin, operator, others } = await crowd();
      expect(await send(workspace.id, 'test.all')).to.equal(3);
      const got = await recipients('test.all');
      expect(got).to.deep.equal([owner.id, admin.user.id, operator.user.id].sort());
      for (const id of others) expect(got).to.not.include(id);
      const rows = await emails({ template: 'test.all' });
      const byUser = new Map((await db('users').whereIn('id', got).select<{ id: string; email: string }[]>('id', 'email')).map((u) => [u.id, u.email]));
      for (const r of rows) {
        expect(r.to_address).to.equal(byUser.get(r.user_id!));
        expect(r.subject).to.equal('Ringkasan / Summary');
        expect(r.body_sealed).to.be.a('string').and.not.include('4711');
        expect(decryptSecret(r.body_sealed!)).to.equal('Isi rahasia 4711\nSecret body 4711\n');
      }
      expect(await countRows('outbox', { job: 'mail.send' })).to.equal(3);
    });

    it('minRole keeps that role and those above it', async () => {
      const { workspace, owner, admin, operator } = await crowd();
      expect(await send(workspace.id, 'test.admin', { minRole: 'admin' })).to.equal(2);
      expect(await recipients('test.admin')).to.deep.equal([owner.id, admin.user.id].sort());
      expect(await send(workspace.id, 'test.owner', { minRole: 'owner' })).to.equal(1);
      expect(await recipients('test.owner')).to.deep.equal([owner.id]);
      expect(await send(workspace.id, 'test.viewer', { minRole: 'viewer' })).to.equal(3);
      expect(await recipients('test.viewer')).to.deep.equal([owner.id, admin.user.id, operator.user.id].sort());
      expect(await send(workspace.id, 'test.finance', { minRole: 'finance' })).to.equal(2); // the finance member opted out
      // A workspace nobody opted in to hears nothing.
      await db('workspace_members').where({ workspace_id: workspace.id }).update({ notify_email: false });
      expect(await send(workspace.id, 'test.none')).to.equal(0);
    });

    it("runs in the caller's transaction: a rollback leaves no e-mail and no job", async () => {
      const { workspace, owner } = await crowd();
      const boom = new Error('rolled back');
      const failed = await db
        .transaction(async (trx) => {
          expect(await mailOptedInMembers(trx, workspace.id, mail('test.rollback'))).to.equal(3);
          await mailUser(trx, owner.id, mail('test.rollback'));
          throw boom;
        })
        .catch((err: unknown) => err);
      expect(failed).to.equal(boom);
      expect(await countRows('outbound_emails')).to.equal(0);
      expect(await countRows('outbox', { job: 'mail.send' })).to.equal(0);
    });

    it('mailUser sends one sealed e-mail to an active account, none to an inactive one; the subject is one line', async () => {
      const { user } = await createUser();
      const { user: closed } = await createUser({ status: 'closed' });
      await db.transaction(async (trx) => {
        await mailUser(trx, user.id, { template: 'test.one', subject: 'Workspace\r\nBcc: x@example.com  now', text: 'Hai 4242\n' });
        await mailUser(trx, closed.id, { template: 'test.one', subject: 'Hai', text: 'Hai 4242\n' });
      });
      const rows = await emails({ template: 'test.one' });
      expect(rows.map((r) => [r.user_id, r.to_address, r.subject])).to.deep.equal([[user.id, user.email, 'Workspace Bcc: x@example.com now']]);
      expect(rows[0]!.body_sealed).to.not.include('4242');
      expect(decryptSecret(rows[0]!.body_sealed!)).to.equal('Hai 4242\n');
      expect(await countRows('outbox', { job: 'mail.send' })).to.equal(1);
    });
  });
});
