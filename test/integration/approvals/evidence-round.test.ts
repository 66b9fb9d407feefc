/**
 * Evidence added after the first approval of a round is refused (issue 42 point 5; decision
 * 0019 "Issue 42: authority when money moves"), on both paths evidence takes:
 *  - POST /v1/enterprise/documents with the milestone's `milestone_id`: 409 LOCKED once the
 *    current round has an approval (evidence_submitted with one of two, approved, released),
 *    nothing written; a document of the deal alone is still taken;
 *  - POST .../submit-evidence: refused by the state table (409 CONCURRENT_MODIFICATION from
 *    evidence_submitted or approved), the round, its slots and the evidence unchanged.
 * Before any approval documents are taken; after a revision request (the round closed) they
 * are taken again and the next submit-evidence opens a new round needing every approval.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { DEALS, type DealWorld, type Headers } from '../../factories/deals.js';
import { db } from '../../../shared/db.js';
import { THRESHOLD, approvalSnapshot, approvalWorld, decideOk, expectError, milestoneStatus, slotRows, submittedDeal, type ApprovalWorld } from './support.js';

describe('issue 42: evidence after the first approval of a round is refused', () => {
  const client = api();
  const addDoc = (h: Headers, extra: Record<string, unknown>, title = 'Laporan inspeksi') =>
    client.post('/v1/enterprise/documents').set(h).send({ title, document_type: 'inspection', file_url: 'https://files.example.com/inspeksi.pdf', ...extra });
  const submit = (w: DealWorld, dealId: string, mid: string, body: Record<string, unknown> = { summary: 'Bukti baru' }) =>
    client.post(`${DEALS}/${dealId}/milestones/${mid}/submit-evidence`).set(w.h.operator).send(body);
  const docsOf = (mid: string) => db('deal_documents').where({ milestone_id: mid }).orderBy('id').select('id');
  const evidence = async (h: Headers, mid: string) => ((await client.get(`/v1/enterprise/approvals/${mid}`).set(h)).body.data as { evidence: { id: string }[] }).evidence.map((d) => d.id);

  let w: ApprovalWorld;
  beforeEach(async () => {
    w = await approvalWorld(client);
  });

  it('four-eyes: a document is taken before the first approval, refused (409 LOCKED) after it and once approved; submit-evidence is refused (409) and the round stays as it was', async () => {
    const d = await submittedDeal(client, w, [THRESHOLD]);
    const mid = d.milestones[0]!.id;
    const before = await addDoc(w.h.operator, { milestone_id: mid }, 'Sebelum persetujuan');
    expect(before.status, JSON.stringify(before.body)).to.equal(201);
    await decideOk(client, w.h.finance, mid);
    expect(await milestoneStatus(mid)).to.equal('evidence_submitted');
    const shown = await evidence(w.h.viewer, mid);
    const docs = await docsOf(mid);
    const snap = await approvalSnapshot(w.workspace.id);

    const late = await addDoc(w.h.operator, { milestone_id: mid }, 'Setelah persetujuan pertama');
    expectError(late, 409, 'LOCKED');
    expect(late.body.error!.message).to.match(/approval in its current round/);
    // With deal_id as well: the milestone decides.
    expectError(await addDoc(w.h.operator, { deal_id: d.deal.id, milestone_id: mid }), 409, 'LOCKED');
    expectError(await submit(w, d.deal.id, mid), 409, 'CONCURRENT_MODIFICATION');
    expect(await docsOf(mid)).to.deep.equal(docs);
    expect(await approvalSnapshot(w.workspace.id)).to.deep.equal(snap);
    // The second approver sees what the first one saw.
    expect(await evidence(w.h.viewer, mid)).to.deep.equal(shown);
    // A document of the deal alone is still taken (not evidence of the milestone).
    expect((await addDoc(w.h.operator, { deal_id: d.deal.id }, 'Dokumen transaksi')).status).to.equal(201);

    await decideOk(client, w.finance2.h, mid);
    expect(await milestoneStatus(mid)).to.equal('approved');
    expectError(await addDoc(w.h.operator, { milestone_id: mid }), 409, 'LOCKED');
    expectError(await submit(w, d.deal.id, mid), 409, 'CONCURRENT_MODIFICATION');
    expect(await docsOf(mid)).to.deep.equal(docs);
  });

  it('a revision request closes the round: documents are taken again and submit-evidence opens a new round that needs every approval again', async () => {
    const d = await submittedDeal(client, w, [THRESHOLD]);
    const mid = d.milestones[0]!.id;
    await decideOk(client, w.h.finance, mid);
    expectError(await addDoc(w.h.operator, { milestone_id: mid }), 409, 'LOCKED');
    await decideOk(client, w.finance2.h, mid, { decision: 'revision', note: 'Lampirkan laporan inspeksi' });
    expect(await milestoneStatus(mid)).to.equal('revision_requested');
    const doc = await addDoc(w.h.operator, { milestone_id: mid });
    expect(doc.status, JSON.stringify(doc.body)).to.equal(201);
    const again = await submit(w, d.deal.id, mid, { summary: 'Dengan laporan inspeksi', document_ids: [doc.body.data.id] });
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    const round2 = (await slotRows(mid)).filter((s) => s.round === 2);
    expect(round2.map((s) => s.status)).to.deep.equal(['pending', 'pending']);
    // The first approver of round 1 decides anew in round 2; until then documents are still taken.
    expect((await addDoc(w.h.operator, { milestone_id: mid }, 'Tambahan')).status).to.equal(201);
    await decideOk(client, w.h.finance, mid);
    expectError(await addDoc(w.h.operator, { milestone_id: mid }), 409, 'LOCKED');
  });

  it('one approval: approved, then released: a document on the milestone is refused; a milestone never approved takes documents', async () => {
    const d = await submittedDeal(client, w, [1_000_000, 1_000_000]);
    const [m1, m2] = [d.milestones[0]!.id, d.milestones[1]!.id];
    await decideOk(client, w.h.finance, m1);
    expect(await milestoneStatus(m1)).to.equal('approved');
    expectError(await addDoc(w.h.operator, { milestone_id: m1 }), 409, 'LOCKED');
    await db('deal_milestones').where({ id: m1 }).update({ status: 'released', released_at: new Date() });
    expectError(await addDoc(w.h.operator, { milestone_id: m1 }), 409, 'LOCKED');
    expect((await addDoc(w.h.operator, { milestone_id: m2 })).status).to.equal(201);
  });
});
