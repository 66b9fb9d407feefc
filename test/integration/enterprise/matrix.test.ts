/**
 * The access matrix (enterprise spec section 5, the route tables of 4.1, 4.2, 4.3, 4.4, 4.5, 4.7, 4.8, 4.9, 4.10):
 * every enterprise route x every credential kind (session, personal key, workspace read
 * key, workspace read+write key) x every role, each answer checked against the spec's
 * rules written out here independently of the code: dashboard-only routes refuse keys
 * (KEY_NOT_ALLOWED), read keys never write (SCOPE_REQUIRED) and act as viewers, a role
 * below the route's answers FORBIDDEN, everything else succeeds (or, where success needs
 * setup the matrix cannot repeat cheaply, passes access and meets the route's own named
 * refusal: `okCode`). Then: nobody reads or changes another workspace's data through any
 * id-taking route or list, KYB documents and applications and deal templates included.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { createUser } from '../../factories/users.js';
import { createUploadRow } from '../../factories/uploads.js';
import { insertDocument, insertNote } from '../../factories/documents.js';
import { createInstruction } from '../../factories/payouts.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, workspaceKey, type Cred } from '../../factories/enterprise.js';
import { routers } from '../../../api/app.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import * as dealService from '../../../shared/deals/service.js';
import * as webhooks from '../../../shared/webhooks/service.js';
import type { MemberRow, WorkspaceRow } from '../../../shared/enterprise/repo.js';
import type { Role } from '../../../shared/enterprise/states.js';
import type { UserRow } from '../../../shared/users/repo.js';

const ROLES: Role[] = ['viewer', 'operator', 'finance', 'admin', 'owner'];
const RANK = (r: Role) => ROLES.indexOf(r);
type CredKind = 'session' | 'personal_key' | 'ws_read' | 'ws_read_write';
const CREDS: CredKind[] = ['session', 'personal_key', 'ws_read', 'ws_read_write'];

interface World {
  workspace: WorkspaceRow;
  owner: UserRow;
  ownerMember: MemberRow;
}
interface Caller {
  user: UserRow;
  member: MemberRow;
}
interface Prepared {
  path: string;
  body?: Record<string, unknown>;
}

interface RouteCase {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** As registered. */
  template: string;
  /** From the spec: lowest role, or 'signed_in' (no workspace needed). */
  role: Role | 'signed_in';
  dashboardOnly: boolean;
  /** The status an allowed caller gets. */
  ok: number;
  /**
   * When success needs setup the matrix cannot repeat cheaply (a file through the upload
   * worker, a complete application): an allowed caller passes access and gets this specific
   * refusal, with status `ok` (e.g. 400 INVALID_BODY for an upload without a file).
   */
  okCode?: string;
  prepare: (w: World, c: Caller) => Promise<Prepared>;
}

const E = '/v1/enterprise';
const fresh = async () => (await createUser()).user;

async function insertCounterparty(workspaceId: string, name = 'PT Pemasok'): Promise<string> {
  const [row] = await db('counterparties')
    .insert({ workspace_id: workspaceId, name, country_code: 'ID', relationship: 'seller', created_at: clock.now(), updated_at: clock.now() })
    .returning<{ id: string }[]>('id');
  return row!.id;
}

/** A document of the workspace's own KYB draft (an upload of `userId`, bound to it as attaching binds it). */
async function kybDocument(workspaceId: string, userId: string): Promise<string> {
  const app = (await db('kyb_applications').where({ workspace_id: workspaceId }).whereNull('counterparty_id').orderBy('version', 'desc').first()) as { id: string };
  const upload = await createUploadRow(userId, { purpose: 'kyb', bound: { kind: 'kyb', id: app.id } });
  const [doc] = await db('kyb_documents')
    .insert({ application_id: app.id, upload_id: upload.id, doc_type: 'bank_proof', person_id: null, created_by: userId, created_at: clock.now() })
    .returning<{ id: string }[]>('id');
  return doc!.id;
}

const templateBody = { name: 'Three stages', milestones: [{ title: 'Down payment', amount_pct: 30 }, { title: 'Delivery', amount_pct: 70 }] };

/** A deal template of the workspace, put straight into the table. */
async function insertTemplate(workspaceId: string, createdBy: string, name = 'Template'): Promise<string> {
  const [row] = await db('deal_templates')
    .insert({ workspace_id: workspaceId, name, milestones: JSON.stringify([{ title: 'All', amount_pct: 100 }]), created_by: createdBy, created_at: clock.now(), updated_at: clock.now() })
    .returning<{ id: string }[]>('id');
  return row!.id;
}

