/**
 * Bursts of keyed requests against every keyed route (ARCHITECTURE rule 7). With an
 * Idempotency-Key a request holds one pooled connection for its whole life; a handler that
 * asks the pool for a second one deadlocks the pool once about pool-size such requests of
 * one ordinary account run at once, and every other user's request times out. The pool
 * guard turns that into a 500 at once in test, so here each keyed route, driven deep into
 * its service with real resources in the right state, takes a burst of more parallel keyed
 * requests than the pool holds, from one account, while another user keeps reading: no
 * burst request may answer 5xx, at least one must succeed, every read answers 2xx within
 * a second.
 *
 * The keyed routes are found from the routers (a layer whose stack holds an `idempotent()`
 * middleware), so a new keyed route fails the first test until it has an entry in ROUTES.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createApp, pageRouters, routers } from '../../../api/app.js';
import type { Middleware } from '../../../api/context.js';
import { AUTHENTICATED_LIMIT } from '../../../api/middleware/auth.js';
import { isIdempotentMiddleware } from '../../../api/middleware/idempotency.js';
import { LIMITS } from '../../../api/routes/enterprise.js';
import { LIMITS as DEAL_LIMITS } from '../../../api/routes/deals.js';
import { LIMITS as APPROVAL_LIMITS } from '../../../api/routes/approvals.js';
import { LIMITS as KYB_LIMITS } from '../../../api/routes/kyb.js';
import { LIMITS as TEMPLATE_LIMITS } from '../../../api/routes/templates.js';
import { LIMITS as INSTRUCTION_LIMITS } from '../../../api/routes/payout-instructions.js';
import { LIMITS as DOCUMENT_LIMITS } from '../../../api/routes/documents.js';
import { LIMITS as WEBHOOK_LIMITS } from '../../../api/routes/enterprise-webhooks.js';
import { createSession } from '../../../shared/auth/sessions.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import * as deals from '../../../shared/deals/service.js';
import { confirmFunding } from '../../../shared/deals/staff.js';
import { releaseMilestone } from '../../../shared/payouts/release.js';
import type { WorkspaceActor } from '../../../shared/enterprise/access.js';
import { createCounterparty } from '../../../shared/enterprise/counterparties.js';
import { workspaceById, type WorkspaceRow } from '../../../shared/enterprise/repo.js';
import type { Role } from '../../../shared/enterprise/states.js';
import { rotateLinkSecret } from '../../../shared/escrows/links.js';
import * as escrows from '../../../shared/escrows/service.js';
import type { EscrowStatus } from '../../../shared/escrows/states.js';
import { createInvite, INVITES_PER_WORKSPACE_PER_DAY, openInvite } from '../../../shared/kyb/invites.js';
import * as kyb from '../../../shared/kyb/service.js';
import { MAX_DOCUMENTS } from '../../../shared/kyb/slots.js';
import * as orders from '../../../shared/orders/service.js';
import type { OrderRow } from '../../../shared/orders/repo.js';
import { closeSandboxGateway } from '../../../shared/payments/gateways/sandbox.js';
import * as manual from '../../../shared/payments/manual.js';
import * as payments from '../../../shared/payments/service.js';
import type { UploadRow } from '../../../shared/uploads/repo.js';
import { serializeUpload } from '../../../shared/uploads/serialize.js';
import { RATE } from '../../../shared/uploads/service.js';
import * as users from '../../../shared/users/repo.js';
import * as webhooks from '../../../shared/webhooks/service.js';
import type { UserRole, UserRow } from '../../../shared/users/repo.js';
import { addMember, createWorkspace, workspaceKey } from '../../factories/enterprise.js';
import { createEscrow, signFields, type MadeEscrow } from '../../factories/escrows.js';
import { createOrder } from '../../factories/orders.js';
import { createInstruction } from '../../factories/payouts.js';
import { createGateway } from '../../factories/payments.js';
import { insertDocument, insertNote } from '../../factories/documents.js';
import { createUploadRow } from '../../factories/uploads.js';
import { createWithdrawal, freshBank } from '../../factories/withdrawals.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { photo } from '../../helpers/hostile-files.js';
import { fundUser } from '../../helpers/platform-factories.js';
import { startUploads, type Harness } from '../uploads/support.js';

/** More parallel keyed requests than the pool has connections. */
const BURST = Math.max(24, 2 * config.databasePoolMax);
/** Every read of the other user answers within this. */
const READ_WITHIN_MS = 1000;
/** A burst request that has no answer by then is a hung pool. */
const ANSWER_WITHIN_MS = 15_000;

// ---- The keyed routes ---------------------------------------------------------------------

/** `METHOD /template` of every route whose middleware stack holds an `idempotent()` middleware. */
function keyedRoutes(): string[] {
  const keyed = new Set<string>();
  for (const router of [...routers, ...pageRouters]) {
    for (const layer of router.stack) {
      if (!layer.stack.some((fn) => isIdempotentMiddleware(fn))) continue;
      for (const method of layer.methods) if (method !== 'HEAD') keyed.add(`${method} ${String(layer.path)}`);
    }
  }
  return [...keyed].sort();
}

// ---- Requests -------------------------------------------------------------------------------

interface Part {
  bytes: Buffer;
  filename: string;
  contentType: string;
}

interface BurstRequest {
  path: string;
  /** A JSON body (default `{}`), or one multipart file in field `file`. */
  body?: unknown;
  file?: Part;
}

interface Burst {
  /** The one caller of the whole burst (an ordinary account, or one admin for staff routes). */
  headers: Record<string, string>;
  /** The route's own per-caller limits: the burst stays under them (all above the default pool of 10). */
  limits?: number[];
  /** The i-th request of the burst. */
  request: (i: number) => BurstRequest;
  /** When given, every answer is one of these (`201`, `409 INVALID_STATE`): the route's success and the spec's answers to a collision. */
  answers?: string[];
}

interface Answer {
  status: number;
  text: string;
  ms: number;
}

