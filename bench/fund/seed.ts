/**
 * The workspaces, keys and milestones of the fund-and-release bench, in the bench database.
 * `seedFund()` runs this file as a script (`tsx bench/fund/seed.ts <out.json> <workspaces>
 * <items>`, with DATABASE_URL, REDIS_URL and QUEUE_PREFIX as bench/run.sh sets them) and
 * reads back what it wrote. Everything is made through the service's own functions, as its
 * routes make it:
 *
 * - a platform admin (`bench_fund_staff`) who verifies payout instructions;
 * - `workspaces` owners `bench_fund_o0001`… each registering a sandbox workspace
 *   (`register`), and as many approvers `bench_fund_f0001`… invited as finance members and
 *   accepting (`inviteMember`, `acceptInvite`): evidence is submitted by the owner, and the
 *   submitter may not decide; the approver is also the member the release mail goes to;
 * - per workspace one counterparty (`createCounterparty`) and two payout instructions of it
 *   (`createInstruction`), verified and signed by the admin (`verifyInstruction`);
 * - per run a fresh read+write workspace key of the owner (`createKey`, the plaintext is
 *   shown once; the bench's earlier keys are revoked with `revokeKey`), so the key acts as
 *   the owner (rank above finance);
 * - `items` deals (topped up: deals left unused by earlier runs are reused), each with two
 *   milestones (1,000,000 and 2,000,000 rupiah, below the four-eyes threshold: one approval)
 *   made in one transaction per deal: `createDeal`, `activateDeal`, then the second
 *   milestone `fundMilestone` (sandbox), `submitEvidence` (owner) and `decide` approve
 *   (approver). A flow funds the first milestone (awaiting_funding) and releases the second
 *   (approved). Deals go round-robin over the workspaces, so consecutive flows lock
 *   different workspaces.
 *
 * The Redis counters of the API's limits (shared per-user, failed credentials, ent-fund,
 * ent-release) and of the floor's prefix are deleted. The keys go to a temporary file
 * (mode 0600).
 */
import { writeFile } from 'node:fs/promises';
import { BENCH_EMAIL_DOMAIN, benchDb, closeBenchDb, deleteRedisKeys, inPool, refuseUnlessBenchDatabase, upsertUsers } from '../lib/db.js';
import { isMain, runJsonScript } from '../lib/procs.js';

export interface FundWorkspace {
  id: string;
  /** The owner's read+write workspace key (`rpe_…`). */
  key: string;
  ownerId: string;
  approverId: string;
  counterpartyId: string;
  /** The two verified, signed payout instructions. */
  instructions: [string, string];
}

export interface FundItem {
  workspace: number;
  dealId: string;
  /** awaiting_funding: the flow funds it. */
  fundMid: string;
  /** approved: the flow releases it in two splits. */
  releaseMid: string;
  /** The released milestone's payout_amount (what the splits add up to). */
  payout: number;
}

export interface FundSeed {
  workspaces: FundWorkspace[];
  items: FundItem[];
  workspacesMade: number;
  dealsMade: number;
  seconds: number;
}

export const DEAL_TITLE = 'Bench fund and release';
export const MILESTONE_AMOUNTS = [1_000_000, 2_000_000] as const;
/** The second split of every release; the first takes the rest. */
export const SECOND_SPLIT = 500_000;

export async function seedFund(env: NodeJS.ProcessEnv, workspaces: number, items: number): Promise<FundSeed> {
  const seed = await runJsonScript<FundSeed>('bench/fund/seed.ts', [String(workspaces), String(items)], env, 1_800_000);
  if (seed.workspaces.length !== workspaces || seed.items.length < items) throw new Error(`seed wrote ${seed.workspaces.length} workspaces and ${seed.items.length} items, expected ${workspaces} and ${items}`);
  return seed;
}

/** Redis counters the bench clears: the API's limits on these routes, and the floor's. */
export const counterPatterns = (prefix: string, floorPrefix: string): string[] => [
  `${prefix}:rl:authenticated:*`,
  `${prefix}:authfail:*`,
  `${prefix}:rl:ent-fund*`,
  `${prefix}:rl:ent-release*`,
  `${floorPrefix}:*`,
];

/** The splits of an item's release: all but SECOND_SPLIT to the first instruction. */
export const splitsOf = (w: FundWorkspace, item: FundItem) => [
  { payout_instruction_id: w.instructions[0], amount: item.payout - SECOND_SPLIT },
  { payout_instruction_id: w.instructions[1], amount: SECOND_SPLIT },
];

// ---- The script ------------------------------------------------------------------------

const PARALLEL = 4;
const KEY_LABEL = 'bench fund';