/** A one-milestone deal of the workspace made by its owner through the deal service: draft, active (awaiting funding), funded, or with evidence submitted by another member (an operator). */
async function insertDeal(w: World, stage: 'draft' | 'active' | 'funded' | 'submitted' = 'draft'): Promise<{ id: string; mid: string }> {
  const actor = { workspaceId: w.workspace.id, memberId: w.ownerMember.id, role: w.ownerMember.role, userId: w.owner.id, userName: w.owner.full_name };
  const workspace = (await db('workspaces').where({ id: w.workspace.id }).first()) as WorkspaceRow;
  const made = await dealService.createDeal(undefined, actor, workspace, {
    title: 'Matrix deal',
    counterparty_id: await insertCounterparty(w.workspace.id),
    currency: 'IDR',
    milestones: [{ title: 'Only', amount: 1_000_000 }],
  });
  const deal = { id: made.deal.id, mid: made.milestones[0]!.id };
  if (stage !== 'draft') await dealService.activateDeal(undefined, actor, workspace, deal.id);
  if (stage === 'funded' || stage === 'submitted') await dealService.fundMilestone(undefined, actor, workspace, deal.id, deal.mid, { method: 'sandbox' });
  if (stage === 'submitted') {
    // Submitted by a member who is none of the callers (the submitter cannot decide).
    const op = await addMember(w.workspace.id, 'operator');
    const submitter = { workspaceId: w.workspace.id, memberId: op.member.id, role: op.member.role, userId: op.user.id, userName: op.user.full_name };
    await dealService.submitEvidence(undefined, submitter, workspace, deal.id, deal.mid, { summary: 'Delivered' });
  }
  return deal;
}

/** An active webhook endpoint of the workspace, made by its owner through the service; with a queued test delivery when asked. */
async function insertWebhook(w: World, withDelivery = false): Promise<{ id: string; did?: string }> {
  const actor = { workspaceId: w.workspace.id, memberId: w.ownerMember.id, role: w.ownerMember.role, userId: w.owner.id, userName: w.owner.full_name };
  const { endpoint } = await webhooks.createEndpoint(actor, { url: 'https://hooks.example.com/in', events: ['*'] });
  return { id: endpoint.id, did: withDelivery ? (await webhooks.sendTest(undefined, actor, endpoint.id)).id : undefined };
}

