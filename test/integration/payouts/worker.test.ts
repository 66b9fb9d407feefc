/**
 * The payout worker and staff moves on payouts (enterprise spec 4.6; D10 settle/fail;
 * decision 0019; issue 27): queued -> processing -> settled through the adapter, run twice
 * (pays once), killed midway (the claim runs out, the sweeper re-queues, the next run sends
 * the same reference), an instruction altered after its verification never paid, a refused
 * payout's money back on the milestone and released again, staff settling and failing by
 * hand (never while a worker holds the claim), GET /payouts; the ledger check after each.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { runJobs } from '../../helpers/jobs.js';
import { dealWorld, feedRows, milestoneRows } from '../../factories/deals.js';
import { balance, disbursementsOf, instructionVia, releasePath, releasedMilestone } from '../../factories/releases.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { encryptSecret } from '../../../shared/crypto.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import { setDisbursementAdapter, type DisbursementAdapter, type DisbursementRequest } from '../../../shared/payouts/adapter.js';
import { DisbursementBusyError, runDisbursement, sweepDisbursements } from '../../../shared/payouts/worker.js';
import { getQueue } from '../../../shared/queues.js';

/** A provider that records every call and pays each reference once (a repeated reference answers the same transfer). */
function recordingProvider(answer: (r: DisbursementRequest) => 'paid' | 'refuse' | 'throw' = () => 'paid') {
  const calls: DisbursementRequest[] = [];
  const paid = new Map<string, string>();
  const adapter: DisbursementAdapter = {
    name: 'recording',
    automatic: true,
    send: (r) => {
      calls.push(r);
      const a = answer(r);
      if (a === 'throw') return Promise.reject(new Error('provider timeout'));
      if (a === 'refuse') return Promise.resolve({ outcome: 'failed', reason: 'account closed' });
      if (!paid.has(r.reference)) paid.set(r.reference, `trf-${paid.size + 1}`);
      return Promise.resolve({ outcome: 'paid', providerReference: paid.get(r.reference)! });
    },
  };
  return { adapter, calls, paid };
}

const statusOf = async (id: string) => ((await db('disbursements').where({ id }).first()) as { status: string }).status;