function multipart(part: Part): { body: Buffer; contentType: string } {
  const boundary = `----burst${randomUUID().replace(/-/g, '')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${part.filename}"\r\nContent-Type: ${part.contentType}\r\n\r\n`;
  return {
    body: Buffer.concat([Buffer.from(head), part.bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

function send(port: number, agent: http.Agent, method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const all: http.OutgoingHttpHeaders = { ...headers };
    if (body) all['content-length'] = String(body.length);
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: all, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.setTimeout(ANSWER_WITHIN_MS, () => req.destroy(new Error(`${method} ${path}: no answer within ${ANSWER_WITHIN_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

function encode(r: BurstRequest): { body: Buffer; contentType: string } {
  if (r.file) return multipart(r.file);
  return { body: Buffer.from(JSON.stringify(r.body ?? {})), contentType: 'application/json' };
}

const bearer = (key: string): Record<string, string> => ({ Authorization: `Bearer ${key}` });

/** A session of the dashboard (enterprise routes that refuse keys), with its CSRF token. */
async function sessionHeaders(user: UserRow, workspaceId?: string): Promise<Record<string, string>> {
  const s = await createSession(db, user.id, { ip: '127.0.0.1', userAgent: 'pool-burst' });
  return {
    Cookie: `${config.sessionCookieName}=${s.token}`,
    'X-CSRF-Token': s.csrfToken,
    ...(workspaceId ? { 'X-Enterprise-Account': workspaceId } : {}),
  };
}

// ---- Fixtures (made fresh for each route: the database is truncated before every test) ----

interface Account {
  user: UserRow;
  headers: Record<string, string>;
}

let userSeq = 0;

/** An active, verified account without a password (callers use keys or sessions; no argon2 per fixture). */
async function person(role: UserRole = 'user'): Promise<UserRow> {
  userSeq += 1;
  const tag = `${userSeq}_${randomUUID().slice(0, 8)}`;
  const now = clock.now();
  return users.insert(db, {
    email: `burst_${tag}@example.com`,
    username: `burst_${tag}`,
    full_name: `Burst ${userSeq}`,
    role,
    status: 'active',
    email_verified_at: now,
    created_at: now,
    updated_at: now,
  });
}

async function account(role: UserRole = 'user'): Promise<Account> {
  const user = await person(role);
  return { user, headers: bearer(await issueKey(user.id)) };
}

/** A deal template of the workspace, put straight into the table. */
async function templateOf(workspaceId: string, createdBy: string): Promise<string> {
  const [row] = await db('deal_templates')
    .insert({ workspace_id: workspaceId, name: 'Templat', milestones: JSON.stringify([{ title: 'Semua', amount_pct: 100 }]), created_by: createdBy, created_at: clock.now(), updated_at: clock.now() })
    .returning<{ id: string }[]>('id');
  return row!.id;
}

async function funded(amount: number): Promise<UserRow> {
  const user = await person();
  await fundUser(user.id, amount);
  return user;
}

async function keyed(user: UserRow): Promise<Account> {
  return { user, headers: bearer(await issueKey(user.id)) };
}

const asUser = (user: UserRow) => ({ userId: user.id, role: 'user' as const });
const staffOf = (admin: UserRow) => ({ actorId: admin.id, ip: '127.0.0.1', note: 'fixture' });

const MANUAL = 'manual_bca';

/** The gateway rows: the sandbox (qris and the rest) and a manual bank transfer. */
async function gateways(): Promise<void> {
  await createGateway({ provider: 'sandbox', feePercent: '0.7', sortOrder: 1 });
  await createGateway({
    provider: MANUAL,
    displayName: 'Transfer BCA',
    isManual: true,
    methods: ['bank_transfer'],
    feePercent: '0',
    feeFixed: 2500,
    config: { bank_accounts: [{ bank: 'BCA', account_number: '8800112233', account_name: 'PT Rekber Aman' }], instructions: 'Transfer' },
    sortOrder: 0,
  });
}

async function escrowIn(status: EscrowStatus): Promise<MadeEscrow> {
  return createEscrow({ status, category: 'goods', buyer: await person(), seller: await person() });
}

/** A pending manual transfer for an escrow, started by its buyer. */
async function manualEscrowPayment(): Promise<{ made: MadeEscrow; paymentId: string }> {
  await gateways();
  const made = await escrowIn('pending_payment');
  const p = await payments.pay(undefined, asUser(made.buyer), made.escrow.id, { method: 'bank_transfer', provider: MANUAL });
  return { made, paymentId: p.id };
}

/** A manual transfer claimed after the escrow was paid another way (staff credit or return it). */
async function lateClaim(): Promise<string> {
  const { made, paymentId } = await manualEscrowPayment();
  await escrows.markPaid(undefined, made.escrow.id, { reference: `other-${made.escrow.id}` });
  const claimed = await manual.claimPayment(undefined, asUser(made.buyer), made.escrow.id, { reference: 'late' });
  expect(claimed.late, 'the fixture claim is late').to.equal(true);
  return paymentId;
}

/** A claimed manual transfer of an escrow, waiting for staff. */
async function claimedEscrowPayment(): Promise<string> {
  const { made, paymentId } = await manualEscrowPayment();
  await manual.claimPayment(undefined, asUser(made.buyer), made.escrow.id, { reference: 'BCA 123' });
  return paymentId;
}

/** An order of a new buyer, moved to `status`. */
async function orderIn(status: 'awaiting_payment' | 'manual_pending' | 'pending_review' | 'paid' | 'processing'): Promise<{ buyer: UserRow; order: OrderRow }> {
  const buyer = await person();
  const order = await createOrder(buyer.id);
  const actor = asUser(buyer);
  if (status === 'manual_pending' || status === 'pending_review') {
    await gateways();
    await orders.pay(undefined, actor, order.id, { method: 'bank_transfer', provider: MANUAL });
    if (status === 'pending_review') await orders.claimPayment(undefined, actor, order.id, { reference: 'BCA 456' });
  }
  if (status === 'paid' || status === 'processing') {
    await fundUser(buyer.id, order.total);
    await orders.pay(undefined, actor, order.id, { method: 'balance' });
    if (status === 'processing') await orders.startProcessing(undefined, staffOf(await person('admin')), order.id);
  }
  return { buyer, order };
}

/** A workspace with its owner, and an active admin member (the caller of admin routes). */
async function workspaceWithAdmin() {
  const ws = await createWorkspace(await person());
  const admin = await addMember(ws.workspace.id, 'admin', await person());
  return { ...ws, admin, headers: await sessionHeaders(admin.user, ws.workspace.id) };
}

/** A webhook endpoint of a workspace with an admin (made through the service), and a queued test delivery of it. */
async function webhookOf(ws: Awaited<ReturnType<typeof workspaceWithAdmin>>): Promise<{ id: string; did: string }> {
  const actor = { workspaceId: ws.workspace.id, memberId: ws.admin.member.id, role: ws.admin.member.role, userId: ws.admin.user.id, userName: ws.admin.user.full_name };
  const { endpoint } = await webhooks.createEndpoint(actor, { url: 'https://hooks.example.com/in', events: ['*'] });
  return { id: endpoint.id, did: (await webhooks.sendTest(undefined, actor, endpoint.id)).id };
}

/** The operator starts buying a paid order (`start`, and its older name `process`). */
async function startBurst(move: 'start' | 'process'): Promise<Burst> {
  const { order } = await orderIn('paid');
  return { headers: (await account('admin')).headers, request: () => ({ path: `/v1/admin/jasabayar/${order.id}/${move}`, body: { note: 'dibeli' } }) };
}

// ---- KYB and deals (the applicant, the workspace and its counterparty, made through their services) --

type MadeWorkspace = Awaited<ReturnType<typeof createWorkspace>>;

/** The workspace's owner as the services take their caller. */
const ownerOf = (ws: MadeWorkspace): WorkspaceActor => ({
  workspaceId: ws.workspace.id,
  memberId: ws.ownerMember.id,
  role: ws.ownerMember.role,
  userId: ws.owner.id,
  userName: ws.owner.full_name,
});

/** A seller counterparty of the workspace (not verified). */
async function counterpartyOf(ws: MadeWorkspace, email?: string): Promise<string> {
  const cp = await createCounterparty(undefined, ownerOf(ws), { name: 'Pemasok Jaya', country_code: 'ID', relationship: 'seller', ...(email ? { email } : {}) });
  return cp.id;
}

/** Session headers of a new active member of the workspace with `role`. */
async function memberHeaders(workspaceId: string, role: Role): Promise<Record<string, string>> {
  const m = await addMember(workspaceId, role, await person());
  return sessionHeaders(m.user, workspaceId);
}

const KYB_DIRECTOR = {
  full_name: 'Budi Santoso',
  position: 'Direktur Utama',
  roles: ['director', 'beneficial_owner'],
  id_type: 'nik',
  id_number: '3171234567890123',
  nationality: 'ID',
  ownership_pct: 60,
} satisfies kyb.PersonInput;

/** Everything a pt needs besides the documents (registration stored the workspace's legal name, entity type, NIB and country). */
const KYB_DRAFT = {
  company: { npwp: '012345678901234', address: 'Jl. Jend. Sudirman 1, Jakarta', industry: 'Retail', monthly_volume: '1b_to_10b' },
  people: [KYB_DIRECTOR],
  bank: { bank_name: 'BCA', bank_account_holder: 'PT Contoh', account_number: '0987654321012' },
} satisfies kyb.DraftInput;

/** The company documents of a pt, required and optional, and the director's identity document. */
const KYB_DOCS = ['akta_pendirian', 'sk_kemenkumham', 'bank_proof', 'akta_perubahan', 'ktp'] as const;

/** A KYB application as its applicant fills it: the workspace's own (its owner) or a counterparty's, opened (claimed) from a verification link by a new user. */
interface KybCase {
  ws: MadeWorkspace;
  subject: kyb.KybSubject;
  caller: kyb.KybCaller;
  applicant: UserRow;
  /** The applicant's session (with the workspace for its own application). */
  headers: Record<string, string>;
  /** The routes of this application: /v1/enterprise/kyb or /v1/kyb/invite/<token>. */
  base: string;
  counterpartyId: string | null;
  personId: string;
  applicationId: string;
}

/**
 * Company, one director and bank filled; then per `stage` no document, every required
 * one (complete), or complete and submitted.
 */
async function kybApplication(stage: 'draft' | 'complete' | 'submitted', side: 'account' | 'counterparty' = 'account'): Promise<KybCase> {
  const ws = await createWorkspace(await person());
  let applicant = ws.owner;
  let subject: kyb.KybSubject = { type: 'account', workspace: ws.workspace, counterparty: null, invitedBy: null };
  let base = '/v1/enterprise/kyb';
  let company: kyb.DraftInput['company'] = KYB_DRAFT.company;
  if (side === 'counterparty') {
    const { token } = await createInvite(undefined, ownerOf(ws), await counterpartyOf(ws));
    applicant = await person();
    subject = await openInvite(token, { userId: applicant.id });
    base = `/v1/kyb/invite/${token}`;
    company = { ...company, legal_name: 'PT Pemasok Jaya', entity_type: 'pt', nib: '9876543210987' };
  }
  const caller: kyb.KybCaller = { userId: applicant.id, userName: applicant.full_name, full: true, mayEdit: true };
  const drafted = await kyb.saveDraft(undefined, caller, subject, { ...KYB_DRAFT, company });
  const personId = drafted.application.people[0]!.id;
  const made: KybCase = {
    ws,
    subject: drafted.subject,
    caller,
    applicant,
    headers: await sessionHeaders(applicant, side === 'account' ? ws.workspace.id : undefined),
    base,
    counterpartyId: subject.counterparty?.id ?? null,
    personId,
    applicationId: drafted.application.id,
  };
  if (stage === 'draft') return made;
  for (const docType of ['akta_pendirian', 'sk_kemenkumham', 'bank_proof', 'ktp'] as const) await kybAttach(made, docType);
  if (stage === 'submitted') await kyb.submit(undefined, caller, made.subject);
  return made;
}

/** A fresh KYB upload of the applicant attached to the draft as `docType`; the document's id. */
async function kybAttach(app: KybCase, docType: (typeof KYB_DOCS)[number]): Promise<string> {
  const up = await createUploadRow(app.applicant.id, { purpose: 'kyb' });
  const view = await kyb.attachDocument(undefined, app.caller, app.subject, { upload_id: up.id, doc_type: docType, ...(docType === 'ktp' ? { person_id: app.personId } : {}) });
  return view.documents.find((d) => d.upload_id === up.id)!.id;
}

/** A burst attaching a fresh upload each (company documents and the director's KTP in turn). */
async function kybAttachBurst(app: KybCase): Promise<Burst> {
  const ups: UploadRow[] = [];
  for (let i = 0; i < BURST; i++) ups.push(await createUploadRow(app.applicant.id, { purpose: 'kyb' }));
  return {
    headers: app.headers,
    limits: [KYB_LIMITS.attach.points],
    answers: ['201'],
    request: (i) => {
      const docType = KYB_DOCS[i % KYB_DOCS.length]!;
      return { path: `${app.base}/documents`, body: { upload_id: ups[i]!.id, doc_type: docType, ...(docType === 'ktp' ? { person_id: app.personId } : {}) } };
    },
  };
}

/** A burst removing the draft's documents, a different one each while there are enough (at most MAX_DOCUMENTS per version). */
async function kybRemoveBurst(app: KybCase): Promise<Burst> {
  const ids: string[] = [];
  for (let i = 0; i < Math.min(BURST, MAX_DOCUMENTS); i++) ids.push(await kybAttach(app, KYB_DOCS[i % KYB_DOCS.length]!));
  return { headers: app.headers, answers: ['200', '404 NOT_FOUND'], request: (i) => ({ path: `${app.base}/documents/${ids[i % ids.length]!}` }) };
}

/** A burst saving the draft: company, people (the listed director kept, its sealed number too) and bank in turn. */
function kybSaveBurst(app: KybCase): Burst {
  const { id_number: _sealed, ...director } = KYB_DIRECTOR;
  return {
    headers: app.headers,
    answers: ['200'],
    request: (i) => {
      const body =
        i % 3 === 0
          ? { company: { industry: `Ritel ${i}` } }
          : i % 3 === 1
            ? { people: [{ ...director, id: app.personId, position: `Direktur ${i}` }] }
            : { bank: { bank_name: `Bank ${i}` } };
      return { path: app.base, body };
    },
  };
}

/** A staff member's burst of one review move on a submitted application (one decides, the rest 409 INVALID_STATE). */
async function kybReviewBurst(app: KybCase, move: 'request-changes' | 'approve' | 'reject', body: (i: number) => unknown): Promise<Burst> {
  return {
    headers: (await account('admin')).headers,
    answers: ['200', '409 INVALID_STATE'],
    request: (i) => ({ path: `/v1/admin/enterprise/kyb/${app.applicationId}/${move}`, body: body(i) }),
  };
}

/** A workspace with a seller counterparty, for deals; live (verified, the counterparty verified too) or sandbox. */
interface DealCase {
  ws: MadeWorkspace;
  workspace: WorkspaceRow;
  actor: WorkspaceActor;
  cpId: string;
}

async function dealWorkspace(mode: 'sandbox' | 'live' = 'sandbox'): Promise<DealCase> {
  const ws = await createWorkspace(await person());
  const cpId = await counterpartyOf(ws);
  if (mode === 'live') {
    await db('workspaces').where({ id: ws.workspace.id }).update({ is_sandbox: false, kyb_status: 'verified' });
    await db('counterparties').where({ id: cpId }).update({ kyb_status: 'verified' });
  }
  return { ws, workspace: (await workspaceById(db, ws.workspace.id))!, actor: ownerOf(ws), cpId };
}

/** A deal of four milestones made by the owner, left a draft, activated (awaiting funding, or terms_review), or with every milestone funded (sandbox). */
async function dealIn(d: DealCase, stage: 'draft' | 'active' | 'funded', amounts = [1_000_000, 2_000_000, 3_000_000, 4_000_000]): Promise<{ id: string; milestoneIds: string[] }> {
  const made = await deals.createDeal(undefined, d.actor, d.workspace, {
    title: 'Pengadaan server',
    counterparty_id: d.cpId,
    currency: 'IDR',
    milestones: amounts.map((amount, i) => ({ title: `Tahap ${i + 1}`, amount })),
  });
  const id = made.deal.id;
  const milestoneIds = made.milestones.map((m) => m.id);
  if (stage !== 'draft') await deals.activateDeal(undefined, d.actor, d.workspace, id);
  if (stage === 'funded') for (const mid of milestoneIds) await deals.fundMilestone(undefined, d.actor, d.workspace, id, mid, { method: 'sandbox' });
  return { id, milestoneIds };
}

/** A burst of one milestone move over a deal's milestones in turn (one move per milestone wins, the rest 409 CONCURRENT_MODIFICATION). */
async function milestoneBurst(stage: 'active' | 'funded', role: Role, move: 'fund' | 'submit-evidence' | 'dispute', limit: number, body: (i: number) => unknown): Promise<Burst> {
  const d = await dealWorkspace();
  const deal = await dealIn(d, stage);
  return {
    headers: await memberHeaders(d.workspace.id, role),
    limits: [limit],
    answers: ['200', '409 CONCURRENT_MODIFICATION'],
    request: (i) => ({ path: `/v1/enterprise/deals/${deal.id}/milestones/${deal.milestoneIds[i % deal.milestoneIds.length]!}/${move}`, body: body(i) }),
  };
}

/** Four queued payouts of a released sandbox milestone, settled or failed by one admin in turn: each moves once, the rest 409 INVALID_STATE. */
async function disbursementBurst(move: 'settle' | 'fail'): Promise<Burst> {
  const d = await dealWorkspace();
  const deal = await dealIn(d, 'funded', [1_000_000]);
  const mid = deal.milestoneIds[0]!;
  await db('deal_milestones').where({ id: mid }).update({ status: 'approved', approved_at: clock.now() });
  const payout = Number((await db('deal_milestones').where({ id: mid }).first<{ payout_amount: string } | undefined>('payout_amount'))!.payout_amount);
  const ids: string[] = [];
  for (let i = 0; i < 4; i += 1) ids.push((await createInstruction(d.workspace, d.cpId, { verified: true })).id);
  const finance = await addMember(d.workspace.id, 'finance');
  const actor = { workspaceId: d.workspace.id, memberId: finance.member.id, role: finance.member.role, userId: finance.user.id, userName: finance.user.full_name };
  await releaseMilestone(undefined, actor, d.workspace, deal.id, mid, { splits: ids.map((id, i) => ({ payout_instruction_id: id, amount: i === 0 ? payout - 3 : 1 })) });
  const payouts = (await db('disbursements').where({ milestone_id: mid }).orderBy('split_no').select<{ id: string }[]>('id')).map((r) => r.id);
  return {
    headers: (await account('admin')).headers,
    answers: ['200', '409 INVALID_STATE'],
    request: (i) => ({ path: `/v1/admin/enterprise/disbursements/${payouts[i % payouts.length]!}/${move}`, body: move === 'fail' ? { reason: `Ditolak bank ${i}` } : { note: `Transfer ${i}` } }),
  };
}

// ---- The table: one entry per keyed route ---------------------------------------------------

type Entry = (ctx: { uploads: Harness }) => Promise<Burst>;

/** Staff verify or decline four pending instructions of a new sandbox workspace, each body naming the version shown: the second move on one answers 409 INVALID_STATE. */
async function staffDecision(move: 'verify' | 'decline', body: (i: number) => Record<string, unknown>): Promise<Burst> {
  const d = await dealWorkspace();
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push((await createInstruction(d.workspace, d.cpId)).id);
  return {
    headers: (await account('admin')).headers,
    answers: ['200', '409 INVALID_STATE'],
    request: (i) => ({ path: `/v1/admin/enterprise/payout-instructions/${ids[i % ids.length]!}/${move}`, body: { ...body(i), destination_version: 1 } }),
  };
}

const ROUTES: Record<string, Entry> = {
  // Escrows (buyer or seller of an escrow in the status the move needs)
  'POST /api/escrows/from-link': async () => {
    const seller = await account();
    const buyer = await account();
    const { secret } = await rotateLinkSecret(db, seller.user.id);
    const expires = String(Math.floor(Date.now() / 1000) + 3600);
    return {
      headers: buyer.headers,
      request: (i) => {
        const fields = { seller: seller.user.id, item: 'Kamera', category: 'goods', ref: `burst-${i}`, v: '1', expires };
        const query = Object.entries({ ...fields, sig: signFields(secret, fields) })
          .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
          .join('&');
        return { path: '/api/escrows/from-link', body: { link: `${config.publicBaseUrl}/pay?${query}`, amount: 150_000 } };
      },
    };
  },
  'POST /api/escrows': async () => {
    const buyer = await account();
    const seller = await person();
    return {
      headers: buyer.headers,
      request: (i) => ({ path: '/api/escrows', body: { role: 'buyer', counterparty_username: seller.username, item_name: `Barang ${i}`, amount: 150_000 } }),
    };
  },
  'POST /api/escrows/:id/send': async () => {
    const made = await escrowIn('paid');
    return { headers: (await keyed(made.seller)).headers, request: () => ({ path: `/api/escrows/${made.escrow.id}/send`, body: {} }) };
  },
  'POST /api/escrows/:id/confirm-received': async () => {
    const made = await escrowIn('sent');
    return { headers: (await keyed(made.buyer)).headers, request: () => ({ path: `/api/escrows/${made.escrow.id}/confirm-received`, body: {} }) };
  },
  'POST /api/escrows/:id/release': async () => {
    const made = await escrowIn('received');
    return { headers: (await keyed(made.buyer)).headers, request: () => ({ path: `/api/escrows/${made.escrow.id}/release`, body: {} }) };
  },
  'POST /api/escrows/:id/cancel': async () => {
    const made = await escrowIn('pending_payment');
    return { headers: (await keyed(made.buyer)).headers, request: () => ({ path: `/api/escrows/${made.escrow.id}/cancel`, body: { reason: 'burst' } }) };
  },
  'POST /api/escrows/:id/extend': async () => {
    const made = await escrowIn('sent');
    return { headers: (await keyed(made.buyer)).headers, request: () => ({ path: `/api/escrows/${made.escrow.id}/extend`, body: {} }) };
  },

  // Payments (a sandbox gateway row and a manual gateway row)
  'POST /api/escrows/:id/pay': async () => {
    await gateways();
    const made = await escrowIn('pending_payment');
    return {
      headers: (await keyed(made.buyer)).headers,
      // Half through the sandbox gateway (a charge on its own connections), half manual.
      request: (i) => ({ path: `/api/escrows/${made.escrow.id}/pay`, body: i % 2 === 0 ? { method: 'qris' } : { method: 'bank_transfer', provider: MANUAL } }),
    };
  },
  'POST /api/escrows/:id/claim-payment': async () => {
    const { made } = await manualEscrowPayment();
    return { headers: (await keyed(made.buyer)).headers, request: (i) => ({ path: `/api/escrows/${made.escrow.id}/claim-payment`, body: { reference: `BCA ${i}` } }) };
  },
  'POST /v1/admin/payments/:id/confirm': async () => {
    const paymentId = await claimedEscrowPayment();
    return { headers: (await account('admin')).headers, request: () => ({ path: `/v1/admin/payments/${paymentId}/confirm`, body: { note: 'mutasi cocok' } }) };
  },
  'POST /v1/admin/payments/:id/reject': async () => {
    const paymentId = await claimedEscrowPayment();
    return { headers: (await account('admin')).headers, request: () => ({ path: `/v1/admin/payments/${paymentId}/reject`, body: { note: 'tidak ada dana' } }) };
  },
  'POST /v1/admin/payments/:id/credit': async () => {
    const paymentId = await lateClaim();
    return { headers: (await account('admin')).headers, request: () => ({ path: `/v1/admin/payments/${paymentId}/credit`, body: { note: 'ke saldo' } }) };
  },
  'POST /v1/admin/payments/:id/mark-returned': async () => {
    const paymentId = await lateClaim();
    return { headers: (await account('admin')).headers, request: () => ({ path: `/v1/admin/payments/${paymentId}/mark-returned`, body: { note: 'dikembalikan via BCA' } }) };
  },

  // Withdrawals
  'POST /v1/withdrawals': async () => {
    const user = await person();
    await fundUser(user.id, BURST * 60_000);
    const destination = freshBank();
    return {
      headers: (await keyed(user)).headers,
      request: () => ({ path: '/v1/withdrawals', body: { amount: 60_000, method: 'bank_transfer', destination_details: destination } }),
    };
  },
  'POST /v1/admin/withdrawals/:id/approve': async () => {
    const { withdrawal } = await createWithdrawal({ user: await funded(100_000), staff: await person('admin') });
    return { headers: (await account('admin')).headers, request: () => ({ path: `/v1/admin/withdrawals/${withdrawal.id}/approve`, body: { note: 'ok' } }) };
  },
  'POST /v1/admin/withdrawals/:id/mark-paid': async () => {
    const { withdrawal } = await createWithdrawal({ status: 'approved', user: await funded(100_000), staff: await person('admin') });
    return { headers: (await account('admin')).headers, request: (i) => ({ path: `/v1/admin/withdrawals/${withdrawal.id}/mark-paid`, body: { reference: `TRF-${i}` } }) };
  },
  'POST /v1/admin/withdrawals/:id/reject': async () => {
    const { withdrawal } = await createWithdrawal({ user: await funded(100_000), staff: await person('admin') });
    return { headers: (await account('admin')).headers, request: () => ({ path: `/v1/admin/withdrawals/${withdrawal.id}/reject`, body: { note: 'rekening salah' } }) };
  },

  // Uploads (the in-process upload worker sanitises each file before the key's transaction opens)
  'POST /v1/upload/:type': async () => {
    const uploader = await account();
    const bytes = await photo('jpeg');
    return { headers: uploader.headers, limits: [RATE.points], request: (i) => ({ path: '/v1/upload/escrow', file: { bytes, filename: `bukti-${i}.jpg`, contentType: 'image/jpeg' } }) };
  },
  'POST /api/escrows/:id/attachments': async () => {
    const made = await escrowIn('paid');
    const rows: UploadRow[] = [];
    for (let i = 0; i < BURST; i++) rows.push(await createUploadRow(made.seller.id, { purpose: 'escrow' }));
    return {
      headers: (await keyed(made.seller)).headers,
      request: (i) => ({ path: `/api/escrows/${made.escrow.id}/attachments`, body: { attachment_url: serializeUpload(rows[i]!, made.seller.id).url } }),
    };
  },

  // Enterprise (one shared `idempotent({ scope })` instance)
  'POST /v1/enterprise/invites/:memberId/accept': async () => {
    const ws = await createWorkspace(await person());
    const invited = await addMember(ws.workspace.id, 'operator', await person(), 'invited');
    return { headers: await sessionHeaders(invited.user), request: () => ({ path: `/v1/enterprise/invites/${invited.member.id}/accept`, body: {} }) };
  },
  'POST /v1/enterprise/members': async () => {
    const ws = await workspaceWithAdmin();
    const people: UserRow[] = [];
    for (let i = 0; i < BURST; i++) people.push(await person());
    return { headers: ws.headers, limits: [LIMITS.memberWrites.points], request: (i) => ({ path: '/v1/enterprise/members', body: { email: people[i]!.email, role: 'viewer' } }) };
  },
  'PATCH /v1/enterprise/members/me/preferences': async () => {
    const ws = await createWorkspace(await person());
    const viewer = await addMember(ws.workspace.id, 'viewer', await person());
    return { headers: await sessionHeaders(viewer.user, ws.workspace.id), request: (i) => ({ path: '/v1/enterprise/members/me/preferences', body: { email: i % 2 === 0 } }) };
  },
  'PATCH /v1/enterprise/members/:id': async () => {
    const ws = await workspaceWithAdmin();
    const target = await addMember(ws.workspace.id, 'viewer', await person());
    return {
      headers: ws.headers,
      limits: [LIMITS.memberWrites.points],
      request: (i) => ({ path: `/v1/enterprise/members/${target.member.id}`, body: { role: i % 2 === 0 ? 'operator' : 'finance' } }),
    };
  },
  'DELETE /v1/enterprise/members/:id': async () => {
    const ws = await workspaceWithAdmin();
    const target = await addMember(ws.workspace.id, 'operator', await person());
    await workspaceKey(ws.workspace.id, target, ['read', 'write']);
    return { headers: ws.headers, limits: [LIMITS.memberWrites.points], request: () => ({ path: `/v1/enterprise/members/${target.member.id}` }) };
  },
  'PATCH /v1/enterprise/settings': async () => {
    const ws = await workspaceWithAdmin();
    return { headers: ws.headers, request: (i) => ({ path: '/v1/enterprise/settings', body: { dispute_sla_hours: 24 + i, watchlist: [`nama ${i}`] } }) };
  },
  'POST /v1/enterprise/notifications/read': async () => {
    const ws = await createWorkspace(await person());
    const viewer = await addMember(ws.workspace.id, 'viewer', await person());
    const now = clock.now();
    await db('enterprise_notifications').insert(
      Array.from({ length: 5 }, (_, i) => ({ workspace_id: ws.workspace.id, user_id: viewer.user.id, type: 'test', title: `t${i}`, body: 'b', created_at: now })),
    );
    return { headers: await sessionHeaders(viewer.user, ws.workspace.id), request: () => ({ path: '/v1/enterprise/notifications/read', body: {} }) };
  },
  'POST /v1/enterprise/counterparties': async () => {
    const ws = await createWorkspace(await person());
    const operator = await addMember(ws.workspace.id, 'operator', await person());
    const key = await workspaceKey(ws.workspace.id, operator, ['read', 'write']);
    return {
      headers: { ...bearer(key.key), 'X-Enterprise-Account': ws.workspace.id },
      request: (i) => ({ path: '/v1/enterprise/counterparties', body: { name: `Toko ${i}`, relationship: 'seller' } }),
    };
  },
  'PATCH /v1/enterprise/counterparties/:id': async () => {
    const ws = await createWorkspace(await person());
    const operator = await addMember(ws.workspace.id, 'operator', await person());
    const [row] = await db('counterparties')
      .insert({
        workspace_id: ws.workspace.id,
        name: 'Toko Awal',
        country_code: 'ID',
        relationship: 'seller',
        kyb_status: 'not_started',
        created_by: operator.user.id,
        created_at: clock.now(),
        updated_at: clock.now(),
      })
      .returning<{ id: string }[]>('id');
    return {
      headers: { ...(await keyed(operator.user)).headers, 'X-Enterprise-Account': ws.workspace.id },
      request: (i) => ({ path: `/v1/enterprise/counterparties/${row!.id}`, body: { name: `Toko ${i}` } }),
    };
  },
  'DELETE /v1/enterprise/api-keys/:id': async () => {
    const ws = await workspaceWithAdmin();
    const key = await workspaceKey(ws.workspace.id, ws.admin, ['read']);
    return { headers: ws.headers, limits: [LIMITS.apiKeys.points], request: () => ({ path: `/v1/enterprise/api-keys/${key.id}` }) };
  },
  // Webhooks (spec 4.11): one admin's burst on one endpoint; each write locks the workspace row, then the endpoint (a deleted endpoint answers 404).
  'PATCH /v1/enterprise/webhooks/:id': async () => {
    const ws = await workspaceWithAdmin();
    const hook = await webhookOf(ws);
    return {
      headers: ws.headers,
      limits: [WEBHOOK_LIMITS.webhooks.points],
      request: (i) => ({ path: `/v1/enterprise/webhooks/${hook.id}`, body: { description: `Penerima ${i}`, status: i % 2 === 0 ? 'paused' : 'active' } }),
      answers: ['200'],
    };
  },
  'DELETE /v1/enterprise/webhooks/:id': async () => {
    const ws = await workspaceWithAdmin();
    const hook = await webhookOf(ws);
    return { headers: ws.headers, limits: [WEBHOOK_LIMITS.webhooks.points], request: () => ({ path: `/v1/enterprise/webhooks/${hook.id}` }), answers: ['200', '404 NOT_FOUND'] };
  },
  'POST /v1/enterprise/webhooks/:id/test': async () => {
    const ws = await workspaceWithAdmin();
    const hook = await webhookOf(ws);
    return { headers: ws.headers, limits: [WEBHOOK_LIMITS.webhooks.points], request: () => ({ path: `/v1/enterprise/webhooks/${hook.id}/test`, body: {} }), answers: ['202'] };
  },
  'POST /v1/enterprise/webhooks/:id/deliveries/:did/redeliver': async () => {
    const ws = await workspaceWithAdmin();
    const hook = await webhookOf(ws);
    return { headers: ws.headers, limits: [WEBHOOK_LIMITS.webhooks.points], request: () => ({ path: `/v1/enterprise/webhooks/${hook.id}/deliveries/${hook.did}/redeliver`, body: {} }), answers: ['202'] };
  },
  // Deal templates: a burst of one workspace's saves meets its template lock (one saves, the rest 409 TEMPLATE_BUSY or 404 once deleted).
  'POST /v1/enterprise/templates': async () => {
    const ws = await createWorkspace(await person());
    return {
      headers: await sessionHeaders(ws.owner, ws.workspace.id),
      limits: [TEMPLATE_LIMITS.create.points],
      request: (i) => ({ path: '/v1/enterprise/templates', body: { name: `Templat ${i}`, milestones: [{ title: 'Uang muka', amount_pct: 30 }, { title: 'Pelunasan', amount_pct: 70 }] } }),
    };
  },
  'PATCH /v1/enterprise/templates/:id': async () => {
    const ws = await createWorkspace(await person());
    const id = await templateOf(ws.workspace.id, ws.owner.id);
    return {
      headers: await sessionHeaders(ws.owner, ws.workspace.id),
      limits: [TEMPLATE_LIMITS.update.points],
      request: (i) => ({ path: `/v1/enterprise/templates/${id}`, body: i % 2 === 0 ? { name: `Templat ${i}` } : { milestones: [{ title: 'Sekaligus', amount: 10_000 + i }] } }),
    };
  },
  'DELETE /v1/enterprise/templates/:id': async () => {
    const ws = await createWorkspace(await person());
    const id = await templateOf(ws.workspace.id, ws.owner.id);
    return { headers: await sessionHeaders(ws.owner, ws.workspace.id), limits: [TEMPLATE_LIMITS.remove.points], request: () => ({ path: `/v1/enterprise/templates/${id}` }) };
  },
  // Documents and notes (spec 4.7): every write locks the workspace row (then the deal); a delete of a gone row answers 404.
  'POST /v1/enterprise/documents': async () => {
    // Half on the deal's milestones with an https file, half the operator's own uploads (each bound once).
    const d = await dealWorkspace();
    const deal = await dealIn(d, 'active');
    const op = await addMember(d.workspace.id, 'operator', await person());
    const files: string[] = [];
    for (let i = 0; i < BURST; i++) files.push(i % 2 === 0 ? `https://files.example.com/surat-jalan-${i}.pdf` : (await createUploadRow(op.user.id)).stored_name);
    return {
      headers: await sessionHeaders(op.user, d.workspace.id),
      answers: ['201'],
      request: (i) => ({
        path: '/v1/enterprise/documents',
        body: { title: `Dokumen ${i}`, document_type: 'shipping', file_url: files[i]!, ...(i % 2 === 0 ? { milestone_id: deal.milestoneIds[i % deal.milestoneIds.length]! } : {}) },
      }),
    };
  },
  'DELETE /v1/enterprise/documents/:id': async () => {
    const d = await dealWorkspace();
    const deal = await dealIn(d, 'active');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await insertDocument(d.workspace.id, d.ws.owner.id, { dealId: i % 2 === 0 ? deal.id : null }));
    return {
      headers: await memberHeaders(d.workspace.id, 'operator'),
      answers: ['200', '404 NOT_FOUND'],
      request: (i) => ({ path: `/v1/enterprise/documents/${ids[i % ids.length]!}` }),
    };
  },
  'POST /v1/enterprise/deals/:id/notes': async () => {
    const d = await dealWorkspace();
    const deal = await dealIn(d, 'active');
    return {
      headers: await memberHeaders(d.workspace.id, 'operator'),
      limits: [DOCUMENT_LIMITS.notes.points],
      answers: ['201'],
      request: (i) => ({ path: `/v1/enterprise/deals/${deal.id}/notes`, body: { body: `Catatan ${i}: pemasok minta jadwal baru` } }),
    };
  },
  'DELETE /v1/enterprise/deals/:id/notes/:nid': async () => {
    const d = await dealWorkspace();
    const deal = await dealIn(d, 'active');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await insertNote(d.workspace.id, deal.id, d.ws.owner.id, `Catatan ${i}`));
    return {
      headers: await memberHeaders(d.workspace.id, 'operator'),
      answers: ['200', '404 NOT_FOUND'],
      request: (i) => ({ path: `/v1/enterprise/deals/${deal.id}/notes/${ids[i % ids.length]!}` }),
    };
  },
  'PUT /v1/enterprise/fees/default-allocation': async () => {
    const ws = await createWorkspace(await person());
    return {
      headers: await sessionHeaders(ws.owner, ws.workspace.id),
      request: (i) => ({ path: '/v1/enterprise/fees/default-allocation', body: i % 2 === 0 ? { fee_allocation: 'split', fee_buyer_percent: i } : { fee_allocation: 'buyer' } }),
    };
  },
  // Payout instructions (spec 4.6, D7): every write locks the workspace row, then the instruction; edits run one at a time,
  // a delete of a gone row answers 404; a second staff verification 409 INVALID_STATE.
  'POST /v1/enterprise/payout-instructions': async () => {
    const d = await dealWorkspace();
    return {
      headers: await memberHeaders(d.workspace.id, 'finance'),
      limits: [INSTRUCTION_LIMITS.write.points],
      // At most 20 unverified instructions per workspace (review R4): the rest of the burst is refused.
      answers: ['201', '409 TOO_MANY_PENDING_INSTRUCTIONS'],
      request: (i) => ({
        path: '/v1/enterprise/payout-instructions',
        body: { label: `Rekening ${i}`, counterparty_id: d.cpId, bank_name: 'BCA', account_number: `12345${i}6789`, account_holder: 'PT Pemasok Jaya' },
      }),
    };
  },
  'PATCH /v1/enterprise/payout-instructions/:id': async () => {
    const d = await dealWorkspace();
    const { id } = await createInstruction(d.workspace, d.cpId, { verified: true });
    return {
      headers: await memberHeaders(d.workspace.id, 'finance'),
      limits: [INSTRUCTION_LIMITS.write.points],
      answers: ['200'],
      request: (i) => ({ path: `/v1/enterprise/payout-instructions/${id}`, body: i % 3 === 0 ? { label: `Rekening ${i}` } : i % 3 === 1 ? { bank_name: `Bank ${i}` } : { account_number: `98765${i}4321` } }),
    };
  },
  'DELETE /v1/enterprise/payout-instructions/:id': async () => {
    const d = await dealWorkspace();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await createInstruction(d.workspace, d.cpId)).id);
    return {
      headers: await memberHeaders(d.workspace.id, 'finance'),
      limits: [INSTRUCTION_LIMITS.write.points],
      answers: ['200', '404 NOT_FOUND'],
      request: (i) => ({ path: `/v1/enterprise/payout-instructions/${ids[i % ids.length]!}` }),
    };
  },
  'POST /v1/admin/enterprise/payout-instructions/:id/verify': () => staffDecision('verify', (i) => ({ note: `Dicek ${i}` })),
  // Review R4: a decline is a compare-and-set like a verification; the second answers 409 INVALID_STATE.
  'POST /v1/admin/enterprise/payout-instructions/:id/decline': () => staffDecision('decline', (i) => ({ reason: `Nama pemilik tidak cocok ${i}` })),

  // KYB (decision 0017): every edit, the submission and each review move take the subject's lock, so a burst on one
  // application runs one at a time; a second submission answers 409 APPLICATION_LOCKED, a second decision 409 INVALID_STATE.
  'PATCH /v1/enterprise/kyb': async () => kybSaveBurst(await kybApplication('draft')),
  'POST /v1/enterprise/kyb/documents': async () => kybAttachBurst(await kybApplication('draft')),
  'DELETE /v1/enterprise/kyb/documents/:id': async () => kybRemoveBurst(await kybApplication('draft')),
  'POST /v1/enterprise/kyb/submit': async () => {
    const app = await kybApplication('complete');
    return { headers: app.headers, answers: ['200', '409 APPLICATION_LOCKED'], request: () => ({ path: `${app.base}/submit`, body: {} }) };
  },
  'POST /v1/enterprise/counterparties/:id/kyb-invite': async () => {
    // Each link revokes the ones before it; the counterparty has an address, so each is e-mailed in the key's transaction
    // (at most INVITES_PER_WORKSPACE_PER_DAY links a workspace a day: the burst stays under that too).
    const ws = await createWorkspace(await person());
    const cpId = await counterpartyOf(ws, `pemasok_${randomUUID().slice(0, 8)}@example.com`);
    return {
      headers: await sessionHeaders(ws.owner, ws.workspace.id),
      limits: [KYB_LIMITS.invite.points, INVITES_PER_WORKSPACE_PER_DAY],
      answers: ['201'],
      request: () => ({ path: `/v1/enterprise/counterparties/${cpId}/kyb-invite`, body: {} }),
    };
  },
  // A counterparty's application, through its verification link (claimed by the applicant; the link is opened before the key's transaction).
  'PATCH /v1/kyb/invite/:token': async () => kybSaveBurst(await kybApplication('draft', 'counterparty')),
  'POST /v1/kyb/invite/:token/documents': async () => kybAttachBurst(await kybApplication('draft', 'counterparty')),
  'DELETE /v1/kyb/invite/:token/documents/:id': async () => kybRemoveBurst(await kybApplication('draft', 'counterparty')),
  'POST /v1/kyb/invite/:token/submit': async () => {
    const app = await kybApplication('complete', 'counterparty');
    return { headers: app.headers, answers: ['200', '409 APPLICATION_LOCKED'], request: () => ({ path: `${app.base}/submit`, body: {} }) };
  },
  // Staff review (an admin's personal key).
  'POST /v1/admin/enterprise/kyb/:applicationId/request-changes': async () =>
    kybReviewBurst(await kybApplication('submitted'), 'request-changes', (i) => ({ change_requests: [{ field: 'company.npwp', note: `Periksa NPWP ${i}` }], note: 'tinjauan' })),
  'POST /v1/admin/enterprise/kyb/:applicationId/approve': async () => {
    // The workspace goes live in the approval's transaction: its sandbox deals (one draft, one funded) are closed there too.
    const app = await kybApplication('submitted');
    const d: DealCase = { ws: app.ws, workspace: app.ws.workspace, actor: ownerOf(app.ws), cpId: await counterpartyOf(app.ws) };
    await dealIn(d, 'draft');
    await dealIn(d, 'funded');
    return kybReviewBurst(app, 'approve', (i) => ({ risk_tier: i % 2 === 0 ? 'standard' : 'low' }));
  },
  'POST /v1/admin/enterprise/kyb/:applicationId/reject': async () =>
    kybReviewBurst(await kybApplication('submitted', 'counterparty'), 'reject', (i) => ({ reason: `Dokumen tidak terbaca ${i}` })),
  'POST /v1/admin/enterprise/counterparties/:id/verify': async () => {
    // A submitted counterparty application of a live workspace whose deal with it waits in terms_review: verifying approves the one and releases the other.
    const app = await kybApplication('submitted', 'counterparty');
    await db('workspaces').where({ id: app.ws.workspace.id }).update({ is_sandbox: false, kyb_status: 'verified' });
    const d: DealCase = { ws: app.ws, workspace: (await workspaceById(db, app.ws.workspace.id))!, actor: ownerOf(app.ws), cpId: app.counterpartyId! };
    await dealIn(d, 'active');
    return {
      headers: (await account('admin')).headers,
      answers: ['200', '409 INVALID_STATE'],
      request: (i) => ({ path: `/v1/admin/enterprise/counterparties/${app.counterpartyId!}/verify`, body: { note: `cek ${i}` } }),
    };
  },

  // Deals (decision 0018): every write locks the workspace row, then the deal; a move from the wrong state answers
  // 409 CONCURRENT_MODIFICATION (milestones) or INVALID_STATE (the deal).
  'POST /v1/enterprise/deals': async () => {
    // An API client (an operator's workspace key): milestones, or a template with its total.
    const d = await dealWorkspace();
    const operator = await addMember(d.workspace.id, 'operator', await person());
    const key = await workspaceKey(d.workspace.id, operator, ['read', 'write']);
    const templateId = await templateOf(d.workspace.id, d.ws.owner.id);
    return {
      headers: { ...bearer(key.key), 'X-Enterprise-Account': d.workspace.id },
      answers: ['201'],
      request: (i) => ({
        path: '/v1/enterprise/deals',
        body:
          i % 2 === 0
            ? { title: `Pesanan ${i}`, counterparty_id: d.cpId, milestones: [{ title: 'Uang muka', amount: 1_000_000 + i }, { title: 'Pelunasan', amount: 2_000_000 }] }
            : { title: `Pesanan ${i}`, counterparty_id: d.cpId, template_id: templateId, total_amount: 5_000_000 + i, fee_allocation: 'split', fee_buyer_percent: 50 },
      }),
    };
  },
  'PATCH /v1/enterprise/deals/:id': async () => {
    const d = await dealWorkspace();
    const deal = await dealIn(d, 'draft');
    return {
      headers: await memberHeaders(d.workspace.id, 'operator'),
      answers: ['200'],
      request: (i) => ({
        path: `/v1/enterprise/deals/${deal.id}`,
        body: i % 3 === 0 ? { title: `Pengadaan ${i}` } : i % 3 === 1 ? { fee_allocation: 'split', fee_buyer_percent: i } : { fee_allocation: 'seller', external_ref: `PO-${i}` },
      }),
    };
  },
  'POST /v1/enterprise/deals/:id/milestones': async () => {
    // One milestone to start with: the burst fills the deal to 20, the rest 409 INVALID_STATE.
    const d = await dealWorkspace();
    const deal = await dealIn(d, 'draft', [1_000_000]);
    return {
      headers: await memberHeaders(d.workspace.id, 'operator'),
      answers: ['201', '409 INVALID_STATE'],
      request: (i) => ({ path: `/v1/enterprise/deals/${deal.id}/milestones`, body: { title: `Tahap tambahan ${i}`, amount: 500_000 + i, due_offset_days: i } }),
    };
  },
  'PATCH /v1/enterprise/deals/:id/milestones/:mid': async () => {
    const d = await dealWorkspace();
    const deal = await dealIn(d, 'draft');
    return {
      headers: await memberHeaders(d.workspace.id, 'operator'),
      answers: ['200'],
      request: (i) => ({
        path: `/v1/enterprise/deals/${deal.id}/milestones/${deal.milestoneIds[i % deal.milestoneIds.length]!}`,
        body: i % 2 === 0 ? { amount: 1_500_000 + i * 1000 } : { title: `Tahap ${i}`, required_evidence: 'Foto barang' },
      }),
    };
  },
  'POST /v1/enterprise/deals/:id/activate': async () => {
    const d = await dealWorkspace();
    const deal = await dealIn(d, 'draft');
    return {
      headers: await memberHeaders(d.workspace.id, 'operator'),
      answers: ['200', '409 INVALID_STATE'],
      request: () => ({ path: `/v1/enterprise/deals/${deal.id}/activate`, body: {} }),
    };
  },
  'POST /v1/enterprise/deals/:id/cancel': async () => {
    const d = await dealWorkspace();
    const deal = await dealIn(d, 'active');
    return {
      headers: await memberHeaders(d.workspace.id, 'operator'),
      answers: ['200', '409 INVALID_STATE'],
      request: () => ({ path: `/v1/enterprise/deals/${deal.id}/cancel`, body: {} }),
    };
  },
  'POST /v1/enterprise/deals/:id/milestones/:mid/fund': async () =>
    milestoneBurst('active', 'finance', 'fund', DEAL_LIMITS.fund.points, (i) => ({ method: 'sandbox', reference: `SB-${i}` })),
  'POST /v1/enterprise/deals/:id/milestones/:mid/submit-evidence': async () =>
    milestoneBurst('funded', 'operator', 'submit-evidence', DEAL_LIMITS.evidence.points, (i) => ({ summary: `Barang dikirim, resi ${i}` })),
  'POST /v1/enterprise/deals/:id/milestones/:mid/dispute': async () =>
    milestoneBurst('funded', 'operator', 'dispute', DEAL_LIMITS.dispute.points, (i) => ({ reason: `Barang rusak ${i}` })),
  'POST /v1/enterprise/approvals/:milestoneId/decide': async () => {
    // One finance member approving four one-approval milestones (evidence by the owner) in turn: each approved once, the rest 409 CONCURRENT_MODIFICATION.
    const d = await dealWorkspace();
    const deal = await dealIn(d, 'funded');
    for (const mid of deal.milestoneIds) await deals.submitEvidence(undefined, d.actor, d.workspace, deal.id, mid, { summary: 'Barang diterima' });
    return {
      headers: await memberHeaders(d.workspace.id, 'finance'),
      limits: [APPROVAL_LIMITS.decide.points],
      answers: ['200', '409 CONCURRENT_MODIFICATION'],
      request: (i) => ({ path: `/v1/enterprise/approvals/${deal.milestoneIds[i % deal.milestoneIds.length]!}/decide`, body: { decision: 'approve', note: `Sesuai ${i}` } }),
    };
  },
  'POST /v1/enterprise/deals/:id/milestones/:mid/release': async () => {
    // Four approved milestones, one verified instruction: each milestone released once, the rest 409 CONCURRENT_MODIFICATION.
    const d = await dealWorkspace();
    const deal = await dealIn(d, 'funded');
    await db('deal_milestones').whereIn('id', deal.milestoneIds).update({ status: 'approved', approved_at: clock.now() });
    const payouts = await db('deal_milestones').whereIn('id', deal.milestoneIds).select<{ id: string; payout_amount: string }[]>('id', 'payout_amount');
    const instruction = await createInstruction(d.workspace, d.cpId, { verified: true });
    return {
      headers: await memberHeaders(d.workspace.id, 'finance'),
      limits: [DEAL_LIMITS.release.points],
      answers: ['200', '409 CONCURRENT_MODIFICATION'],
      request: (i) => {
        const mid = deal.milestoneIds[i % deal.milestoneIds.length]!;
        const amount = Number(payouts.find((p) => p.id === mid)!.payout_amount);
        return { path: `/v1/enterprise/deals/${deal.id}/milestones/${mid}/release`, body: { splits: [{ payout_instruction_id: instruction.id, amount }] } };
      },
    };
  },
  // Staff (an admin's personal key).
  'POST /v1/admin/enterprise/milestones/:id/confirm-funding': async () => {
    // A live deal awaiting funding: each milestone's confirmation posts to the ledger once, the rest 409 CONCURRENT_MODIFICATION.
    const d = await dealWorkspace('live');
    const deal = await dealIn(d, 'active');
    return {
      headers: (await account('admin')).headers,
      answers: ['200', '409 CONCURRENT_MODIFICATION'],
      request: (i) => ({ path: `/v1/admin/enterprise/milestones/${deal.milestoneIds[i % deal.milestoneIds.length]!}/confirm-funding`, body: { note: `Mutasi BCA ${i}` } }),
    };
  },
  'POST /v1/admin/enterprise/deals/:id/fee-allocation': async () => {
    // An active deal with every share still open: each override recomputes them.
    const d = await dealWorkspace();
    const deal = await dealIn(d, 'active');
    return {
      headers: (await account('admin')).headers,
      answers: ['200'],
      request: (i) => ({
        path: `/v1/admin/enterprise/deals/${deal.id}/fee-allocation`,
        body: { ...(i % 3 === 0 ? { fee_allocation: 'buyer' } : i % 3 === 1 ? { fee_allocation: 'seller' } : { fee_allocation: 'split', fee_buyer_percent: 50 }), reason: `Permintaan kedua pihak ${i}` },
      }),
    };
  },

  'POST /v1/admin/enterprise/milestones/:id/resolve-dispute': async () => {
    // Four disputed live milestones: each ruled once (refunds post to the ledger once), the rest 409 CONCURRENT_MODIFICATION.
    const d = await dealWorkspace('live');
    const deal = await dealIn(d, 'active');
    const admin = await account('admin');
    for (const mid of deal.milestoneIds) await confirmFunding(undefined, { actorId: admin.user.id, ip: '127.0.0.1' }, mid);
    await db('deal_milestones').whereIn('id', deal.milestoneIds).update({ status: 'disputed', disputed_at: clock.now(), dispute_reason: 'Rusak' });
    return {
      headers: admin.headers,
      answers: ['200', '409 CONCURRENT_MODIFICATION'],
      request: (i) => ({ path: `/v1/admin/enterprise/milestones/${deal.milestoneIds[i % deal.milestoneIds.length]!}/resolve-dispute`, body: { outcome: 'refund', note: `Putusan ${i}` } }),
    };
  },
  'POST /v1/admin/enterprise/disbursements/:id/settle': async () => disbursementBurst('settle'),
  'POST /v1/admin/enterprise/disbursements/:id/fail': async () => disbursementBurst('fail'),

  // Payment-service orders ("jasabayar")
  'POST /api/jasabayar/quote': async () => {
    const buyer = await account();
    return { headers: buyer.headers, request: (i) => ({ path: '/api/jasabayar/quote', body: { item_price: 100_000 + i * 1000 } }) };
  },
  'POST /api/jasabayar': async () => {
    const buyer = await account();
    return {
      headers: buyer.headers,
      request: (i) => ({ path: '/api/jasabayar', body: { target_url: `https://shop.example.com/item/${i}`, target_label: 'Voucher', item_price: 100_000 } }),
    };
  },
  'POST /api/jasabayar/:id/cancel': async () => {
    const { buyer, order } = await orderIn('awaiting_payment');
    return { headers: (await keyed(buyer)).headers, request: () => ({ path: `/api/jasabayar/${order.id}/cancel`, body: {} }) };
  },
  'POST /api/jasabayar/:id/pay': async () => {
    await gateways();
    const { buyer, order } = await orderIn('awaiting_payment');
    await fundUser(buyer.id, order.total);
    return {
      headers: (await keyed(buyer)).headers,
      // Gateway links (sandbox, manual) and one balance payment that settles the order.
      request: (i) => ({
        path: `/api/jasabayar/${order.id}/pay`,
        body: i === BURST - 1 ? { method: 'balance' } : i % 2 === 0 ? { method: 'qris' } : { method: 'bank_transfer', provider: MANUAL },
      }),
    };
  },
  'POST /api/jasabayar/:id/claim-payment': async () => {
    const { buyer, order } = await orderIn('manual_pending');
    return { headers: (await keyed(buyer)).headers, request: (i) => ({ path: `/api/jasabayar/${order.id}/claim-payment`, body: { reference: `BCA ${i}` } }) };
  },
  'POST /v1/admin/jasabayar/:id/confirm-payment': async () => {
    const { order } = await orderIn('pending_review');
    return { headers: (await account('admin')).headers, request: () => ({ path: `/v1/admin/jasabayar/${order.id}/confirm-payment`, body: { note: 'cocok' } }) };
  },
  'POST /v1/admin/jasabayar/:id/process': async () => startBurst('process'),
  'POST /v1/admin/jasabayar/:id/start': async () => startBurst('start'),
  'POST /v1/admin/jasabayar/:id/deliver': async () => {
    const { order } = await orderIn('processing');
    return {
      headers: (await account('admin')).headers,
      request: (i) => ({ path: `/v1/admin/jasabayar/${order.id}/deliver`, body: { credentials: `kode-${i}`, delivery_note: 'terkirim' } }),
    };
  },
  'POST /v1/admin/jasabayar/:id/refund': async () => {
    const { order } = await orderIn('processing');
    return { headers: (await account('admin')).headers, request: () => ({ path: `/v1/admin/jasabayar/${order.id}/refund`, body: { reason: 'stok habis' } }) };
  },

  // Staff rulings and cancels
  'POST /v1/admin/disputes/:id/resolve': async () => {
    const made = await escrowIn('disputed');
    const dispute = (await db('disputes').where({ escrow_id: made.escrow.id }).first()) as { id: string };
    return {
      headers: (await account('admin')).headers,
      request: (i) => ({ path: `/v1/admin/disputes/${dispute.id}/resolve`, body: { outcome: i % 2 === 0 ? 'release' : 'refund', note: 'putusan' } }),
    };
  },
  'POST /v1/admin/escrows/:id/cancel': async () => {
    const made = await escrowIn('pending_payment');
    return { headers: (await account('admin')).headers, request: () => ({ path: `/v1/admin/escrows/${made.escrow.id}/cancel`, body: { reason: 'penipuan' } }) };
  },
};

// ---- The test ---------------------------------------------------------------------------------

interface Failure {
  route: string;
  name: string;
  message: string;
}

describe(`platform: a burst of ${BURST} keyed requests on every keyed route (pool of ${config.databasePoolMax}) never takes the service down (rule 7)`, function () {
  this.timeout(30_000);

  let server: http.Server;
  let port: number;
  let uploads: Harness;
  const burstAgent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const readAgent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  /** Errors the request frame turned into 5xx, with their cause (the answer itself leaks nothing). */
  const failures: Failure[] = [];

  before(async () => {
    uploads = await startUploads();
    const app = createApp();
    // Right after the request frame: see the cause of an error before it is rendered as 500.
    const cause: Middleware = async (ctx, next) => {
      try {
        await next();
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        if (!(typeof (err as { status?: unknown }).status === 'number' && (err as { status: number }).status < 500)) {
          failures.push({ route: `${ctx.method} ${ctx.path}`, name: e.name, message: e.message });
        }
        throw err;
      }
    };
    (app.middleware as unknown[]).splice(1, 0, cause);
    const handle = app.callback();
    server = http.createServer((req, res) => void handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    burstAgent.destroy();
    readAgent.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await uploads.stop();
    await closeSandboxGateway();
  });

  beforeEach(async () => {
    failures.length = 0;
    await uploads.clear();
  });

  it('every keyed route of the routers has an entry in the table, and every entry is a keyed route', () => {
    const keyed = keyedRoutes();
    // The detection itself: escrow and enterprise routes (one shared scoped instance) are keyed; plain ones are not.
    expect(keyed).to.include.members(['POST /api/escrows/:id/release', 'PATCH /v1/enterprise/settings', 'POST /v1/upload/:type']);
    expect(keyed).not.to.include('POST /v1/enterprise/api-keys');
    // The answers of these carry a signing secret: never stored by the idempotency store.
    expect(keyed).not.to.include.members(['POST /v1/enterprise/webhooks', 'POST /v1/enterprise/webhooks/:id/rotate-secret']);
    expect(keyed.filter((r) => !(r in ROUTES)), 'keyed routes without an entry in ROUTES').to.deep.equal([]);
    expect(
      Object.keys(ROUTES).filter((r) => !keyed.includes(r)),
      'entries of ROUTES that are not keyed routes',
    ).to.deep.equal([]);
  });

  for (const [route, entry] of Object.entries(ROUTES)) {
    it(route, async () => {
      const method = route.split(' ')[0]!;
      const burst = await entry({ uploads });
      const reader = await account();

      // The other user reads in a loop while the burst runs.
      let bursting = true;
      const reads: { what: string; answer: Answer | Error }[] = [];
      const readLoop = (async () => {
        while (bursting || reads.length < 4) {
          for (const [what, headers] of [
            ['/v1/auth/me', reader.headers],
            ['/readyz', {}],
          ] as const) {
            const answer = await send(port, readAgent, 'GET', what, headers).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
            reads.push({ what, answer });
          }
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();

      const size = Math.min(BURST, AUTHENTICATED_LIMIT.points, ...(burst.limits ?? []));
      const requests = Array.from({ length: size }, (_, i) => burst.request(i));
      const answers = await Promise.all(
        requests.map((r) => {
          const { body, contentType } = encode(r);
          return send(port, burstAgent, method, r.path, { ...burst.headers, 'Content-Type': contentType, 'Idempotency-Key': randomUUID() }, body).catch(
            (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
          );
        }),
      );
      bursting = false;
      await readLoop;

      const lines: string[] = [];
      answers.forEach((a, i) => {
        if (a instanceof Error) lines.push(`burst #${i} ${requests[i]!.path}: ${a.message}`);
        else if (a.status >= 500) lines.push(`burst #${i} ${requests[i]!.path}: ${a.status} ${a.text}`);
      });
      for (const f of failures) lines.push(`  cause in ${f.route}: ${f.name}: ${f.message}`);
      for (const { what, answer } of reads) {
        if (answer instanceof Error) lines.push(`read ${what}: ${answer.message}`);
        else if (answer.status < 200 || answer.status >= 300) lines.push(`read ${what}: ${answer.status} ${answer.text}`);
        else if (answer.ms >= READ_WITHIN_MS) lines.push(`read ${what}: answered in ${Math.round(answer.ms)} ms`);
      }
      const statuses: Record<string, number> = {};
      for (const a of answers) {
        const label = a instanceof Error ? 'no answer' : `${a.status}${a.status >= 400 ? ` ${codeOf(a.text)}` : ''}`;
        statuses[label] = (statuses[label] ?? 0) + 1;
      }
      expect(lines, `${route}: a burst of ${size} (answers ${JSON.stringify(statuses)})\n${lines.join('\n')}`).to.deep.equal([]);
      if (burst.answers) {
        const unexpected = Object.keys(statuses).filter((label) => !burst.answers!.includes(label));
        expect(unexpected, `${route}: answers other than ${JSON.stringify(burst.answers)} (answers ${JSON.stringify(statuses)})`).to.deep.equal([]);
      }
      // The burst reached the handler: at least one request did what the route is for.
      const succeeded = answers.filter((a) => !(a instanceof Error) && a.status >= 200 && a.status < 300).length;
      expect(succeeded, `${route}: no request of the burst succeeded (answers ${JSON.stringify(statuses)})`).to.be.greaterThan(0);
    });
  }
});

function codeOf(text: string): string {
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : '';
  } catch {
    return '';
  }
}