const ROUTES: RouteCase[] = [
  { method: 'POST', template: `${E}/register`, role: 'signed_in', dashboardOnly: true, ok: 201, prepare: () => Promise.resolve({ path: `${E}/register`, body: { legal_name: 'PT Baru', display_name: 'Baru', entity_type: 'cv', nib: '1234567890123' } }) },
  { method: 'GET', template: `${E}/me`, role: 'signed_in', dashboardOnly: true, ok: 200, prepare: () => Promise.resolve({ path: `${E}/me` }) },
  {
    method: 'POST',
    template: `${E}/invites/:memberId/accept`,
    role: 'signed_in',
    dashboardOnly: true,
    ok: 200,
    prepare: async (_w, c) => {
      const other = await createWorkspace();
      const { member } = await addMember(other.workspace.id, 'viewer', c.user, 'invited');
      return { path: `${E}/invites/${member.id}/accept`, body: {} };
    },
  },
  { method: 'GET', template: `${E}/members`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/members` }) },
  { method: 'POST', template: `${E}/members`, role: 'admin', dashboardOnly: true, ok: 201, prepare: async () => ({ path: `${E}/members`, body: { email: (await fresh()).email, role: 'viewer' } }) },
  { method: 'PATCH', template: `${E}/members/me/preferences`, role: 'viewer', dashboardOnly: true, ok: 200, prepare: () => Promise.resolve({ path: `${E}/members/me/preferences`, body: { reminders: false } }) },
  {
    method: 'PATCH',
    template: `${E}/members/:id`,
    role: 'admin',
    dashboardOnly: true,
    ok: 200,
    prepare: async (w) => ({ path: `${E}/members/${(await addMember(w.workspace.id, 'viewer')).member.id}`, body: { role: 'operator' } }),
  },
  {
    method: 'DELETE',
    template: `${E}/members/:id`,
    role: 'admin',
    dashboardOnly: true,
    ok: 200,
    prepare: async (w) => ({ path: `${E}/members/${(await addMember(w.workspace.id, 'viewer')).member.id}` }),
  },
  { method: 'GET', template: `${E}/settings`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/settings` }) },
  { method: 'PATCH', template: `${E}/settings`, role: 'admin', dashboardOnly: true, ok: 200, prepare: () => Promise.resolve({ path: `${E}/settings`, body: { dispute_sla_hours: 48 } }) },
  { method: 'GET', template: `${E}/notifications`, role: 'viewer', dashboardOnly: true, ok: 200, prepare: () => Promise.resolve({ path: `${E}/notifications` }) },
  { method: 'POST', template: `${E}/notifications/read`, role: 'viewer', dashboardOnly: true, ok: 200, prepare: () => Promise.resolve({ path: `${E}/notifications/read`, body: {} }) },
  { method: 'GET', template: `${E}/counterparties`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/counterparties` }) },
  { method: 'POST', template: `${E}/counterparties`, role: 'operator', dashboardOnly: false, ok: 201, prepare: () => Promise.resolve({ path: `${E}/counterparties`, body: { name: 'PT Pemasok' } }) },
  {
    method: 'PATCH',
    template: `${E}/counterparties/:id`,
    role: 'operator',
    dashboardOnly: false,
    ok: 200,
    prepare: async (w) => {
      const [row] = await db('counterparties')
        .insert({ workspace_id: w.workspace.id, name: 'Old', country_code: 'ID', relationship: 'seller', created_at: clock.now(), updated_at: clock.now() })
        .returning<{ id: string }[]>('id');
      return { path: `${E}/counterparties/${row!.id}`, body: { name: 'New name' } };
    },
  },
  // 4.2 KYB: reading is for any member (the full view is a matter of the answer, not of access); every change is admin with a session.
  { method: 'GET', template: `${E}/kyb`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/kyb` }) },
  { method: 'PATCH', template: `${E}/kyb`, role: 'admin', dashboardOnly: true, ok: 200, prepare: () => Promise.resolve({ path: `${E}/kyb`, body: { company: { industry: 'Logistics' } } }) },
  { method: 'POST', template: `${E}/kyb/uploads`, role: 'admin', dashboardOnly: true, ok: 400, okCode: 'INVALID_BODY', prepare: () => Promise.resolve({ path: `${E}/kyb/uploads` }) },
  {
    method: 'POST',
    template: `${E}/kyb/documents`,
    role: 'admin',
    dashboardOnly: true,
    ok: 201,
    prepare: async (_w, c) => ({ path: `${E}/kyb/documents`, body: { upload_id: (await createUploadRow(c.user.id, { purpose: 'kyb' })).id, doc_type: 'bank_proof' } }),
  },
  {
    method: 'DELETE',
    template: `${E}/kyb/documents/:id`,
    role: 'admin',
    dashboardOnly: true,
    ok: 200,
    prepare: async (w) => ({ path: `${E}/kyb/documents/${await kybDocument(w.workspace.id, w.owner.id)}` }),
  },
  {
    method: 'GET',
    template: `${E}/kyb/documents/:id/url`,
    role: 'admin',
    dashboardOnly: true,
    ok: 200,
    prepare: async (w) => ({ path: `${E}/kyb/documents/${await kybDocument(w.workspace.id, w.owner.id)}/url` }),
  },
  { method: 'POST', template: `${E}/kyb/submit`, role: 'admin', dashboardOnly: true, ok: 400, okCode: 'APPLICATION_INCOMPLETE', prepare: () => Promise.resolve({ path: `${E}/kyb/submit`, body: {} }) },
  {
    method: 'POST',
    template: `${E}/counterparties/:id/kyb-invite`,
    role: 'admin',
    dashboardOnly: true,
    ok: 201,
    prepare: async (w) => ({ path: `${E}/counterparties/${await insertCounterparty(w.workspace.id)}/kyb-invite`, body: {} }),
  },
  // 4.3 Templates: viewers read, operators write; keys of both kinds may call them.
  { method: 'GET', template: `${E}/templates`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/templates` }) },
  { method: 'POST', template: `${E}/templates`, role: 'operator', dashboardOnly: false, ok: 201, prepare: () => Promise.resolve({ path: `${E}/templates`, body: templateBody }) },
  { method: 'PATCH', template: `${E}/templates/:id`, role: 'operator', dashboardOnly: false, ok: 200, prepare: async (w) => ({ path: `${E}/templates/${await insertTemplate(w.workspace.id, w.owner.id)}`, body: { name: 'Renamed' } }) },
  { method: 'DELETE', template: `${E}/templates/:id`, role: 'operator', dashboardOnly: false, ok: 200, prepare: async (w) => ({ path: `${E}/templates/${await insertTemplate(w.workspace.id, w.owner.id)}` }) },
  // 4.7 Documents and notes: viewers read, operators add and delete; keys of both kinds may call them.
  { method: 'GET', template: `${E}/documents`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/documents` }) },
  {
    method: 'POST',
    template: `${E}/documents`,
    role: 'operator',
    dashboardOnly: false,
    ok: 201,
    prepare: () => Promise.resolve({ path: `${E}/documents`, body: { title: 'Contract', document_type: 'contract', file_url: 'https://files.example.com/contract.pdf' } }),
  },
  { method: 'DELETE', template: `${E}/documents/:id`, role: 'operator', dashboardOnly: false, ok: 200, prepare: async (w) => ({ path: `${E}/documents/${await insertDocument(w.workspace.id, w.owner.id)}` }) },
  { method: 'GET', template: `${E}/deals/:id/notes`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: async (w) => ({ path: `${E}/deals/${(await insertDeal(w)).id}/notes` }) },
  { method: 'POST', template: `${E}/deals/:id/notes`, role: 'operator', dashboardOnly: false, ok: 201, prepare: async (w) => ({ path: `${E}/deals/${(await insertDeal(w)).id}/notes`, body: { body: 'Matrix note' } }) },
  {
    method: 'DELETE',
    template: `${E}/deals/:id/notes/:nid`,
    role: 'operator',
    dashboardOnly: false,
    ok: 200,
    prepare: async (w) => {
      const d = await insertDeal(w);
      return { path: `${E}/deals/${d.id}/notes/${await insertNote(w.workspace.id, d.id, w.owner.id)}` };
    },
  },
  { method: 'GET', template: `${E}/events`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/events` }) },
  { method: 'GET', template: `${E}/audit/export.csv`, role: 'finance', dashboardOnly: false, ok: 202, prepare: () => Promise.resolve({ path: `${E}/audit/export.csv` }) },
  // 4.8 Reports: viewers read the summary; finance requests the CSV exports (202 with the export id; the exports worker builds them).
  { method: 'GET', template: `${E}/reports/summary`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/reports/summary` }) },
  { method: 'GET', template: `${E}/reports/deals.csv`, role: 'finance', dashboardOnly: false, ok: 202, prepare: () => Promise.resolve({ path: `${E}/reports/deals.csv` }) },
  { method: 'GET', template: `${E}/reports/disbursements.csv`, role: 'finance', dashboardOnly: false, ok: 202, prepare: () => Promise.resolve({ path: `${E}/reports/disbursements.csv` }) },
  { method: 'GET', template: `${E}/api-keys`, role: 'admin', dashboardOnly: true, ok: 200, prepare: () => Promise.resolve({ path: `${E}/api-keys` }) },
  { method: 'POST', template: `${E}/api-keys`, role: 'admin', dashboardOnly: true, ok: 201, prepare: () => Promise.resolve({ path: `${E}/api-keys`, body: { label: 'matrix', scopes: ['read'] } }) },
  {
    method: 'DELETE',
    template: `${E}/api-keys/:id`,
    role: 'admin',
    dashboardOnly: true,
    ok: 200,
    prepare: async (w) => ({ path: `${E}/api-keys/${(await workspaceKey(w.workspace.id, { member: w.ownerMember, user: w.owner })).id}` }),
  },
  // 4.5 Platform fee: any member reads the terms and previews (a preview is a POST: read keys get SCOPE_REQUIRED); the default allocation is the owner's, dashboard only.
  { method: 'GET', template: `${E}/fees`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/fees` }) },
  { method: 'POST', template: `${E}/fees/preview`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/fees/preview`, body: { milestones: [{ amount: 1_000_000 }] } }) },
  { method: 'PUT', template: `${E}/fees/default-allocation`, role: 'owner', dashboardOnly: true, ok: 200, prepare: () => Promise.resolve({ path: `${E}/fees/default-allocation`, body: { fee_allocation: 'seller' } }) },
  // 4.4 Deals: viewers read, operators create, edit, activate, cancel, submit evidence and dispute; finance funds (sandbox); keys of both kinds may call them.
  { method: 'GET', template: `${E}/deals`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/deals` }) },
  { method: 'GET', template: `${E}/deals/:id`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: async (w) => ({ path: `${E}/deals/${(await insertDeal(w)).id}` }) },
  {
    method: 'POST',
    template: `${E}/deals`,
    role: 'operator',
    dashboardOnly: false,
    ok: 201,
    prepare: async (w) => ({ path: `${E}/deals`, body: { title: 'Matrix deal', counterparty_id: await insertCounterparty(w.workspace.id), milestones: [{ title: 'Only', amount: 1_000_000 }] } }),
  },
  { method: 'PATCH', template: `${E}/deals/:id`, role: 'operator', dashboardOnly: false, ok: 200, prepare: async (w) => ({ path: `${E}/deals/${(await insertDeal(w)).id}`, body: { title: 'Renamed deal' } }) },
  { method: 'POST', template: `${E}/deals/:id/milestones`, role: 'operator', dashboardOnly: false, ok: 201, prepare: async (w) => ({ path: `${E}/deals/${(await insertDeal(w)).id}/milestones`, body: { title: 'Extra', amount: 500_000 } }) },
  {
    method: 'PATCH',
    template: `${E}/deals/:id/milestones/:mid`,
    role: 'operator',
    dashboardOnly: false,
    ok: 200,
    prepare: async (w) => {
      const d = await insertDeal(w);
      return { path: `${E}/deals/${d.id}/milestones/${d.mid}`, body: { amount: 2_000_000 } };
    },
  },
  { method: 'POST', template: `${E}/deals/:id/activate`, role: 'operator', dashboardOnly: false, ok: 200, prepare: async (w) => ({ path: `${E}/deals/${(await insertDeal(w)).id}/activate`, body: {} }) },
  { method: 'POST', template: `${E}/deals/:id/cancel`, role: 'operator', dashboardOnly: false, ok: 200, prepare: async (w) => ({ path: `${E}/deals/${(await insertDeal(w)).id}/cancel`, body: {} }) },
  {
    method: 'POST',
    template: `${E}/deals/:id/milestones/:mid/fund`,
    role: 'finance',
    dashboardOnly: false,
    ok: 200,
    prepare: async (w) => {
      const d = await insertDeal(w, 'active');
      return { path: `${E}/deals/${d.id}/milestones/${d.mid}/fund`, body: { method: 'sandbox' } };
    },
  },
  {
    method: 'POST',
    template: `${E}/deals/:id/milestones/:mid/submit-evidence`,
    role: 'operator',
    dashboardOnly: false,
    ok: 200,
    prepare: async (w) => {
      const d = await insertDeal(w, 'funded');
      return { path: `${E}/deals/${d.id}/milestones/${d.mid}/submit-evidence`, body: { summary: 'Delivered' } };
    },
  },
  {
    method: 'POST',
    template: `${E}/deals/:id/milestones/:mid/dispute`,
    role: 'operator',
    dashboardOnly: false,
    ok: 200,
    prepare: async (w) => {
      const d = await insertDeal(w, 'funded');
      return { path: `${E}/deals/${d.id}/milestones/${d.mid}/dispute`, body: { reason: 'Damaged' } };
    },
  },
  // 4.6 Approvals: viewers read the queue and any milestone's approval detail; finance decides (the evidence is another member's).
  { method: 'GET', template: `${E}/approvals`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/approvals` }) },
  { method: 'GET', template: `${E}/approvals/:milestoneId`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: async (w) => ({ path: `${E}/approvals/${(await insertDeal(w, 'funded')).mid}` }) },
  {
    method: 'POST',
    template: `${E}/approvals/:milestoneId/decide`,
    role: 'finance',
    dashboardOnly: false,
    ok: 200,
    prepare: async (w) => ({ path: `${E}/approvals/${(await insertDeal(w, 'submitted')).mid}/decide`, body: { decision: 'approve' } }),
  },
  // 4.6 Releases and payouts: finance releases an approved milestone to a verified instruction of the deal's counterparty; viewers list payouts.
  {
    method: 'POST',
    template: `${E}/deals/:id/milestones/:mid/release`,
    role: 'finance',
    dashboardOnly: false,
    ok: 200,
    prepare: async (w) => {
      const d = await insertDeal(w, 'funded');
      await db('deal_milestones').where({ id: d.mid }).update({ status: 'approved', approved_at: new Date() });
      const m = (await db('deal_milestones as m').join('deals as d', 'd.id', 'm.deal_id').where('m.id', d.mid).first<{ payout_amount: string; counterparty_id: string } | undefined>('m.payout_amount', 'd.counterparty_id'))!;
      const instruction = await createInstruction(w.workspace, m.counterparty_id, { verified: true });
      return { path: `${E}/deals/${d.id}/milestones/${d.mid}/release`, body: { splits: [{ payout_instruction_id: instruction.id, amount: Number(m.payout_amount) }] } };
    },
  },
  { method: 'GET', template: `${E}/payouts`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/payouts` }) },
  // 4.9 Overview and reconciliation: any member reads them (keys of both kinds too).
  { method: 'GET', template: `${E}/overview`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/overview` }) },
  { method: 'GET', template: `${E}/reconciliation`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/reconciliation` }) },
  // 4.6 Payout instructions: viewers read, finance creates, changes and deletes; keys of both kinds may call them.
  { method: 'GET', template: `${E}/payout-instructions`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/payout-instructions` }) },
  {
    method: 'GET',
    template: `${E}/payout-instructions/:id`,
    role: 'viewer',
    dashboardOnly: false,
    ok: 200,
    prepare: async (w) => ({ path: `${E}/payout-instructions/${(await createInstruction(w.workspace, await insertCounterparty(w.workspace.id))).id}` }),
  },
  {
    method: 'POST',
    template: `${E}/payout-instructions`,
    role: 'finance',
    dashboardOnly: false,
    ok: 201,
    prepare: async (w) => ({
      path: `${E}/payout-instructions`,
      body: { label: 'Main account', counterparty_id: await insertCounterparty(w.workspace.id), bank_name: 'BCA', account_number: '1234567890', account_holder: 'PT Pemasok' },
    }),
  },
  {
    method: 'PATCH',
    template: `${E}/payout-instructions/:id`,
    role: 'finance',
    dashboardOnly: false,
    ok: 200,
    prepare: async (w) => ({ path: `${E}/payout-instructions/${(await createInstruction(w.workspace, await insertCounterparty(w.workspace.id), { verified: true })).id}`, body: { bank_name: 'BNI' } }),
  },
  {
    method: 'DELETE',
    template: `${E}/payout-instructions/:id`,
    role: 'finance',
    dashboardOnly: false,
    ok: 200,
    prepare: async (w) => ({ path: `${E}/payout-instructions/${(await createInstruction(w.workspace, await insertCounterparty(w.workspace.id))).id}` }),
  },
  // 4.11 Webhooks: viewers read endpoints and their deliveries; admins manage them, from the dashboard only.
  { method: 'GET', template: `${E}/webhooks`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: () => Promise.resolve({ path: `${E}/webhooks` }) },
  { method: 'POST', template: `${E}/webhooks`, role: 'admin', dashboardOnly: true, ok: 201, prepare: () => Promise.resolve({ path: `${E}/webhooks`, body: { url: 'https://hooks.example.com/in', events: ['*'] } }) },
  { method: 'PATCH', template: `${E}/webhooks/:id`, role: 'admin', dashboardOnly: true, ok: 200, prepare: async (w) => ({ path: `${E}/webhooks/${(await insertWebhook(w)).id}`, body: { status: 'paused' } }) },
  { method: 'DELETE', template: `${E}/webhooks/:id`, role: 'admin', dashboardOnly: true, ok: 200, prepare: async (w) => ({ path: `${E}/webhooks/${(await insertWebhook(w)).id}` }) },
  { method: 'POST', template: `${E}/webhooks/:id/rotate-secret`, role: 'admin', dashboardOnly: true, ok: 200, prepare: async (w) => ({ path: `${E}/webhooks/${(await insertWebhook(w)).id}/rotate-secret`, body: {} }) },
  { method: 'POST', template: `${E}/webhooks/:id/test`, role: 'admin', dashboardOnly: true, ok: 202, prepare: async (w) => ({ path: `${E}/webhooks/${(await insertWebhook(w)).id}/test`, body: {} }) },
  { method: 'GET', template: `${E}/webhooks/:id/deliveries`, role: 'viewer', dashboardOnly: false, ok: 200, prepare: async (w) => ({ path: `${E}/webhooks/${(await insertWebhook(w, true)).id}/deliveries` }) },
  {
    method: 'POST',
    template: `${E}/webhooks/:id/deliveries/:did/redeliver`,
    role: 'admin',
    dashboardOnly: true,
    ok: 202,
    prepare: async (w) => {
      const hook = await insertWebhook(w, true);
      return { path: `${E}/webhooks/${hook.id}/deliveries/${hook.did!}/redeliver`, body: {} };
    },
  },
];

