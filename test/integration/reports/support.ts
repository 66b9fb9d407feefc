/**
 * What the report tests share: a sandbox deal workspace whose members act with personal
 * keys (the tests move the clock by months; sessions would idle out), a staff member with
 * a personal key, and the deal moves through the routes (create, activate, fund, submit
 * evidence, decide, release, dispute, rule, cancel, settle, fail) at the clock's time.
 */
import { expect } from 'chai';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { runJobs } from '../../helpers/jobs.js';
import { DEALS, counterpartyVia, dealBody, dealWorld, type Client, type DealData, type DealWorld, type Headers } from '../../factories/deals.js';
import { headersOf, personalKeyOf } from '../../factories/enterprise.js';
import { createUser } from '../../factories/users.js';
import type { UserRow } from '../../../shared/users/repo.js';

export const REPORTS = '/v1/enterprise/reports';

export interface ReportWorld extends DealWorld {
  staff: Headers;
}

/** A deal workspace (owner, operator, finance, viewer, one counterparty) whose members and a staff member call with personal keys. */
export async function reportWorld(client: Client, name?: string): Promise<ReportWorld> {
  const w = await dealWorld(client, name);
  const key = async (user: UserRow) => headersOf(await personalKeyOf(user));
  const h = { owner: await key(w.owner), operator: await key(w.users.operator), finance: await key(w.users.finance), viewer: await key(w.users.viewer) };
  const { user: admin } = await createUser({ role: 'admin', fullName: 'Staff Reports' });
  return { ...w, h, staff: await key(admin) };
}

export const at = (iso: string) => clock.set(new Date(iso));

async function okPost(client: Client, h: Headers, path: string, body: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const res = await client.post(path).set(h).send(body);
  expect(res.status, `${path} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201]);
  return res.body.data as Record<string, unknown>;
}

export interface Made {
  id: string;
  reference: string;
  mids: string[];
}

/** A deal created by the operator (draft), optionally activated. */
export async function dealVia(client: Client, w: ReportWorld, cpId: string, amounts: number[], opts: { activate?: boolean; extra?: Record<string, unknown> } = {}): Promise<Made> {
  const made = (await okPost(client, w.h.operator, DEALS, dealBody(cpId, amounts, opts.extra))) as unknown as DealData;
  if (opts.activate !== false) await okPost(client, w.h.operator, `${DEALS}/${made.deal.id}/activate`);
  return { id: made.deal.id, reference: made.deal.reference as string, mids: made.milestones.map((m) => m.id) };
}

const ms = (d: Made, mid: string) => `${DEALS}/${d.id}/milestones/${mid}`;

export const fund = (client: Client, w: ReportWorld, d: Made, mid: string) => okPost(client, w.h.finance, `${ms(d, mid)}/fund`, { method: 'sandbox' });
export const submit = (client: Client, w: ReportWorld, d: Made, mid: string) => okPost(client, w.h.operator, `${ms(d, mid)}/submit-evidence`, { summary: 'Barang diterima' });
export const decide = (client: Client, w: ReportWorld, mid: string, decision: 'approve' | 'reject' | 'revision') =>
  okPost(client, w.h.finance, `/v1/enterprise/approvals/${mid}/decide`, { decision });
export const dispute = (client: Client, w: ReportWorld, d: Made, mid: string) => okPost(client, w.h.operator, `${ms(d, mid)}/dispute`, { reason: 'Barang rusak' });
export const rule = (client: Client, w: ReportWorld, mid: string, outcome: 'release' | 'refund') => okPost(client, w.staff, `/v1/admin/enterprise/milestones/${mid}/resolve-dispute`, { outcome });
export const cancel = (client: Client, w: ReportWorld, d: Made) => okPost(client, w.h.operator, `${DEALS}/${d.id}/cancel`);

/** A verified payout instruction of the counterparty (finance creates, staff verifies). */
export async function instruction(client: Client, w: ReportWorld, cpId: string, label: string, accountNumber: string, bank = 'BCA'): Promise<string> {
  const made = await okPost(client, w.h.finance, '/v1/enterprise/payout-instructions', { label, counterparty_id: cpId, bank_name: bank, account_number: accountNumber, account_holder: 'PT Pemasok Jaya' });
  await okPost(client, w.staff, `/v1/admin/enterprise/payout-instructions/${made.id as string}/verify`, { destination_version: made.destination_version });
  return made.id as string;
}

/** Releases an approved milestone whole to one instruction; answers the payout amount. */
export async function release(client: Client, w: ReportWorld, d: Made, mid: string, instructionId: string): Promise<number> {
  const m = await db('deal_milestones').where({ id: mid }).first<{ payout_amount: number }>('payout_amount');
  await okPost(client, w.h.finance, `${ms(d, mid)}/release`, { splits: [{ payout_instruction_id: instructionId, amount: m.payout_amount }] });
  return m.payout_amount;
}

export const payoutsOf = (mid: string) => db('disbursements').where({ milestone_id: mid }).orderBy('split_no').select<{ id: string; amount: number; status: string }[]>('*');
export const settle = (client: Client, w: ReportWorld, id: string) => okPost(client, w.staff, `/v1/admin/enterprise/disbursements/${id}/settle`);
export const failPayout = (client: Client, w: ReportWorld, id: string, reason: string) => okPost(client, w.staff, `/v1/admin/enterprise/disbursements/${id}/fail`, { reason });

/** Another counterparty of the workspace. */
export const counterparty = (client: Client, w: ReportWorld, name: string) => counterpartyVia(client, w.h.owner, { name });

/** GET a CSV route without export_id (202), run the exports worker, fetch the file. */
export async function exportCsv(client: Client, h: Headers, path: string, query = '') {
  const req = await client.get(`${path}${query}`).set(h);
  expect(req.status, JSON.stringify(req.body)).to.equal(202);
  await runJobs(['exports']);
  const res = await client.get(`${path}?export_id=${req.body.data.export_id as string}`).set(h).buffer(true);
  expect(res.status, res.text).to.equal(200);
  return { id: req.body.data.export_id as string, res, lines: res.text.split('\r\n').slice(0, -1) };
}
