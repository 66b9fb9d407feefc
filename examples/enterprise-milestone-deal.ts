/**
 * An enterprise milestone deal, from a sandbox workspace to a settled payout (issue 45):
 *
 *   a user signs up and opens a workspace (a sandbox) -> invites a colleague as second
 *   approver -> adds a counterparty and its payout instruction -> the operator (staff)
 *   verifies both -> a deal with one milestone is created, activated and funded (sandbox)
 *   -> evidence is submitted -> the colleague approves -> the milestone is released to the
 *   payout instruction -> the operator settles the payout.
 *
 * Needs the API and the worker running at API_URL (default http://localhost:3000), and the
 * staff account the seed made from ADMIN_EMAIL / ADMIN_PASSWORD, in this environment too:
 *   ADMIN_EMAIL=ops@example.com ADMIN_PASSWORD='Choose1Strong' node --import tsx examples/enterprise-milestone-deal.ts
 */
import { expectEqual, idempotencyKey, must, register, run, say, signIn, sleep, tag } from './lib.js';

const ADMIN_EMAIL = process.env.ADMIN_EMAIL;
const ADMIN_PASSWORD = process.env.ADMIN_PASSWORD;

run(async () => {
  if (!ADMIN_EMAIL || !ADMIN_PASSWORD) throw new Error('set ADMIN_EMAIL and ADMIN_PASSWORD (the staff account the seed created)');

  // 1. A user signs up and opens a workspace; a new workspace is a sandbox (no real money).
  const owner = await register('Rina Pengadaan');
  const { account } = must(
    'open workspace',
    await owner.api.POST('/v1/enterprise/register', {
      body: { legal_name: `PT Contoh Niaga ${tag()}`, display_name: 'Contoh Niaga', entity_type: 'pt', nib: '1234567890123' },
    }),
  );
  expectEqual('new workspace is a sandbox', account.is_sandbox, true);
  say(`workspace  ${account.display_name} (${account.id}), sandbox`);

  // 2. A colleague joins as finance: whoever submits a milestone's evidence cannot approve it.
  const colleague = await register('Dewi Keuangan');
  must(
    'invite colleague',
    await owner.api.POST('/v1/enterprise/members', {
      params: { header: { 'Idempotency-Key': idempotencyKey() } },
      body: { email: colleague.user.email, role: 'finance' },
    }),
  );
  const { invites } = must('colleague reads invites', await colleague.api.GET('/v1/enterprise/me'));
  const invite = invites.find((i) => i.display_name === account.display_name);
  if (!invite) throw new Error(`no pending invite for ${colleague.user.email}`);
  must(
    'accept invite',
    await colleague.api.POST('/v1/enterprise/invites/{memberId}/accept', { params: { path: { memberId: invite.member_id } }, body: {} }),
  );
  say(`member     ${colleague.user.email} joined as ${invite.role}`);

  // 3. The workspace adds the counterparty (the seller it pays) ...
  const counterparty = must(
    'add counterparty',
    await owner.api.POST('/v1/enterprise/counterparties', {
      params: { header: { 'Idempotency-Key': idempotencyKey() } },
      body: { name: 'PT Pemasok Jaya', relationship: 'seller', email: 'finance@pemasok.example' },
    }),
  );
  say(`counter.   ${counterparty.name} (${counterparty.id}), ${counterparty.kyb_status}`);

  // 4. ... and the bank account it is paid to: a payout instruction, pending staff verification.
  const instruction = must(
    'add payout instruction',
    await owner.api.POST('/v1/enterprise/payout-instructions', {
      params: { header: { 'Idempotency-Key': idempotencyKey() } },
      body: { label: 'Rekening utama', counterparty_id: counterparty.id, bank_name: 'BCA', account_number: '8012345678', account_holder: 'PT Pemasok Jaya' },
    }),
  );
  say(`payout to  ${instruction.label}: ${instruction.bank_name} ${instruction.account_number_masked}, ${instruction.status}`);

  // 5. The operator (staff) signs in and verifies the counterparty.
  const operator = await signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
  must(
    'verify counterparty',
    await operator.api.POST('/v1/admin/enterprise/counterparties/{id}/verify', {
      params: { path: { id: counterparty.id }, header: { 'Idempotency-Key': idempotencyKey() } },
      body: { note: 'Checked the company registry' },
    }),
  );

  // 6. The operator reveals the payout instruction, checks the account outside the service,
  //    and verifies the version it was shown (the verification signs that destination).
  const shown = must(
    'reveal payout instruction',
    await operator.api.POST('/v1/admin/enterprise/payout-instructions/{id}/reveal', {
      params: { path: { id: instruction.id } },
      body: { note: 'Verification call' },
    }),
  );
  const verified = must(
    'verify payout instruction',
    await operator.api.POST('/v1/admin/enterprise/payout-instructions/{id}/verify', {
      params: { path: { id: instruction.id }, header: { 'Idempotency-Key': idempotencyKey() } },
      body: { destination_version: shown.destination_version, note: 'Account holder confirmed with the bank' },
    }),
  );
  expectEqual('payout instruction', verified.status, 'verified');
  say(`operator   verified the counterparty and the payout instruction`);

  // 7. The workspace creates a deal with one milestone (it starts as a draft) ...
  const created = must(
    'create deal',
    await owner.api.POST('/v1/enterprise/deals', {
      params: { header: { 'Idempotency-Key': idempotencyKey() } },
      body: {
        title: 'Pengadaan 20 laptop',
        counterparty_id: counterparty.id,
        external_ref: `PO-${tag()}`,
        // IDR is the default, but the typed client insists on `currency`: openapi-typescript makes a
        // component property with a `default` required, request bodies included (DealCreateBody).
        currency: 'IDR',
        milestones: [{ title: 'Pengiriman laptop', amount: 25_000_000, required_evidence: 'Berita acara serah terima' }],
      },
    }),
  );
  const dealId = created.deal.id;

  // 8. ... and activates it: the fee freezes and the milestone awaits funding.
  const active = must(
    'activate deal',
    await owner.api.POST('/v1/enterprise/deals/{id}/activate', {
      params: { path: { id: dealId }, header: { 'Idempotency-Key': idempotencyKey() } },
      body: {},
    }),
  );
  const milestone = active.milestones[0];
  if (!milestone) throw new Error('the deal has no milestone');
  say(`deal       ${active.deal.reference} (${dealId}), ${active.deal.status}: Rp${milestone.amount}, payout Rp${milestone.payout_amount}`);

  // 9. Finance funds the milestone (sandbox funding: recorded, no money moves).
  const funded = must(
    'fund milestone',
    await owner.api.POST('/v1/enterprise/deals/{id}/milestones/{mid}/fund', {
      params: { path: { id: dealId, mid: milestone.id }, header: { 'Idempotency-Key': idempotencyKey() } },
      body: { method: 'sandbox', reference: 'SANDBOX-TRANSFER-1' },
    }),
  );
  say(`milestone  ${funded.milestone.status}: Rp${funded.milestone.funding_amount}`);

  // 10. The work is done: evidence is submitted (by the owner) ...
  must(
    'submit evidence',
    await owner.api.POST('/v1/enterprise/deals/{id}/milestones/{mid}/submit-evidence', {
      params: { path: { id: dealId, mid: milestone.id }, header: { 'Idempotency-Key': idempotencyKey() } },
      body: { summary: '20 laptop diterima lengkap, berita acara ditandatangani' },
    }),
  );

  // 11. ... and approved by the colleague (one approval: the amount is under the four-eyes threshold).
  const decided = must(
    'approve',
    await colleague.api.POST('/v1/enterprise/approvals/{milestoneId}/decide', {
      params: { path: { milestoneId: milestone.id }, header: { 'Idempotency-Key': idempotencyKey() } },
      body: { decision: 'approve', note: 'Sesuai PO' },
    }),
  );
  expectEqual('milestone after approval', decided.item.status, 'approved');
  say(`milestone  approved`);

  // 12. Finance releases the milestone to the verified payout instruction: one split of the whole payout amount.
  const released = must(
    'release',
    await owner.api.POST('/v1/enterprise/deals/{id}/milestones/{mid}/release', {
      params: { path: { id: dealId, mid: milestone.id }, header: { 'Idempotency-Key': idempotencyKey() } },
      body: { splits: [{ payout_instruction_id: instruction.id, amount: milestone.payout_amount }] },
    }),
  );
  say(`deal       ${released.deal.status}: released Rp${released.deal.released_amount}`);

  // 13. The release made one payout (disbursement), queued.
  const payouts = must(
    'list payouts',
    await owner.api.GET('/v1/enterprise/payouts', { params: { query: { milestone_id: milestone.id } } }),
  );
  const payout = payouts[0];
  if (!payout?.id) throw new Error(`no payout for milestone ${milestone.id}`);
  say(`payout     ${payout.id} Rp${payout.amount}, ${payout.status}`);

  // 14. The operator settles the payout: the money left for the bank account. In a sandbox the
  //     payout worker also pays payouts by itself (sandbox adapter), and may have settled this
  //     one first: then settle answers 409 (INVALID_STATE, or CONCURRENT_MODIFICATION while the
  //     worker holds it) and the payout reads settled below.
  const settle = await operator.api.POST('/v1/admin/enterprise/disbursements/{id}/settle', {
    params: { path: { id: payout.id }, header: { 'Idempotency-Key': idempotencyKey() } },
    body: { note: 'BCA transfer ref 0001' },
  });
  let settled = payout;
  if (settle.response.status === 409) say(`operator   the sandbox payout worker got there first: ${JSON.stringify(settle.error)}`);
  else {
    settled = must('settle payout', settle);
    say(`operator   settled the payout`);
  }

  // 15. The payout, settled (when the worker had it, read back as the workspace sees it).
  for (let i = 0; i < 30 && settled.status !== 'settled'; i += 1) {
    await sleep(1000);
    const [now] = must('read payout', await owner.api.GET('/v1/enterprise/payouts', { params: { query: { milestone_id: milestone.id } } }));
    if (now) settled = now;
  }
  expectEqual('payout status', settled.status, 'settled');
  say(`settled    ${JSON.stringify(settled, null, 2)}`);
});