describe('enterprise payouts: the worker and staff (D10, decision 0019)', () => {
  const client = api();
  afterEach(() => {
    setDisbursementAdapter(null);
    clock.reset();
  });

  it('the job settles a live payout once; running it twice pays once; the ledger moves in flight -> sent', async () => {
    const p = recordingProvider();
    setDisbursementAdapter(p.adapter);
    const r = await releasedMilestone(client, 'live', ['Utama', 'Cadangan']);
    const inFlight = await balance('enterprise:payouts_in_flight');
    const sent = await balance('enterprise:payouts_sent');
    await runJobs(['payouts']);
    const [a, b] = r.disbursements;
    expect([await statusOf(a!.id), await statusOf(b!.id)]).to.deep.equal(['settled', 'settled']);
    expect(p.calls.map((c) => [c.reference, c.amount, c.destination.bank_name])).to.have.deep.members([
      [`disb_${a!.id}`, r.payout - 1, 'BCA'],
      [`disb_${b!.id}`, 1, 'BCA'],
    ]);
    expect(p.calls[0]!.destination.account_number).to.match(/^\d+$/);
    expect(inFlight - (await balance('enterprise:payouts_in_flight'))).to.equal(r.payout);
    expect((await balance('enterprise:payouts_sent')) - sent).to.equal(r.payout);
    // Twice: nothing more is sent or posted.
    expect(await runDisbursement(a!.id)).to.deep.equal({ outcome: 'skipped', disbursement_id: a!.id, status: 'settled' });
    expect(p.calls).to.have.length(2);
    const rows = await disbursementsOf(r.mid);
    expect(rows.map((d) => [d.status, d.attempts, d.provider_reference])).to.have.deep.members([
      ['settled', 1, p.paid.get(`disb_${a!.id}`)],
      ['settled', 1, p.paid.get(`disb_${b!.id}`)],
    ]);
    const feed = (await feedRows(r.w.workspace.id, r.deal.deal.id)).filter((e) => e.event === 'disbursement.settled');
    expect(feed.map((e) => e.entity_id)).to.have.members([a!.id, b!.id]);
    expect(feed.every((e) => e.actor_id === null && e.actor_label === null && e.livemode)).to.equal(true);
    const deal = await client.get(`/v1/enterprise/deals/${r.deal.deal.id}`).set(r.w.h.viewer);
    const m = (deal.body.data.milestones as { id: string; disbursements: { status: string; settled_at: string | null }[] }[]).find((x) => x.id === r.mid)!;
    expect(m.disbursements.map((d) => d.status)).to.deep.equal(['settled', 'settled']);
    expect(m.disbursements.every((d) => typeof d.settled_at === 'string')).to.equal(true);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('killed midway (claimed, the provider may have paid, never settled): the claim runs out, the sweeper re-queues it, the next run pays the same reference once', async () => {
    const p = recordingProvider();
    setDisbursementAdapter(p.adapter);
    const r = await releasedMilestone(client, 'live');
    const d = r.disbursements[0]!;
    // What a run killed after the provider call leaves: processing, a claim, and a transfer made at the provider.
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    clock.set(now);
    await db('disbursements').where({ id: d.id }).update({ status: 'processing', attempts: 1, lease_until: new Date(now.getTime() + 15_000) });
    await p.adapter.send({ reference: `disb_${d.id}`, disbursementId: d.id, amount: Number(d.amount), currency: 'IDR', destination: { bank_name: 'BCA', account_holder: 'x', account_number: '1' } });
    // While the claim holds, another run is refused (retried later) and staff cannot settle or fail it.
    let busy: unknown;
    await runDisbursement(d.id).catch((e: unknown) => (busy = e));
    expect(busy).to.be.instanceOf(DisbursementBusyError);
    const staffSettle = await client.post(`/v1/admin/enterprise/disbursements/${d.id}/settle`).set(r.staff).send({});
    expect(staffSettle.status).to.equal(409);
    expect(staffSettle.body.error.code).to.equal('CONCURRENT_MODIFICATION');
    expect(await sweepDisbursements()).to.deep.equal({ requeued: 0 });
    // The claim runs out: the sweeper queues it again (once, however often it sweeps).
    clock.set(new Date(now.getTime() + 16_000));
    expect((await sweepDisbursements()).requeued).to.equal(1);
    await sweepDisbursements();
    const waiting = await getQueue('payouts').getJobs(['waiting', 'delayed', 'prioritized']);
    expect(waiting.filter((j) => j.name === 'payouts.disburse' && (j.data as { disbursement_id: string }).disbursement_id === d.id)).to.have.length(1);
    await runJobs(['payouts']);
    expect(await statusOf(d.id)).to.equal('settled');
    expect(p.paid.size).to.equal(1);
    expect(p.calls.map((c) => c.reference)).to.deep.equal([`disb_${d.id}`, `disb_${d.id}`]);
    expect(await db('journal_entries').where({ posting_key: `ent-settle:${d.id}` }).select('id')).to.have.length(1);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a provider error is retried with the same reference; the claim ends at once so the retry can take it', async () => {
    let fail = true;
    const p = recordingProvider(() => (fail ? 'throw' : 'paid'));
    setDisbursementAdapter(p.adapter);
    const r = await releasedMilestone(client, 'live');
    const d = r.disbursements[0]!;
    let err: unknown;
    await runDisbursement(d.id).catch((e: unknown) => (err = e));
    expect(String(err)).to.include('provider timeout');
    const row = (await disbursementsOf(r.mid))[0]!;
    expect(row.status).to.equal('processing');
    expect(row.failure_reason).to.equal('provider timeout');
    fail = false;
    expect((await runDisbursement(d.id)).outcome).to.equal('settled');
    expect(p.calls.map((c) => c.reference)).to.deep.equal([`disb_${d.id}`, `disb_${d.id}`]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('an instruction altered in the database after the release is never paid: the payout fails and its money returns to the milestone, then goes again to a new verified instruction', async () => {
    const p = recordingProvider();
    setDisbursementAdapter(p.adapter);
    const r = await releasedMilestone(client, 'live');
    const d = r.disbursements[0]!;
    await db('payout_instructions').where({ id: d.payout_instruction_id }).update({ account_number_sealed: encryptSecret('9999999999') });
    const run = await runDisbursement(d.id);
    expect(run.outcome).to.equal('failed');
    expect(p.calls).to.deep.equal([]);
    const row = (await disbursementsOf(r.mid))[0]!;
    expect(row.status).to.equal('failed');
    expect(row.failure_reason).to.match(/destination refused: signature_mismatch/);
    const m = (await milestoneRows(r.deal.deal.id))[0]!;
    expect(m.status).to.equal('released');
    expect(Number((m as unknown as { returned_amount: string }).returned_amount)).to.equal(r.payout);
    expect(await balance(`milestone:${r.mid}`)).to.equal(r.payout);
    expect(await checkLedger(db)).to.deep.equal([]);
    // The failure is visible: GET /payouts and the feed.
    const list = await client.get('/v1/enterprise/payouts').set(r.w.h.viewer);
    expect(list.body.data[0]).to.deep.include({ id: d.id, status: 'failed', amount: r.payout });
    expect((await feedRows(r.w.workspace.id, r.deal.deal.id)).map((e) => e.event)).to.include('disbursement.failed');
    // Released again: exactly the returned amount, to a new verified instruction.
    const fresh = await instructionVia(client, r, 'Rekening baru');
    const wrong = await client.post(releasePath(r.deal.deal.id, r.mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: fresh, amount: r.payout + 1 }] });
    expect(wrong.status).to.equal(400);
    const again = await client.post(releasePath(r.deal.deal.id, r.mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: fresh, amount: r.payout }] });
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    const twice = await client.post(releasePath(r.deal.deal.id, r.mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: fresh, amount: r.payout }] });
    expect(twice.status).to.equal(409);
    const rows = await disbursementsOf(r.mid);
    expect(rows.map((x) => [x.release_no, x.status, x.payout_instruction_id])).to.deep.equal([
      [1, 'failed', d.payout_instruction_id],
      [2, 'queued', fresh],
    ]);
    expect((await feedRows(r.w.workspace.id, r.deal.deal.id)).slice(-2).map((e) => e.event)).to.deep.equal(['milestone.payouts_retried', 'disbursement.queued']);
    await runJobs(['payouts']);
    expect((await disbursementsOf(r.mid)).map((x) => x.status)).to.deep.equal(['failed', 'settled']);
    expect(p.calls.map((c) => c.disbursementId)).to.deep.equal([rows[1]!.id]);
    expect(await balance(`milestone:${r.mid}`)).to.equal(0);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('an instruction edited through the API after the release is refused while its payout is open; the provider refusing a payout returns it', async () => {
    const p = recordingProvider(() => 'refuse');
    setDisbursementAdapter(p.adapter);
    const r = await releasedMilestone(client, 'live');
    const d = r.disbursements[0]!;
    const edit = await client.patch(`/v1/enterprise/payout-instructions/${d.payout_instruction_id}`).set(r.w.h.finance).send({ account_number: '5555555555' });
    expect(edit.status).to.equal(409);
    expect((await runDisbursement(d.id)).outcome).to.equal('failed');
    expect((await disbursementsOf(r.mid))[0]!.failure_reason).to.equal('account closed');
    expect(await balance(`milestone:${r.mid}`)).to.equal(r.payout);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a sandbox payout is paid by the sandbox adapter whatever is configured, and never posts', async () => {
    const p = recordingProvider();
    setDisbursementAdapter(p.adapter);
    const r = await releasedMilestone(client, 'sandbox');
    const before = await db('journal_entries').count<{ count: string }[]>('* as count');
    await runJobs(['payouts']);
    const row = (await disbursementsOf(r.mid))[0]!;
    expect(row.status).to.equal('settled');
    expect(row.provider_reference).to.equal(`sandbox-disb_${row.id}`);
    expect(p.calls).to.deep.equal([]);
    expect(await db('journal_entries').count<{ count: string }[]>('* as count')).to.deep.equal(before);
  });

  it('with no provider (manual adapter) the job leaves payouts queued for staff; staff settle one and fail another with a reason', async () => {
    setDisbursementAdapter({ name: 'manual', automatic: false, send: () => Promise.reject(new Error('never')) });
    const r = await releasedMilestone(client, 'live', ['Utama', 'Cadangan']);
    await runJobs(['payouts']);
    const [a, b] = r.disbursements;
    expect([await statusOf(a!.id), await statusOf(b!.id)]).to.deep.equal(['queued', 'queued']);
    const settled = await client.post(`/v1/admin/enterprise/disbursements/${a!.id}/settle`).set(r.staff).send({ note: 'Transfer BCA 12/11' });
    expect(settled.status, JSON.stringify(settled.body)).to.equal(200);
    expect(settled.body.data).to.deep.include({ id: a!.id, status: 'settled', amount: r.payout - 1, instruction_label: 'Utama', bank_name: 'BCA' });
    expect(settled.body.data.account_number_masked).to.match(/^…\d{4}$/);
    const noReason = await client.post(`/v1/admin/enterprise/disbursements/${b!.id}/fail`).set(r.staff).send({});
    expect(noReason.status).to.equal(400);
    const failed = await client.post(`/v1/admin/enterprise/disbursements/${b!.id}/fail`).set(r.staff).send({ reason: 'Rekening ditutup' });
    expect(failed.status).to.equal(200);
    expect(failed.body.data).to.deep.include({ status: 'failed', failure_reason: 'Rekening ditutup' });
    for (const [id, move] of [
      [a!.id, 'settle'],
      [a!.id, 'fail'],
      [b!.id, 'settle'],
    ] as const) {
      const res = await client.post(`/v1/admin/enterprise/disbursements/${id}/${move}`).set(r.staff).send(move === 'fail' ? { reason: 'lagi' } : {});
      expect(res.status, `${move} ${id}`).to.equal(409);
      expect(res.body.error.code).to.equal('INVALID_STATE');
    }
    const feed = (await feedRows(r.w.workspace.id, r.deal.deal.id)).filter((e) => e.event === 'disbursement.settled' || e.event === 'disbursement.failed');
    expect(feed.map((e) => [e.event, e.actor_id, e.actor_label])).to.deep.equal([
      ['disbursement.settled', null, 'Operator'],
      ['disbursement.failed', null, 'Operator'],
    ]);
    expect(await db('staff_audit').whereIn('target_id', [a!.id, b!.id]).orderBy('id').select('action')).to.deep.equal([{ action: 'disbursement.settled' }, { action: 'disbursement.failed' }]);
    expect(await balance(`milestone:${r.mid}`)).to.equal(1);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('races: the worker against staff settling, and staff settling against staff failing, end in one outcome posted once', async () => {
    for (let round = 0; round < 3; round++) {
      const p = recordingProvider();
      setDisbursementAdapter(p.adapter);
      const r = await releasedMilestone(client, 'live', ['Utama', 'Cadangan']);
      const [a, b] = r.disbursements;
      const [run, bySettle] = await Promise.all([runDisbursement(a!.id).catch((e: unknown) => e), client.post(`/v1/admin/enterprise/disbursements/${a!.id}/settle`).set(r.staff).send({})]);
      expect(await statusOf(a!.id)).to.equal('settled');
      // Either staff settled it first (the worker skipped, nothing sent) or the worker claimed it first (staff refused).
      if (bySettle.status === 200) expect(p.calls).to.deep.equal([]);
      else {
        expect(bySettle.status).to.equal(409);
        expect((run as { outcome: string }).outcome).to.equal('settled');
        expect(p.calls).to.have.length(1);
      }
      const [s1, s2] = await Promise.all([
        client.post(`/v1/admin/enterprise/disbursements/${b!.id}/settle`).set(r.staff).send({}),
        client.post(`/v1/admin/enterprise/disbursements/${b!.id}/fail`).set(r.staff).send({ reason: 'Ditolak' }),
      ]);
      expect([s1.status, s2.status].sort()).to.deep.equal([200, 409]);
      expect(await db('journal_entries').whereIn('posting_key', [`ent-settle:${a!.id}`, `ent-settle:${b!.id}`, `ent-fail:${a!.id}`, `ent-fail:${b!.id}`]).select('id')).to.have.length(2);
      expect(await checkLedger(db)).to.deep.equal([]);
      setDisbursementAdapter(null);
    }
  });

  it('staff routes: a workspace member (not staff) is refused 403; an unknown id 404', async () => {
    setDisbursementAdapter({ name: 'manual', automatic: false, send: () => Promise.reject(new Error('never')) });
    const r = await releasedMilestone(client, 'sandbox');
    const d = r.disbursements[0]!;
    for (const h of [r.w.h.owner, r.w.h.finance]) {
      const res = await client.post(`/v1/admin/enterprise/disbursements/${d.id}/settle`).set(h).send({});
      expect(res.status).to.equal(403);
    }
    const missing = await client.post('/v1/admin/enterprise/disbursements/00000000-0000-4000-8000-000000000000/settle').set(r.staff).send({});
    expect(missing.status).to.equal(404);
    const malformed = await client.post('/v1/admin/enterprise/disbursements/nope/fail').set(r.staff).send({ reason: 'x' });
    expect(malformed.status).to.equal(404);
    expect(await statusOf(d.id)).to.equal('queued');
  });

  it('GET /payouts: viewer reads the workspace\'s payouts newest first with masked accounts and filters; another workspace sees none', async () => {
    const r = await releasedMilestone(client, 'sandbox', ['Utama', 'Cadangan']);
    const res = await client.get('/v1/enterprise/payouts').set(r.w.h.viewer);
    expect(res.status).to.equal(200);
    expect(res.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 2, total_pages: 1 });
    // The splits of one release in their order; a later release first.
    expect((res.body.data as { instruction_label: string }[]).map((p) => p.instruction_label)).to.deep.equal(['Utama', 'Cadangan']);
    const later = await releasedMilestone(client, 'sandbox', ['Baru'], r.w);
    const again = await client.get('/v1/enterprise/payouts').set(r.w.h.viewer);
    expect((again.body.data as { id: string }[]).map((p) => p.id)).to.deep.equal([later.disbursements[0]!.id, ...r.disbursements.map((d) => d.id)]);
    const item = res.body.data[0] as Record<string, unknown>;
    expect(Object.keys(item).sort()).to.deep.equal(
      ['id', 'deal_id', 'deal_reference', 'milestone_id', 'milestone_title', 'payout_instruction_id', 'instruction_label', 'counterparty_name', 'bank_name', 'account_holder', 'account_number_masked', 'amount', 'currency', 'status', 'failure_reason', 'settled_at', 'failed_at', 'created_at', 'is_test'].sort(),
    );
    expect(JSON.stringify(res.body)).to.not.match(/"account_number"/);
    const filtered = await client.get(`/v1/enterprise/payouts?status=settled&deal_id=${r.deal.deal.id}`).set(r.w.h.viewer);
    expect(filtered.body.data).to.deep.equal([]);
    const bad = await client.get('/v1/enterprise/payouts?status=paid').set(r.w.h.viewer);
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal('INVALID_QUERY');
    const stranger = await dealWorld(client, 'Orang Asing');
    const theirs = await client.get('/v1/enterprise/payouts').set(stranger.h.owner);
    expect(theirs.body.data).to.deep.equal([]);
  });
});