async function main(): Promise<void> {
  const [out, workspacesArg, itemsArg] = process.argv.slice(2);
  if (!out) throw new Error('usage: tsx bench/fund/seed.ts <out.json> <workspaces> <items>');
  const count = Number(workspacesArg);
  const wanted = Number(itemsArg);
  if (!Number.isInteger(count) || count < 1 || count > 999) throw new Error('workspaces must be an integer in 1..999');
  if (!Number.isInteger(wanted) || wanted < 1 || wanted > 1_000_000) throw new Error('items must be an integer in 1..1000000');
  refuseUnlessBenchDatabase(/_bench$/, 'seed');
  const { config } = await import('../../shared/config.js');
  const { register } = await import('../../shared/enterprise/service.js');
  const { inviteMember, acceptInvite } = await import('../../shared/enterprise/members.js');
  const { createCounterparty } = await import('../../shared/enterprise/counterparties.js');
  const { createKey, revokeKey } = await import('../../shared/enterprise/keys.js');
  const { workspaceById } = await import('../../shared/enterprise/repo.js');
  const { createInstruction, verifyInstruction } = await import('../../shared/payouts/instructions.js');
  const deals = await import('../../shared/deals/service.js');
  const { decide } = await import('../../shared/approvals/service.js');
  const db = await benchDb();
  const started = Date.now();
  const now = new Date();
  const user = (username: string, fullName: string) => ({ email: `${username}@${BENCH_EMAIL_DOMAIN}`, username, full_name: fullName, kyc_status: 'verified', email_verified_at: now, created_at: now, updated_at: now });
  const [staffId] = await upsertUsers([user('bench_fund_staff', 'Bench fund staff')], { status: 'active', role: 'admin' });
  const pad = (i: number) => String(i + 1).padStart(4, '0');
  const owners = await upsertUsers(Array.from({ length: count }, (_, i) => user(`bench_fund_o${pad(i)}`, `Bench fund owner ${i + 1}`)), { status: 'active', role: 'user' });
  const approvers = await upsertUsers(Array.from({ length: count }, (_, i) => user(`bench_fund_f${pad(i)}`, `Bench fund approver ${i + 1}`)), { status: 'active', role: 'user' });

  let workspacesMade = 0;
  const made = await inPool(owners, PARALLEL, async (ownerId, i) => {
    const ownerName = `Bench fund owner ${i + 1}`;
    const approverId = approvers[i]!;
    const approverName = `Bench fund approver ${i + 1}`;
    const owned = await db('workspace_members').where({ user_id: ownerId, role: 'owner', status: 'active' }).orderBy('created_at').first<{ workspace_id: string; id: string } | undefined>('workspace_id', 'id');
    let workspaceId: string;
    let memberId: string;
    if (owned) {
      workspaceId = owned.workspace_id;
      memberId = owned.id;
    } else {
      const reg = await register(
        { userId: ownerId, userName: ownerName },
        { legal_name: `PT Bench Fund ${i + 1}`, display_name: `Bench Fund ${i + 1}`, entity_type: 'pt', nib: '1234567890123', country_code: 'ID' },
        { ip: '127.0.0.1' },
      );
      workspaceId = reg.workspace.id;
      memberId = reg.membership.id;
      workspacesMade++;
    }
    const owner = { workspaceId, memberId, userId: ownerId, userName: ownerName, role: 'owner' as const };
    const approverMember = await db('workspace_members').where({ workspace_id: workspaceId, user_id: approverId }).first<{ id: string; status: string } | undefined>('id', 'status');
    if (!approverMember) {
      await inviteMember(undefined, owner, { email: `bench_fund_f${pad(i)}@${BENCH_EMAIL_DOMAIN}`, role: 'finance' });
      const invited = await db('workspace_members').where({ workspace_id: workspaceId, user_id: approverId, status: 'invited' }).first<{ id: string }>('id');
      await acceptInvite(undefined, { userId: approverId, userName: approverName }, invited.id);
    } else if (approverMember.status === 'invited') {
      await acceptInvite(undefined, { userId: approverId, userName: approverName }, approverMember.id);
    }
    const approverRow = await db('workspace_members').where({ workspace_id: workspaceId, user_id: approverId, status: 'active' }).first<{ id: string }>('id');
    const approver = { workspaceId, memberId: approverRow.id, userId: approverId, userName: approverName, role: 'finance' as const };
    let cp = await db('counterparties').where({ workspace_id: workspaceId }).orderBy('created_at').first<{ id: string } | undefined>('id');
    cp ??= await createCounterparty(undefined, owner, { name: 'PT Bench Pemasok', country_code: 'ID', relationship: 'seller' });
    const instructions = await db('payout_instructions')
      .where({ workspace_id: workspaceId, counterparty_id: cp.id, status: 'verified' })
      .whereNull('deleted_at')
      .orderBy('created_at')
      .limit(2)
      .pluck<string[]>('id');
    for (let n = instructions.length; n < 2; n++) {
      const made = await createInstruction(undefined, owner, {
        label: `Rekening ${n + 1}`,
        counterparty_id: cp.id,
        bank_name: 'BCA',
        account_holder: 'PT Bench Pemasok',
        account_number: `${8_000_000_000 + i * 10 + n}`,
      });
      await verifyInstruction(undefined, { actorId: staffId!, ip: '127.0.0.1', note: 'bench' }, made.id, made.destination_version);
      instructions.push(made.id);
    }
    const old = await db('workspace_api_keys').where({ workspace_id: workspaceId, label: KEY_LABEL }).whereNull('revoked_at').pluck<string[]>('id');
    for (const id of old) await revokeKey(undefined, owner, id);
    const { plaintext } = await createKey(owner, { label: KEY_LABEL, scopes: ['read', 'write'] });
    const ws: FundWorkspace = { id: workspaceId, key: plaintext, ownerId, approverId, counterpartyId: cp.id, instructions: [instructions[0]!, instructions[1]!] };
    return { ws, owner, approver };
  });

  // Unused items of earlier runs: the first milestone awaiting funding, the second approved.
  const ids = made.map((m) => m.ws.id);
  const unused = await db('deals as d')
    .join('deal_milestones as a', function () {
      this.on('a.deal_id', '=', 'd.id').andOn('a.sequence_no', '=', db.raw('1'));
    })
    .join('deal_milestones as b', function () {
      this.on('b.deal_id', '=', 'd.id').andOn('b.sequence_no', '=', db.raw('2'));
    })
    .whereIn('d.workspace_id', ids)
    .where({ 'd.title': DEAL_TITLE, 'a.status': 'awaiting_funding', 'b.status': 'approved' })
    .select<{ workspace_id: string; deal_id: string; fund_mid: string; release_mid: string; payout: number }[]>('d.workspace_id', 'd.id as deal_id', 'a.id as fund_mid', 'b.id as release_mid', 'b.payout_amount as payout');
  const byWorkspace = new Map<string, FundItem[]>(ids.map((id) => [id, []]));
  for (const r of unused) byWorkspace.get(r.workspace_id)!.push({ workspace: ids.indexOf(r.workspace_id), dealId: r.deal_id, fundMid: r.fund_mid, releaseMid: r.release_mid, payout: Number(r.payout) });

  // Top up, round-robin over the workspaces, one transaction per deal.
  const missing = Math.max(0, wanted - unused.length);
  const plan = Array.from({ length: missing }, (_, n) => (n + unused.length) % count);
  let dealsMade = 0;
  await inPool(plan, PARALLEL, async (w) => {
    const { ws, owner, approver } = made[w]!;
    const item = await db.transaction(async (trx) => {
      const workspace = (await workspaceById(trx, ws.id))!;
      const created = await deals.createDeal(trx, owner, workspace, {
        title: DEAL_TITLE,
        counterparty_id: ws.counterpartyId,
        currency: 'IDR',
        milestones: MILESTONE_AMOUNTS.map((amount, n) => ({ title: `Tahap ${n + 1}`, amount })),
      });
      const dealId = created.deal.id;
      const active = await deals.activateDeal(trx, owner, workspace, dealId);
      const [first, second] = active.milestones;
      await deals.fundMilestone(trx, approver, workspace, dealId, second!.id, { method: 'sandbox' });
      await deals.submitEvidence(trx, owner, workspace, dealId, second!.id, { summary: 'Delivered and inspected (bench)' });
      await decide(trx, approver, second!.id, { decision: 'approve' });
      return { workspace: w, dealId, fundMid: first!.id, releaseMid: second!.id, payout: second!.payout_amount };
    });
    byWorkspace.get(ws.id)!.push(item);
    dealsMade++;
    if (dealsMade % 1000 === 0) console.log(`seed-fund: ${dealsMade} of ${missing} deals made (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  });

  // Interleaved: item n is of workspace n mod count while every workspace has some left.
  const queues = ids.map((id) => byWorkspace.get(id)!);
  const items: FundItem[] = [];
  for (let round = 0; items.length < unused.length + dealsMade; round++) {
    for (const q of queues) if (q[round]) items.push(q[round]!);
  }
  const cleared = await deleteRedisKeys(counterPatterns(config.queuePrefix, `${config.queuePrefix}-floor`));
  const seconds = (Date.now() - started) / 1000;
  const seed: FundSeed = { workspaces: made.map((m) => m.ws), items, workspacesMade, dealsMade, seconds };
  await writeFile(out, JSON.stringify(seed), { mode: 0o600 });
  console.log(
    `seed-fund: ${count} sandbox workspaces (${workspacesMade} made now), fresh keys, ${items.length} unused deals ` +
      `(${dealsMade} made now), ${cleared} Redis counters cleared (${seconds.toFixed(1)} s)`,
  );
}

if (isMain(import.meta.url)) {
  try {
    await main();
  } catch (err) {
    console.error(`seed-fund failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  } finally {
    await closeBenchDb();
  }
}
