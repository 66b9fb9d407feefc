/**
 * E-mail about deal money (enterprise spec 2 Membership `notify`; shared/deals/mail.ts;
 * decision 0019): evidence submitted reaches finance and above who opted in to e-mail and
 * approvals, never the submitter; a release reaches every member opted in to money but the
 * releaser; a failed payout reaches finance and above opted in to money. Opted-out,
 * suspended and removed members never get one; bodies are sealed until sent.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { addMember, headersOf, sessionOf } from '../../factories/enterprise.js';
import { approve, fundedDeal, instructionVia, releasePath } from '../../factories/releases.js';
import { clock } from '../../../shared/clock.js';
import { decryptSecret } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';

interface MailRow {
  user_id: string;
  template: string;
  subject: string;
  body_sealed: string;
}
const mails = (template: string) => db('outbound_emails').where({ template }).orderBy('user_id').select<MailRow[]>('user_id', 'template', 'subject', 'body_sealed');

describe('deal e-mail to members (notify approvals, money)', () => {
  const client = api();

  it('evidence, release and a failed payout each reach the members who opted in, and no one else', async () => {
    const r = await fundedDeal(client, 'live');
    const ws = r.w.workspace.id;
    const finance2 = await addMember(ws, 'finance');
    const admin = await addMember(ws, 'admin');
    const noApprovals = await addMember(ws, 'finance');
    await db('workspace_members').where({ id: noApprovals.member.id }).update({ notify_approvals: false });
    const noMoney = await addMember(ws, 'admin');
    await db('workspace_members').where({ id: noMoney.member.id }).update({ notify_money: false });
    const noEmail = await addMember(ws, 'owner');
    await db('workspace_members').where({ id: noEmail.member.id }).update({ notify_email: false });
    const suspended = await addMember(ws, 'finance');
    await db('workspace_members').where({ id: suspended.member.id }).update({ status: 'suspended' });
    const removed = await addMember(ws, 'finance');
    await db('workspace_members').where({ id: removed.member.id }).update({ status: 'removed', removed_at: clock.now() });
    const sorted = (ids: string[]) => [...ids].sort();

    // Evidence by the finance member: finance and above who opted in to approvals, not the submitter.
    const mid = r.mids[0]!;
    const ev = await client.post(`/v1/enterprise/deals/${r.deal.deal.id}/milestones/${mid}/submit-evidence`).set(r.w.h.finance).send({ summary: 'Barang diterima' });
    expect(ev.status, JSON.stringify(ev.body)).to.equal(200);
    const approvals = await mails('enterprise.approval-needed');
    expect(approvals.map((m) => m.user_id)).to.deep.equal(sorted([r.w.owner.id, finance2.user.id, admin.user.id, noMoney.user.id]));
    const reference = String(r.deal.deal.reference);
    expect(approvals[0]!.subject).to.equal(`Approval needed: ${reference} milestone 1`);
    expect(approvals[0]!.body_sealed).to.not.include(reference);
    expect(decryptSecret(approvals[0]!.body_sealed)).to.include(`deal ${reference}`);

    // Released by finance2: every member opted in to money (viewer and operator too), not the releaser.
    await approve(mid);
    const a = await instructionVia(client, r, 'Utama');
    const payout = Number((await db('deal_milestones').where({ id: mid }).first<{ payout_amount: string } | undefined>('payout_amount'))!.payout_amount);
    const h2 = headersOf(await sessionOf(finance2.user));
    const rel = await client.post(releasePath(r.deal.deal.id, mid)).set(h2).send({ splits: [{ payout_instruction_id: a, amount: payout }] });
    expect(rel.status, JSON.stringify(rel.body)).to.equal(200);
    const released = await mails('enterprise.milestone-released');
    expect(released.map((m) => m.user_id)).to.deep.equal(sorted([r.w.owner.id, r.w.users.operator.id, r.w.users.finance.id, r.w.users.viewer.id, admin.user.id, noApprovals.user.id]));

    // A payout failed by staff: finance and above opted in to money.
    const d = (await db('disbursements').where({ milestone_id: mid }).first<{ id: string } | undefined>('id'))!;
    const failed = await client.post(`/v1/admin/enterprise/disbursements/${d.id}/fail`).set(r.staff).send({ reason: 'Rekening ditutup' });
    expect(failed.status).to.equal(200);
    const bounced = await mails('enterprise.payout-failed');
    expect(bounced.map((m) => m.user_id)).to.deep.equal(sorted([r.w.owner.id, r.w.users.finance.id, finance2.user.id, admin.user.id, noApprovals.user.id]));
    expect(decryptSecret(bounced[0]!.body_sealed)).to.include('Rekening ditutup');
  });

  it('a refused move sends nothing', async () => {
    const r = await fundedDeal(client, 'sandbox');
    await approve(r.mids[0]!);
    const res = await client.post(releasePath(r.deal.deal.id, r.mids[0]!)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: '00000000-0000-4000-8000-000000000000', amount: 1 }] });
    expect(res.status).to.equal(400);
    expect(await db('outbound_emails').where('template', 'like', 'enterprise.%').whereNot('template', 'like', 'enterprise.member%').select('id')).to.deep.equal([]);
  });
});