/** The spec's answer for this credential and role (section 5), without looking at the code. */
function expected(c: RouteCase, cred: CredKind, role: Role): { status: number; code?: string } {
  const isKey = cred !== 'session';
  if (isKey && c.dashboardOnly) return { status: 403, code: 'KEY_NOT_ALLOWED' };
  if (cred === 'ws_read' && c.method !== 'GET') return { status: 403, code: 'SCOPE_REQUIRED' };
  const acting = cred === 'ws_read' ? 'viewer' : role;
  if (c.role !== 'signed_in' && RANK(acting) < RANK(c.role)) return { status: 403, code: 'FORBIDDEN' };
  return c.okCode ? { status: c.ok, code: c.okCode } : { status: c.ok };
}

async function credentialFor(kind: CredKind, w: World, caller: Caller): Promise<Cred> {
  switch (kind) {
    case 'session':
      return sessionOf(caller.user);
    case 'personal_key':
      return personalKeyOf(caller.user);
    case 'ws_read':
      return { kind: 'workspace_key', key: (await workspaceKey(w.workspace.id, caller, ['read'])).key };
    case 'ws_read_write':
      return { kind: 'workspace_key', key: (await workspaceKey(w.workspace.id, caller, ['read', 'write'])).key };
  }
}

function send(client: ReturnType<typeof api>, method: RouteCase['method'], path: string, headers: Record<string, string>, body?: Record<string, unknown>) {
  const req =
    method === 'GET' ? client.get(path) : method === 'POST' ? client.post(path) : method === 'PUT' ? client.put(path) : method === 'PATCH' ? client.patch(path) : client.delete(path);
  req.set(headers);
  return body === undefined ? req : req.send(body);
}

