/**
 * Staff review of a workspace's KYB application (enterprise spec 3; decisions D9, D10,
 * 0017): request changes (the reviewed version changes_requested, a new draft version
 * carrying notes, fields and documents), approve (the workspace goes live in the same
 * transaction, with the live hooks), reject (saving again starts a new version); each
 * move a compare-and-set from submitted, recorded in the staff audit and the feed under
 * the operator label, refused otherwise; two staff deciding at once; the outcome e-mailed
 * to the workspace's active, opted-in members.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { api } from '../../helpers/app.js';
import { createUser } from '../../factories/users.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, workspaceKey } from '../../factories/enterprise.js';
import {
  KYB,
  applicationRows,
  attachOk,
  completeWorkspace,
  fullOf,
  patchOk,
  review,
  submittedWorkspace,
  viewOf,
  workspaceRow,
  type Headers,
} from '../../factories/kyb.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { decryptSecret } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import { onWorkspaceLive } from '../../../shared/kyb/live.js';
import type { UserRow } from '../../../shared/users/repo.js';

interface EventRow {
  seq: string;
  event: string;
  entity_type: string;
  entity_id: string | null;
  actor_id: string | null;
  actor_name: string | null;
  actor_label: string | null;
  livemode: boolean;
  summary: string;
}

interface AuditRow {
  actor_id: string;
  action: string;
  target_type: string;
  target_id: string;
  note: string | null;
  details: Record<string, unknown>;
}

interface EmailRow {
  id: string;
  user_id: string | null;
  to_address: string;
  template: string;
  subject: string;
  body_sealed: string | null;
}

const events = (workspaceId: string) => db('workspace_events').where({ workspace_id: workspaceId }).orderBy('seq').select<EventRow[]>('*');
const kybEvents = async (workspaceId: string) => (await events(workspaceId)).filter((e) => e.event.startsWith('kyb.') && e.event !== 'kyb.submitted');
const audit = (targetId: string) => db('staff_audit').where({ target_id: targetId }).orderBy('created_at').select<AuditRow[]>('*');
const kybMails = () => db('outbound_emails').where('template', 'like', 'kyb%').orderBy('created_at').select<EmailRow[]>('*');
const documentRows = (applicationId: string) =>
  db('kyb_documents').where({ application_id: applicationId }).orderBy('doc_type').select<{ id: string; upload_id: string; doc_type: string; person_id: string | null }[]>('*');
const uploadRow = (id: string) => db('uploads').where({ id }).first<{ bound_at: Date | null; bound_id: string | null }>('*');
const same = (docs: { upload_id: string; doc_type: string; person_id: string | null }[]) => docs.map((d) => `${d.doc_type}:${d.person_id}:${d.upload_id}`).sort();

const sendPatch = (client: ReturnType<typeof api>, h: Headers, body: object) => client.patch(KYB).set(h).send(body);

const CHANGES = [
  { field: 'company.npwp', note: 'The NPWP does not match the tax card' },
  { field: 'documents.bank_proof', note: 'The statement is older than three months' },
];

describe('KYB staff review', () => {
  const client = api();
  let staff: Headers;
  let staffUser: UserRow;

  beforeEach(async () => {
    const { user } = await createUser({ role: 'admin', fullName: 'Rina Reviewer' });
    staffUser = user;
    staff = headersOf(await sessionOf(user));
  });
  afterEach(() => clock.reset());

  it('request-changes: the version becomes changes_requested and version 2 opens as a draft with the notes, fields and documents', async () => {
    const { workspace, owner, h, applicationId, personId } = await submittedWorkspace(client);
    const [v1Before] = await applicationRows(workspace.id);
    const v1Docs = await documentRows(applicationId);

    // D10: an admin's personal key works as well as a session.
    const viaKey = headersOf(await personalKeyOf((await createUser({ role: 'admin' })).user));
    const res = await review(client, viaKey, applicationId, 'request-changes', { change_requests: CHANGES, note: 'Called the bank on Monday' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const d = res.body.data;
    expect(d.application).to.include({ id: applicationId, version: 1, status: 'changes_requested' });
    expect(d.application.change_requests).to.deep.equal(CHANGES);
    expect(d.application.decided_at).to.be.a('string');
    expect(d.next_version).to.include({ version: 2, status: 'draft' });
    expect(d.next_version.id).to.not.equal(applicationId);
    expect(d.subject).to.include({ type: 'account', id: workspace.id, kyb_status: 'draft', is_sandbox: true });

    // The rows: v1 kept as reviewed, v2 a draft carrying everything, numbers still sealed the same.
    const [v2, v1] = await applicationRows(workspace.id);
    expect(v1).to.include({ id: applicationId, version: 1, status: 'changes_requested' });
    expect(v1!.decided_at).to.be.instanceOf(Date);
    expect(v2).to.include({ id: d.next_version.id, version: 2, status: 'draft', submitted_at: null, decided_at: null });
    expect(v2!.change_requests).to.deep.equal(CHANGES);
    for (const k of ['entity_type', 'legal_name', 'country_code', 'nib', 'npwp', 'address', 'industry', 'monthly_volume', 'website', 'bank_name', 'bank_account_holder', 'bank_account_number_sealed', 'bank_account_last4'] as const) {
      expect((v2 as unknown as Record<string, unknown>)[k], k).to.deep.equal((v1Before as unknown as Record<string, unknown>)[k]);
    }
    expect(v2!.people).to.deep.equal(v1Before!.people);
    const v2Docs = await documentRows(v2!.id);
    expect(same(v2Docs)).to.deep.equal(same(v1Docs));
    expect(v2Docs.map((x) => x.id)).to.not.have.members(v1Docs.map((x) => x.id));
    expect(same(await documentRows(applicationId))).to.deep.equal(same(v1Docs)); // v1 keeps its own

    expect(await workspaceRow(workspace.id)).to.include({ kyb_status: 'draft', is_sandbox: true });

    // What the workspace sees: version 2, editable, complete, the notes; history newest first.
    const v = await viewOf(client, h);
    expect(v.application).to.include({ id: v2!.id, version: 2, status: 'draft' });
    expect(v.application.change_requests).to.deep.equal(CHANGES);
    expect(v.application.documents).to.have.length(4);
    expect(v.application.people.map((p) => p.id)).to.deep.equal([personId]);
    expect(v.progress.complete).to.equal(true);
    expect(v.can_edit).to.equal(true);
    expect(v.subject.kyb_status).to.equal('draft');
    expect(v.review.due_by).to.equal(null);
    expect(v.history.map((x) => [x.version, x.status])).to.deep.equal([
      [2, 'draft'],
      [1, 'changes_requested'],
    ]);
    expect(v.history[1]!.decided_at).to.equal(d.application.decided_at);
    expect(v.history[1]!.submitted_at).to.be.a('string');

    // Feed and audit: the operator label, no staff identity.
    const evs = await kybEvents(workspace.id);
    expect(evs.map((e) => [e.event, e.actor_label, e.actor_id, e.actor_name, e.livemode])).to.deep.equal([['kyb.changes_requested', 'Operator', null, null, false]]);
    expect(JSON.stringify(await events(workspace.id))).to.not.include('Rina Reviewer');
    const rows = await audit(applicationId);
    expect(rows.map((r) => [r.action, r.target_type, r.note])).to.deep.equal([['kyb.changes_requested', 'kyb_application', 'Called the bank on Monday']]);

    // Version 1's documents are not the draft's: their ids name nothing on the current version.
    const gone = await client.delete(`${KYB}/documents/${v1Docs[0]!.id}`).set(h);
    expect([gone.status, gone.body.error?.code]).to.deep.equal([404, 'NOT_FOUND']);
    expect(v.application.documents.map((x) => x.id).sort()).to.deep.equal(v2Docs.map((x) => x.id).sort());

    // The next version can be fixed and submitted again.
    await patchOk(client, h, { company: { npwp: '0123456789012345' } });
    const again = await client.post(`${KYB}/submit`).set(h).send({});
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expect(again.body.data.application).to.include({ version: 2, status: 'submitted' });
    expect(await workspaceRow(workspace.id)).to.include({ kyb_status: 'pending' });
    void owner;
  });

  it('approve: approved with the risk tier; the workspace goes live (verified, not sandbox, tier, legal name) with kyb.approved and workspace.live', async () => {
    const { workspace, h } = await completeWorkspace(client);
    await patchOk(client, h, { company: { legal_name: 'PT Maju Sentosa Abadi' } });
    expect((await client.post(`${KYB}/submit`).set(h).send({})).status).to.equal(200);
    const applicationId = (await applicationRows(workspace.id))[0]!.id;
    expect(await workspaceRow(workspace.id)).to.include({ is_sandbox: true, kyb_status: 'pending', risk_tier: 'standard' });

    const res = await review(client, staff, applicationId, 'approve', { risk_tier: 'elevated', note: 'Checked with AHU online' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const d = res.body.data;
    expect(d.application).to.include({ id: applicationId, status: 'approved', risk_tier_assigned: 'elevated', legal_name: 'PT Maju Sentosa Abadi' });
    expect(d.application.decided_at).to.be.a('string');
    expect(d.subject).to.include({ id: workspace.id, kyb_status: 'verified', is_sandbox: false });
    expect(d.next_version).to.equal(null);

    expect(await workspaceRow(workspace.id)).to.include({ kyb_status: 'verified', is_sandbox: false, risk_tier: 'elevated', legal_name: 'PT Maju Sentosa Abadi' });
    const [row] = await applicationRows(workspace.id);
    expect(row).to.include({ status: 'approved', risk_tier_assigned: 'elevated' });
    expect(await applicationRows(workspace.id)).to.have.length(1);

    const evs = (await events(workspace.id)).filter((e) => ['kyb.approved', 'workspace.live'].includes(e.event));
    // The decision first, then what follows from it.
    expect(evs.map((e) => e.event)).to.deep.equal(['kyb.approved', 'workspace.live']);
    // The decision is the sandbox's last event; the switch is the live workspace's first (issue 42: a live workspace's events are live).
    for (const e of evs) expect([e.event, e.actor_label, e.actor_id, e.actor_name, e.livemode]).to.deep.equal([e.event, 'Operator', null, null, e.event === 'workspace.live']);
    expect(JSON.stringify(await events(workspace.id))).to.not.include('Rina Reviewer');
    const rows = await audit(applicationId);
    expect(rows.map((r) => [r.actor_id, r.action, r.note, r.details])).to.deep.equal([[staffUser.id, 'kyb.approved', 'Checked with AHU online', { risk_tier: 'elevated' }]]);

    const v = await viewOf(client, h);
    expect(v.application).to.include({ status: 'approved', risk_tier_assigned: 'elevated' });
    expect(v.subject).to.include({ kyb_status: 'verified', is_sandbox: false });
    expect(v.can_edit).to.equal(false);
    expect(v.review.due_by).to.equal(null);
    expect(v.history.map((x) => x.status)).to.deep.equal(['approved']);

    // Decided once: the other moves are refused now.
    for (const [move, body] of [['approve', { risk_tier: 'low' }], ['reject', { reason: 'Too late' }], ['request-changes', { change_requests: CHANGES }]] as const) {
      const r = await review(client, staff, applicationId, move, body);
      expect([r.status, r.body.error?.code], move).to.deep.equal([409, 'INVALID_STATE']);
    }
    expect(await workspaceRow(workspace.id)).to.include({ kyb_status: 'verified', risk_tier: 'elevated' });
  });

  it('live hooks run inside the approval transaction; a failing hook refuses the approval and nothing changes', async () => {
    const { workspace, applicationId } = await submittedWorkspace(client);
    const marker = `kyb-hook-test:${workspace.id}`;

    // A hook that writes, then one that fails: everything rolls back, the marker included.
    const calls: string[] = [];
    const offWriter = onWorkspaceLive(async (trx, workspaceId) => {
      calls.push(workspaceId);
      await trx('settings').insert({ key: marker, value: JSON.stringify({ workspaceId }), updated_at: clock.now() });
    });
    const offFailing = onWorkspaceLive(() => Promise.reject(new Error('sandbox milestones could not be cancelled')));
    let failed;
    try {
      failed = await review(client, staff, applicationId, 'approve', { risk_tier: 'high' });
    } finally {
      offWriter();
      offFailing();
    }
    expect(failed.status, JSON.stringify(failed.body)).to.equal(500);
    expect(calls).to.deep.equal([workspace.id]);
    expect(await db('settings').where({ key: marker })).to.deep.equal([]);
    const [still] = await applicationRows(workspace.id);
    expect(still).to.include({ status: 'submitted', risk_tier_assigned: null, decided_at: null });
    expect(await workspaceRow(workspace.id)).to.include({ kyb_status: 'pending', is_sandbox: true, risk_tier: 'standard' });
    expect(await kybEvents(workspace.id)).to.deep.equal([]);
    expect((await events(workspace.id)).map((e) => e.event)).to.not.include('workspace.live');
    expect(await audit(applicationId)).to.deep.equal([]);
    expect(await kybMails()).to.deep.equal([]);

    // With a working hook: it runs once, with this workspace, after the switch and before the commit.
    // An observer on its own connection (outside the service's pool) sees only what is committed.
    const observer = new pg.Client({ connectionString: config.databaseUrl });
    await observer.connect();
    const seen: { workspaceId: string; inside: unknown; outside: unknown; status: unknown }[] = [];
    const off = onWorkspaceLive(async (trx, workspaceId) => {
      const inside = await trx('workspaces').where({ id: workspaceId }).first('is_sandbox', 'kyb_status');
      const outside = (await observer.query('SELECT is_sandbox, kyb_status FROM workspaces WHERE id = $1', [workspaceId])).rows[0];
      const app = await trx('kyb_applications').where({ id: applicationId }).first('status');
      seen.push({ workspaceId, inside, outside, status: app.status });
      await trx('settings').insert({ key: marker, value: JSON.stringify({ workspaceId }), updated_at: clock.now() });
    });
    let ok;
    try {
      ok = await review(client, staff, applicationId, 'approve', { risk_tier: 'high' });
    } finally {
      off();
      await observer.end();
    }
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(seen).to.deep.equal([
      { workspaceId: workspace.id, inside: { is_sandbox: false, kyb_status: 'verified' }, outside: { is_sandbox: true, kyb_status: 'pending' }, status: 'approved' },
    ]);
    expect((await db('settings').where({ key: marker }).first<{ value: unknown }>('value')).value).to.deep.equal({ workspaceId: workspace.id });
    expect(await workspaceRow(workspace.id)).to.include({ kyb_status: 'verified', is_sandbox: false, risk_tier: 'high' });

    // Unregistered: another workspace's approval does not call it.
    const other = await submittedWorkspace(client);
    expect((await review(client, staff, other.applicationId, 'approve', { risk_tier: 'low' })).status).to.equal(200);
    expect(seen).to.have.length(1);
  });

  it('reject: rejected with the reason, workspace rejected; saving again starts version 2 as a draft (workspace draft)', async () => {
    const { workspace, h, applicationId } = await submittedWorkspace(client);
    const reason = 'The deed of establishment names another director';
    const res = await review(client, staff, applicationId, 'reject', { reason });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.application).to.include({ id: applicationId, status: 'rejected', decision_reason: reason, risk_tier_assigned: null });
    expect(res.body.data.subject).to.include({ kyb_status: 'rejected', is_sandbox: true });
    expect(res.body.data.next_version).to.equal(null);
    expect(await workspaceRow(workspace.id)).to.include({ kyb_status: 'rejected', is_sandbox: true });
    expect((await kybEvents(workspace.id)).map((e) => [e.event, e.actor_label, e.actor_id])).to.deep.equal([['kyb.rejected', 'Operator', null]]);
    expect((await audit(applicationId)).map((r) => [r.actor_id, r.action])).to.deep.equal([[staffUser.id, 'kyb.rejected']]);

    const seenRejected = await viewOf(client, h);
    expect(seenRejected.application).to.include({ version: 1, status: 'rejected', decision_reason: reason });
    expect(seenRejected.can_edit).to.equal(true);
    expect(seenRejected.history).to.have.length(1);
    expect(seenRejected.history[0]).to.include({ version: 1, status: 'rejected', decision_reason: reason });

    // A refused save starts nothing.
    const refused = await client.patch(KYB).set(h).send({ company: { nib: '123' } });
    expect([refused.status, refused.body.error?.code]).to.deep.equal([400, 'INVALID_BODY']);
    expect(await applicationRows(workspace.id)).to.have.length(1);
    expect(await workspaceRow(workspace.id)).to.include({ kyb_status: 'rejected' });

    const saved = await patchOk(client, h, { company: { industry: 'Wholesale' } });
    const v = fullOf(saved);
    expect(v.application).to.include({ version: 2, status: 'draft', industry: 'Wholesale', npwp: '012345678901234', decision_reason: null, submitted_at: null });
    expect(v.application.change_requests).to.deep.equal([]);
    expect(v.application.documents).to.have.length(4);
    expect(v.progress.complete).to.equal(true);
    expect(v.subject.kyb_status).to.equal('draft');
    expect(v.history.map((x) => [x.version, x.status, x.decision_reason])).to.deep.equal([
      [2, 'draft', null],
      [1, 'rejected', reason],
    ]);
    expect(await workspaceRow(workspace.id)).to.include({ kyb_status: 'draft' });
    const [v2, v1] = await applicationRows(workspace.id);
    expect(v1).to.include({ id: applicationId, status: 'rejected', decision_reason: reason });
    expect((await db('kyb_applications').where({ id: applicationId }).first<{ industry: string }>('industry')).industry).to.equal('Retail');
    expect(same(await documentRows(v2!.id))).to.deep.equal(same(await documentRows(applicationId)));

    // A second save edits version 2 in place; the new version can be submitted and approved.
    await patchOk(client, h, { company: { website: null } });
    expect(await applicationRows(workspace.id)).to.have.length(2);
    expect((await client.post(`${KYB}/submit`).set(h).send({})).status).to.equal(200);
    expect(await workspaceRow(workspace.id)).to.include({ kyb_status: 'pending' });
    expect((await review(client, staff, v2!.id, 'approve', { risk_tier: 'low' })).status).to.equal(200);
    expect(await workspaceRow(workspace.id)).to.include({ kyb_status: 'verified', is_sandbox: false, risk_tier: 'low' });
  });

  it('saves racing on a rejected application start one version 2 holding them all; a save racing a submission lands before it or is locked out', async () => {
    for (let round = 0; round < 3; round++) {
      const { workspace, h, applicationId } = await submittedWorkspace(client);
      expect((await review(client, staff, applicationId, 'reject', { reason: 'Blurry deed' })).status).to.equal(200);
      const saves = await Promise.all([
        sendPatch(client, h, { company: { industry: 'Wholesale' } }),
        sendPatch(client, h, { bank: { bank_name: 'Mandiri' } }),
        ...[1, 2, 3, 4, 5, 6].map((n) => sendPatch(client, h, { company: { address: `Jl. Nomor ${n}, Jakarta` } })),
      ]);
      expect(
        saves.map((r) => r.status),
        JSON.stringify(saves.map((r) => r.body as unknown)),
      ).to.deep.equal(Array(8).fill(200));
      const rows = await applicationRows(workspace.id);
      expect(rows.map((r) => [r.version, r.status])).to.deep.equal([
        [2, 'draft'],
        [1, 'rejected'],
      ]);
      const v2 = await db('kyb_applications').where({ id: rows[0]!.id }).first<{ industry: string; bank_name: string }>('industry', 'bank_name');
      expect(v2).to.deep.equal({ industry: 'Wholesale', bank_name: 'Mandiri' });
      expect(await documentRows(rows[0]!.id)).to.have.length(4);
      expect(await workspaceRow(workspace.id)).to.include({ kyb_status: 'draft' });

      const [save, submit] = await Promise.all([sendPatch(client, h, { company: { industry: 'Logistics' } }), client.post(`${KYB}/submit`).set(h).send({})]);
      expect(submit.status, JSON.stringify(submit.body)).to.equal(200);
      const after = await db('kyb_applications').where({ id: rows[0]!.id }).first<{ industry: string; status: string }>('industry', 'status');
      if (save.status === 200) expect(after).to.deep.equal({ industry: 'Logistics', status: 'submitted' });
      else {
        expect([save.status, save.body.error?.code]).to.deep.equal([409, 'APPLICATION_LOCKED']);
        expect(after).to.deep.equal({ industry: 'Wholesale', status: 'submitted' });
      }
      expect(await applicationRows(workspace.id)).to.have.length(2);
      expect(await workspaceRow(workspace.id)).to.include({ kyb_status: 'pending' });
    }
  });

  it('after a rejection, attaching or removing a document also starts the next version; the rejected version keeps its documents', async () => {
    // Removal: the document of version 1 is removed from version 2's copy; the file stays bound (version 1 holds it).
    const a = await submittedWorkspace(client);
    expect((await review(client, staff, a.applicationId, 'reject', { reason: 'Blurry bank proof' })).status).to.equal(200);
    const v1Docs = await documentRows(a.applicationId);
    const bankProof = v1Docs.find((d) => d.doc_type === 'bank_proof')!;
    const del = await client.delete(`${KYB}/documents/${bankProof.id}`).set(a.h);
    expect(del.status, JSON.stringify(del.body)).to.equal(200);
    expect(del.body.data.application).to.include({ version: 2, status: 'draft' });
    expect(fullOf(del).application.documents.map((d) => d.doc_type).sort()).to.deep.equal(['akta_pendirian', 'ktp', 'sk_kemenkumham']);
    expect(del.body.data.progress.missing_documents).to.deep.equal(['bank_proof']);
    expect(await workspaceRow(a.workspace.id)).to.include({ kyb_status: 'draft' });
    expect(same(await documentRows(a.applicationId))).to.deep.equal(same(v1Docs));
    expect(await uploadRow(bankProof.upload_id)).to.include({ bound_id: a.applicationId });
    expect((await uploadRow(bankProof.upload_id)).bound_at).to.be.instanceOf(Date);

    // A file only version 2 holds is released when removed from it.
    const fresh = await attachOk(client, a.h, a.owner.id, 'bank_proof');
    const freshDoc = fullOf(fresh).application.documents.find((d) => d.doc_type === 'bank_proof')!.id;
    const gone = await client.delete(`${KYB}/documents/${freshDoc}`).set(a.h);
    expect(gone.status).to.equal(200);
    expect(await uploadRow(fresh.uploadId)).to.include({ bound_at: null, bound_id: null });

    // Attach: version 2 opens carrying version 1's documents plus the new one.
    const b = await submittedWorkspace(client);
    expect((await review(client, staff, b.applicationId, 'reject', { reason: 'Missing deed of amendment' })).status).to.equal(200);
    const added = await attachOk(client, b.h, b.owner.id, 'akta_perubahan');
    expect(added.body.data.application).to.include({ version: 2, status: 'draft' });
    expect(added.body.data.application.documents).to.have.length(5);
    expect(await documentRows(b.applicationId)).to.have.length(4);
    expect(await workspaceRow(b.workspace.id)).to.include({ kyb_status: 'draft' });
  });

  it('refuses every move not from submitted (409), an unknown application (404), non-staff (403/401) and bad bodies (400); nothing changes', async () => {
    const moves = [
      ['approve', { risk_tier: 'standard' }],
      ['reject', { reason: 'Not valid' }],
      ['request-changes', { change_requests: CHANGES }],
    ] as const;
    const refusedAll = async (id: string, when: string, status = 409, code = 'INVALID_STATE', h = staff) => {
      for (const [move, body] of moves) {
        const r = await review(client, h, id, move, body);
        expect([r.status, r.body.error?.code], `${move} ${when}`).to.deep.equal([status, code]);
      }
    };

    // A draft.
    const draft = await createWorkspace();
    const draftId = (await applicationRows(draft.workspace.id))[0]!.id;
    await refusedAll(draftId, 'a draft');
    expect((await applicationRows(draft.workspace.id)).map((r) => r.status)).to.deep.equal(['draft']);
    expect(await workspaceRow(draft.workspace.id)).to.include({ kyb_status: 'not_started', is_sandbox: true });

    // Decided versions: rejected, and a version whose changes were requested (and its new draft).
    const rejected = await submittedWorkspace(client);
    expect((await review(client, staff, rejected.applicationId, 'reject', { reason: 'No' })).status).to.equal(200);
    await refusedAll(rejected.applicationId, 'rejected');
    const changed = await submittedWorkspace(client);
    const rc = await review(client, staff, changed.applicationId, 'request-changes', { change_requests: CHANGES });
    expect(rc.status).to.equal(200);
    await refusedAll(changed.applicationId, 'changes_requested');
    await refusedAll(rc.body.data.next_version.id, 'the new draft');

    // Unknown ids.
    await refusedAll(randomUUID(), 'unknown', 404, 'NOT_FOUND');
    await refusedAll('not-a-uuid', 'malformed', 404, 'NOT_FOUND');

    // A submitted one, refused for who asks and for what they send.
    const s = await submittedWorkspace(client);
    const member = await addMember(s.workspace.id, 'admin');
    await refusedAll(s.applicationId, 'the owner (not staff)', 403, 'FORBIDDEN', s.h);
    await refusedAll(s.applicationId, 'a workspace admin', 403, 'FORBIDDEN', headersOf(await sessionOf(member.user)));
    await refusedAll(s.applicationId, "the owner's personal key", 403, 'FORBIDDEN', headersOf(await personalKeyOf(s.owner)));
    const wsKey = await workspaceKey(s.workspace.id, { member: s.ownerMember, user: s.owner }, ['read', 'write']);
    await refusedAll(s.applicationId, 'a workspace key', 401, 'WORKSPACE_KEY_ONLY', headersOf({ kind: 'workspace_key', key: wsKey.key }));
    await refusedAll(s.applicationId, 'nobody', 401, 'UNAUTHORIZED', {});

    const bad: [string, 'approve' | 'reject' | 'request-changes', object, string][] = [
      ['unknown risk tier', 'approve', { risk_tier: 'extreme' }, 'risk_tier'],
      ['no risk tier', 'approve', {}, 'risk_tier'],
      ['empty change_requests', 'request-changes', { change_requests: [] }, 'change_requests'],
      ['no change_requests', 'request-changes', {}, 'change_requests'],
      ['a change request without a note', 'request-changes', { change_requests: [{ field: 'company.npwp', note: '' }] }, 'change_requests.0.note'],
      ['a change request without a field', 'request-changes', { change_requests: [{ note: 'Fix it' }] }, 'change_requests.0.field'],
      ['no reason', 'reject', {}, 'reason'],
      ['a blank reason', 'reject', { reason: '   ' }, 'reason'],
      ['a note over 2000 characters', 'reject', { reason: 'Bad deed', note: 'x'.repeat(2001) }, 'note'],
    ];
    for (const [name, move, body, field] of bad) {
      const r = await review(client, staff, s.applicationId, move, body);
      expect([r.status, r.body.error?.code], name).to.deep.equal([400, 'INVALID_BODY']);
      expect(r.body.error.details.fieldErrors, name).to.have.property(field);
    }

    expect((await applicationRows(s.workspace.id)).map((r) => [r.status, r.decided_at, r.risk_tier_assigned, r.decision_reason])).to.deep.equal([['submitted', null, null, null]]);
    expect(await workspaceRow(s.workspace.id)).to.include({ kyb_status: 'pending', is_sandbox: true, risk_tier: 'standard' });
    expect(await kybEvents(s.workspace.id)).to.deep.equal([]);
    expect(await audit(s.applicationId)).to.deep.equal([]);
    expect((await kybMails()).filter((m) => m.user_id === s.owner.id)).to.deep.equal([]);
  });

  it('two staff deciding the same submitted application at once: exactly one wins, the other gets 409, the workspace follows the winner', async () => {
    const { user: other } = await createUser({ role: 'admin' });
    const staff2 = headersOf(await sessionOf(other));
    const rounds: ['approve' | 'reject' | 'request-changes', 'approve' | 'reject' | 'request-changes'][] = [
      ['approve', 'reject'],
      ['reject', 'approve'],
      ['approve', 'reject'],
      ['request-changes', 'approve'],
      ['approve', 'request-changes'],
    ];
    const bodies = { approve: { risk_tier: 'low' }, reject: { reason: 'Forged deed' }, 'request-changes': { change_requests: CHANGES } };
    const expected = {
      approve: { app: 'approved', kyb: 'verified', sandbox: false, versions: 1, event: 'kyb.approved' },
      reject: { app: 'rejected', kyb: 'rejected', sandbox: true, versions: 1, event: 'kyb.rejected' },
      'request-changes': { app: 'changes_requested', kyb: 'draft', sandbox: true, versions: 2, event: 'kyb.changes_requested' },
    };
    for (const [first, second] of rounds) {
      const { workspace, owner, applicationId } = await submittedWorkspace(client);
      const [r1, r2] = await Promise.all([review(client, staff, applicationId, first, bodies[first]), review(client, staff2, applicationId, second, bodies[second])]);
      const outcomes = [r1, r2].map((r): [number, string | null] => [r.status, (r.body as { error?: { code: string } }).error?.code ?? null]);
      expect(outcomes.map((o) => o[0]).sort(), JSON.stringify(outcomes)).to.deep.equal([200, 409]);
      const loser = r1.status === 409 ? r1 : r2;
      expect(loser.body.error.code).to.equal('INVALID_STATE');
      const winner = r1.status === 200 ? first : second;
      const want = expected[winner];

      const rows = await applicationRows(workspace.id);
      expect(rows, winner).to.have.length(want.versions);
      expect(rows[rows.length - 1]!.status, winner).to.equal(want.app);
      expect(await workspaceRow(workspace.id), winner).to.include({ kyb_status: want.kyb, is_sandbox: want.sandbox });
      expect((await kybEvents(workspace.id)).map((e) => e.event), winner).to.deep.equal([want.event]);
      expect((await events(workspace.id)).filter((e) => e.event === 'workspace.live'), winner).to.have.length(winner === 'approve' ? 1 : 0);
      expect((await audit(applicationId)).map((r) => r.action), winner).to.deep.equal([want.event]);
      expect((await kybMails()).filter((m) => m.user_id === owner.id), winner).to.have.length(1); // the winner's outcome only
    }
  });

  it('e-mails the outcome of each decision to every active member who opted in, and to no one else', async () => {
    const { workspace, owner, h, applicationId } = await submittedWorkspace(client);
    const admin = await addMember(workspace.id, 'admin');
    const finance = await addMember(workspace.id, 'finance');
    const operator = await addMember(workspace.id, 'operator');
    const optedOut = await addMember(workspace.id, 'viewer');
    await db('workspace_members').where({ id: optedOut.member.id }).update({ notify_email: false });
    const invited = await addMember(workspace.id, 'admin', undefined, 'invited');
    const removed = await addMember(workspace.id, 'admin');
    await db('workspace_members').where({ id: removed.member.id }).update({ status: 'removed', removed_at: clock.now() });
    const suspended = await addMember(workspace.id, 'finance');
    await db('workspace_members').where({ id: suspended.member.id }).update({ status: 'suspended' });
    const outsider = await createWorkspace(); // another workspace's opted-in owner hears nothing
    const hear = [owner.id, admin.user.id, finance.user.id, operator.user.id].sort();
    const never = [optedOut.user.id, invited.user.id, removed.user.id, suspended.user.id, outsider.owner.id, staffUser.id];
    const addresses = new Map((await db('users').whereIn('id', hear).select<{ id: string; email: string }[]>('id', 'email')).map((u) => [u.id, u.email]));

    expect(await kybMails(), 'nothing before a decision').to.deep.equal([]);
    let seen = 0;
    const newMails = async () => {
      const all = await kybMails();
      const fresh = all.slice(seen);
      seen = all.length;
      return fresh;
    };
    const check = async (decision: string, mentions: string[]) => {
      const mails = await newMails();
      expect(mails.map((m) => m.user_id).sort(), decision).to.deep.equal(hear);
      for (const id of never) expect(mails.map((m) => m.user_id), decision).to.not.include(id);
      expect(new Set(mails.map((m) => m.template)).size, decision).to.equal(1);
      for (const m of mails) {
        expect(m.to_address).to.equal(addresses.get(m.user_id!));
        expect(m.subject).to.include(workspace.display_name);
        expect(m.body_sealed).to.be.a('string');
        const text = decryptSecret(m.body_sealed!);
        for (const part of mentions) {
          expect(m.body_sealed).to.not.include(part);
          expect(text, decision).to.include(part);
        }
        expect(text).to.not.include('Rina Reviewer');
      }
      return mails[0]!.template;
    };

    // Changes requested: the notes go out.
    expect((await review(client, staff, applicationId, 'request-changes', { change_requests: CHANGES })).status).to.equal(200);
    const t1 = await check('changes requested', [CHANGES[0]!.note, CHANGES[1]!.note]);

    // Rejected: the reason goes out.
    expect((await client.post(`${KYB}/submit`).set(h).send({})).status).to.equal(200);
    expect(await newMails(), 'submitting mails nobody').to.deep.equal([]);
    const v2 = (await applicationRows(workspace.id))[0]!.id;
    expect((await review(client, staff, v2, 'reject', { reason: 'The NPWP belongs to another company' })).status).to.equal(200);
    const t2 = await check('rejected', ['The NPWP belongs to another company']);

    // Approved.
    await patchOk(client, h, { company: { npwp: '0123456789012345' } });
    expect((await client.post(`${KYB}/submit`).set(h).send({})).status).to.equal(200);
    const v3 = (await applicationRows(workspace.id))[0]!.id;
    expect((await review(client, staff, v3, 'approve', { risk_tier: 'standard' })).status).to.equal(200);
    const t3 = await check('approved', []);
    expect(new Set([t1, t2, t3]).size, 'one template per outcome').to.equal(3);

    // Each e-mail has its delivery job.
    const jobs = await db('outbox').where({ job: 'mail.send' }).select<{ payload: { emailId: string } }[]>('payload');
    const ids = (await kybMails()).map((m) => m.id);
    expect(jobs.map((j) => j.payload.emailId)).to.include.members(ids);
    expect(ids).to.have.length(12);
  });

  it("staff see any workspace's application by id, but a workspace never sees another's through the review", async () => {
    const a = await submittedWorkspace(client);
    const b = await submittedWorkspace(client);
    // Approving A leaves B untouched.
    expect((await review(client, staff, a.applicationId, 'approve', { risk_tier: 'standard' })).status).to.equal(200);
    expect(await workspaceRow(b.workspace.id)).to.include({ kyb_status: 'pending', is_sandbox: true });
    expect((await applicationRows(b.workspace.id))[0]).to.include({ status: 'submitted' });
    expect(await kybEvents(b.workspace.id)).to.deep.equal([]);
    // A's owner cannot decide B's application (not staff).
    const r = await review(client, a.h, b.applicationId, 'reject', { reason: 'Competitor' });
    expect([r.status, r.body.error?.code]).to.deep.equal([403, 'FORBIDDEN']);
    expect((await applicationRows(b.workspace.id))[0]).to.include({ status: 'submitted' });
  });
});