describe('enterprise access matrix', () => {
  const client = api();

  it('the table names every registered /v1/enterprise route', () => {
    const registered = new Set<string>();
    for (const router of routers) {
      for (const layer of router.stack) {
        const path = String(layer.path);
        if (!path.startsWith(E)) continue;
        for (const method of layer.methods) if (method !== 'HEAD') registered.add(`${method} ${path}`);
      }
    }
    expect([...registered].sort()).to.deep.equal(ROUTES.map((c) => `${c.method} ${c.template}`).sort());
  });

  for (const c of ROUTES) {
    for (const cred of CREDS) {
      it(`${c.method} ${c.template} with ${cred} for every role`, async () => {
        const w = await createWorkspace();
        const callers = new Map<Role, Caller>([['owner', { user: w.owner, member: w.ownerMember }]]);
        for (const role of ROLES.filter((r) => r !== 'owner')) callers.set(role, await addMember(w.workspace.id, role));
        for (const role of ROLES) {
          const caller = callers.get(role)!;
          const credential = await credentialFor(cred, w, caller);
          const prepared = await c.prepare(w, caller);
          const res = await send(client, c.method, prepared.path, headersOf(credential), prepared.body);
          const want = expected(c, cred, role);
          const label = `${role}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
          expect(res.status, label).to.equal(want.status);
          expect(res.headers['cache-control'], label).to.equal('private, no-store');
          if (want.code) {
            expect(res.body.error.code, label).to.equal(want.code);
            expect(res.body, label).to.not.have.property('data');
          } else expect(res.body.success, label).to.equal(true);
        }
      });
    }
  }

  it('a request without credentials answers 401 on every route', async () => {
    for (const c of ROUTES) {
      const res = await send(client, c.method, c.template.replace(/:\w+/g, '5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3'), {}, c.method === 'GET' ? undefined : {});
      expect(res.status, `${c.method} ${c.template}`).to.equal(401);
      expect(res.headers['cache-control']).to.equal('private, no-store');
    }
  });

  describe("nobody reads or changes another workspace's data", () => {
    async function twoWorkspaces() {
      const a = await createWorkspace(undefined, 'A');
      const b = await createWorkspace(undefined, 'B');
      const bMember = await addMember(b.workspace.id, 'viewer');
      const [cp] = await db('counterparties')
        .insert({ workspace_id: b.workspace.id, name: 'B secret supplier', country_code: 'ID', relationship: 'seller', created_at: clock.now(), updated_at: clock.now() })
        .returning<{ id: string }[]>('id');
      const bKey = await workspaceKey(b.workspace.id, { member: b.ownerMember, user: b.owner }, ['read']);
      // B's own KYB draft, with distinctive data and one document.
      await db('kyb_applications').where({ workspace_id: b.workspace.id }).update({ legal_name: 'PT B Rahasia', industry: 'B secret industry' });
      const bDocId = await kybDocument(b.workspace.id, b.owner.id);
      const bApp = (await db('kyb_applications').where({ workspace_id: b.workspace.id }).first()) as { id: string };
      const bTemplateId = await insertTemplate(b.workspace.id, b.owner.id, 'B secret template');
      return { a, b, bMember, cpId: cp!.id, bKeyId: bKey.id, bDocId, bAppId: bApp.id, bTemplateId };
    }

    const snapshot = async (workspaceId: string) => ({
      members: await db('workspace_members').where({ workspace_id: workspaceId }).orderBy('id'),
      cps: await db('counterparties').where({ workspace_id: workspaceId }).orderBy('id'),
      keys: await db('workspace_api_keys').where({ workspace_id: workspaceId }).orderBy('id'),
      events: await db('workspace_events').where({ workspace_id: workspaceId }).orderBy('seq'),
      ws: await db('workspaces').where({ id: workspaceId }),
      kyb: await db('kyb_applications').where({ workspace_id: workspaceId }).orderBy('id'),
      kybDocs: await db('kyb_documents').join('kyb_applications as a', 'a.id', 'kyb_documents.application_id').where('a.workspace_id', workspaceId).orderBy('kyb_documents.id').select('kyb_documents.*'),
      kybInvites: await db('kyb_invites').where({ workspace_id: workspaceId }).orderBy('id'),
      templates: await db('deal_templates').where({ workspace_id: workspaceId }).orderBy('id'),
    });

    it("an owner of A gets 404 NOT_FOUND for every B id and changes nothing in B", async () => {
      const { a, b, bMember, cpId, bKeyId, bDocId, bTemplateId } = await twoWorkspaces();
      const s = await sessionOf(a.owner);
      const before = await snapshot(b.workspace.id);
      const bUploads = await db('uploads').where({ user_id: b.owner.id }).orderBy('id');
      const attempts: [RouteCase['method'], string, Record<string, unknown> | undefined][] = [
        ['PATCH', `${E}/members/${bMember.member.id}`, { role: 'admin' }],
        ['DELETE', `${E}/members/${bMember.member.id}`, undefined],
        ['DELETE', `${E}/members/${b.ownerMember.id}`, undefined],
        ['PATCH', `${E}/counterparties/${cpId}`, { name: 'Mine' }],
        ['DELETE', `${E}/api-keys/${bKeyId}`, undefined],
        ['POST', `${E}/invites/${bMember.member.id}/accept`, {}],
        ['POST', `${E}/counterparties/${cpId}/kyb-invite`, {}],
        ['DELETE', `${E}/kyb/documents/${bDocId}`, undefined],
        ['GET', `${E}/kyb/documents/${bDocId}/url`, undefined],
        ['PATCH', `${E}/templates/${bTemplateId}`, { name: 'Mine' }],
        ['DELETE', `${E}/templates/${bTemplateId}`, undefined],
      ];
      for (const [method, path, body] of attempts) {
        const res = await send(client, method, path, headersOf(s), body);
        expect(res.status, `${method} ${path}`).to.equal(404);
        expect(res.body.error.code).to.equal('NOT_FOUND');
        expect(JSON.stringify(res.body)).to.not.include('B secret supplier');
      }
      // An upload of B's owner cannot be attached to A's application (it is not the caller's).
      const bLoose = await createUploadRow(b.owner.id, { purpose: 'kyb' });
      const stolen = await send(client, 'POST', `${E}/kyb/documents`, headersOf(s), { upload_id: bLoose.id, doc_type: 'bank_proof' });
      expect(stolen.status, JSON.stringify(stolen.body)).to.equal(403);
      expect(stolen.body.error.code).to.equal('FILE_NOT_OWNED');
      expect(await snapshot(b.workspace.id)).to.deep.equal(before);
      expect(await db('uploads').where({ user_id: b.owner.id }).whereNot({ id: bLoose.id }).orderBy('id')).to.deep.equal(bUploads);
      expect(await db('uploads').where({ id: bLoose.id }).first()).to.include({ bound_at: null });
    });

    it("A's lists and feed never include B's rows", async () => {
      const { a, b, bDocId, bAppId, bTemplateId } = await twoWorkspaces();
      const s = await sessionOf(a.owner);
      const bIds = [b.workspace.id, b.owner.id, b.ownerMember.id, 'B secret supplier', bDocId, bAppId, 'PT B Rahasia', 'B secret industry', bTemplateId, 'B secret template'];
      for (const path of ['/members', '/counterparties', '/events?limit=100', '/api-keys', '/notifications', '/settings', '/me', '/kyb', '/templates']) {
        const res = await client.get(`${E}${path}`).set(headersOf(s));
        expect(res.status, path).to.equal(200);
        for (const id of bIds) expect(JSON.stringify(res.body), `${path} leaks ${id}`).to.not.include(id);
      }
      // A's GET /kyb is A's own application.
      const kyb = await client.get(`${E}/kyb`).set(headersOf(s));
      const aApp = (await db('kyb_applications').where({ workspace_id: a.workspace.id }).first()) as { id: string };
      expect(kyb.body.data.application.id).to.equal(aApp.id);
      expect(kyb.body.data.subject.id).to.equal(a.workspace.id);
      // Naming B's workspace explicitly is refused.
      const res = await client.get(`${E}/counterparties`).set(headersOf(s, b.workspace.id));
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('NO_WORKSPACE');
    });
  });
});
