/**
 * Tamper evidence (issue 47, decision 0028): journal lines chained per ledger account, staff
 * audit rows per actor; `checkLedger` (npm run ledger:check) verifies every chain and names
 * the first row that was altered, inserted or removed; the daily job records the chains'
 * heads in the audit, later checks hold the rows to them, and staff are e-mailed when a
 * check fails. Rows are changed here directly in Postgres, below every trigger
 * (session_replication_role = replica), as someone with write access to the database would.
 */
import { expect } from 'chai';
import type { Knex } from 'knex';
import { clock } from '../../../shared/clock.js';
import { decryptSecret } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import { accountSpec, checkLedger, post, postMany, type LedgerViolation } from '../../../shared/ledger/index.js';
import { checkChains, link, CHECKPOINT_ACTION } from '../../../shared/ledger/chains.js';
import { lastLedgerCheck } from '../../../shared/ledger/check-record.js';
import { STAFF_TEMPLATE, runDailyLedgerCheck } from '../../../shared/ledger/checkpoint.js';
import { JOBS, getQueue } from '../../../shared/queues.js';
import { recordStaffAction } from '../../../shared/staff/audit.js';
import { LEDGER_CHECK_PATTERN, MAINTENANCE_SCHEDULES, buildRegistry } from '../../../workers/registry.js';
import { createUser } from '../../factories/users.js';
import { runJobs } from '../../helpers/jobs.js';
import { fundUser } from '../../helpers/platform-factories.js';

const JOB = 'maintenance.check-ledger';

interface LineRow {
  id: string;
  account_id: string;
  amount: string;
  chain_seq: string;
  chain_hash: Buffer;
}

const linesOf = (accountId: string, trx: Knex | Knex.Transaction = db) =>
  trx('journal_lines').where({ account_id: accountId }).orderBy('chain_seq').select<LineRow[]>('id', 'account_id', 'amount', 'chain_seq', 'chain_hash');
const accountId = async (code: string): Promise<string> => String((await db('ledger_accounts').where({ code }).first<{ id: string }>('id')).id);
const chainRules = (vs: readonly LedgerViolation[]) => vs.filter((v) => ['ledger-chain', 'audit-chain', 'chain-anchor'].includes(v.rule));

/**
 * Runs `tamper` below every trigger, then the chain check, in one transaction that is rolled
 * back: the database is as before, the check's findings are returned.
 */
async function afterTampering(tamper: (trx: Knex.Transaction) => Promise<void>): Promise<LedgerViolation[]> {
  let found: LedgerViolation[] | undefined;
  await db
    .transaction(async (trx) => {
      await trx.raw('SET LOCAL session_replication_role = replica');
      await tamper(trx);
      found = await checkChains(trx);
      throw new Error('roll back');
    })
    .catch((err: Error) => {
      if (found === undefined) throw err;
    });
  return found!;
}

describe('tamper evidence: hash chains over the ledger and the staff audit (decision 0028)', () => {
  let userId: string;
  let staffId: string;
  let userAccount: string;
  const adjustments = accountSpec({ system: 'adjustments' }).code;

  beforeEach(async () => {
    userId = (await createUser()).user.id;
    staffId = (await createUser({ role: 'admin', fullName: 'Staff Chain' })).user.id;
    await fundUser(userId, 100_000);
    for (const amount of [1_000, 2_000, 3_000]) {
      await post(db, { kind: 'test.spend', refType: 'test', refId: `spend-${amount}`, memo: `spend ${amount}`, lines: [{ account: { userId }, amount: -amount }, { account: { system: 'adjustments' }, amount }] });
    }
    userAccount = await accountId(accountSpec({ userId }).code);
    await db.transaction(async (trx) => {
      for (const n of [1, 2, 3]) await recordStaffAction(trx, { actorId: staffId, action: 'user.suspend', targetType: 'user', targetId: userId, note: `move ${n}`, details: { n, text: 'é "quoted" \\ ' }, ip: '127.0.0.1' });
    });
  });

  afterEach(() => clock.reset());

  it('every line is linked in its account chain in posting order, the head is the last link, and the check finds nothing', async () => {
    const lines = await linesOf(userAccount);
    expect(lines.map((l) => Number(l.chain_seq))).to.deep.equal([1, 2, 3, 4]);
    expect(lines.map((l) => Number(l.amount))).to.deep.equal([100_000, -1_000, -2_000, -3_000]);
    const head = await db('ledger_accounts').where({ id: userAccount }).first<{ chain_seq: string; chain_hash: Buffer }>('chain_seq', 'chain_hash');
    expect(Number(head.chain_seq)).to.equal(4);
    expect(head.chain_hash.equals(lines[3]!.chain_hash)).to.equal(true);
    const audit = await db('staff_audit').where({ actor_id: staffId }).orderBy('chain_seq').select<{ chain_seq: string }[]>('chain_seq');
    expect(audit.map((a) => Number(a.chain_seq))).to.deep.equal([1, 2, 3]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('the Node check and the database agree on the bytes: the first link is sha256 of the canonical text', async () => {
    const [first] = await linesOf(userAccount);
    const entry = await db('journal_lines as l').join('journal_entries as e', 'e.id', 'l.entry_id').where('l.id', first!.id).first<{ entry_id: string; kind: string; at: string }>(
      db.raw('l.entry_id::text AS entry_id'),
      'e.kind',
      db.raw(`to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at`),
    );
    // json_build_array(...)::text: text values, ", " between them.
    const values = ['ledger-line/1', String(first!.id), entry.entry_id, String(userAccount), '100000', '1', entry.kind, null, null, null, null, entry.at];
    const text = `[${values.map((v) => JSON.stringify(v)).join(', ')}]`;
    expect(link(null, Buffer.from(text, 'utf8')).equals(first!.chain_hash), text).to.equal(true);
  });

  // Declared IMMUTABLE over STABLE bodies, they ran through the SQL-function executor for every
  // line posted (about 9 µs a line; migration 20261213000100): the planner must inline them.
  it('the canonical-bytes functions are inlined into the expressions that call them', async () => {
    const calls = {
      ledger_line_canon: `ledger_line_canon(1, 2, 3, 4, 5, 'k', 'r', 'i', 'p', 'm', now())`,
      staff_audit_canon: `staff_audit_canon(1, NULL::uuid, 'a', 't', 'i', 'n', '{}'::jsonb, 'ip', now(), 1)`,
      chain_time: `chain_time(now())`,
    };
    for (const [name, call] of Object.entries(calls)) {
      const { rows } = await db.raw<{ rows: { 'QUERY PLAN': string }[] }>(`EXPLAIN (VERBOSE) SELECT ${call}`);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan, plan).to.not.include(`${name}(`);
      expect(plan, plan).to.include('to_char(');
    }
  });

  describe('a line or an entry changed in place', () => {
    it('an amount edited: names that line as altered', async () => {
      const [, second] = await linesOf(userAccount);
      const found = await afterTampering(async (trx) => {
        await trx('journal_lines').where({ id: second!.id }).update({ amount: -10 });
      });
      expect(found).to.deep.equal([{ rule: 'ledger-chain', detail: `journal line ${second!.id} (position 2 of the chain of ledger account ${accountSpec({ userId }).code}) altered: its content no longer matches its hash` }]);
    });

    it("an entry's memo edited: names the entry's line in each account it touched", async () => {
      const [, second] = await linesOf(userAccount);
      const entryId = (await db('journal_lines').where({ id: second!.id }).first<{ entry_id: string }>('entry_id')).entry_id;
      const found = await afterTampering(async (trx) => {
        await trx('journal_entries').where({ id: entryId }).update({ memo: 'nothing to see' });
      });
      const lineIds = (await db('journal_lines').where({ entry_id: entryId }).orderBy('id').pluck('id')).map(String);
      expect(found.map((f) => f.rule)).to.deep.equal(['ledger-chain', 'ledger-chain']);
      for (const id of lineIds) expect(found.some((f) => f.detail.startsWith(`journal line ${id} `) && f.detail.endsWith('altered: its content no longer matches its hash'))).to.equal(true);
    });

    it('a hash recomputed after the edit still breaks the next link (the first break named is that next line)', async () => {
      const [first, second, third] = await linesOf(userAccount);
      const found = await afterTampering(async (trx) => {
        await trx('journal_lines').where({ id: second!.id }).update({ chain_hash: link(first!.chain_hash, Buffer.from('forged')) });
      });
      expect(found).to.have.length(1);
      expect(found[0]!.detail).to.match(new RegExp(`^journal line (${second!.id}|${third!.id}) `));
    });
  });

  describe('lines removed', () => {
    it('a line from the middle of a chain: names the missing position and its neighbours', async () => {
      const [first, second, third] = await linesOf(userAccount);
      const found = await afterTampering(async (trx) => {
        await trx('journal_lines').where({ id: second!.id }).delete();
      });
      expect(found).to.deep.include({
        rule: 'ledger-chain',
        detail: `position 2 of the chain of ledger account ${accountSpec({ userId }).code} removed (missing between journal line ${first!.id} and journal line ${third!.id})`,
      });
    });

    it('the last line of a chain: the head still counts it', async () => {
      const lines = await linesOf(userAccount);
      const found = await afterTampering(async (trx) => {
        await trx('journal_lines').where({ id: lines[3]!.id }).delete();
      });
      expect(found).to.deep.include({
        rule: 'ledger-chain',
        detail: `position 4 of the chain of ledger account ${accountSpec({ userId }).code} removed (the chain ends at journal line ${lines[2]!.id}, its head is at 4)`,
      });
    });

    it('a whole entry with its lines: each account chain it touched reports the gap', async () => {
      const [, second] = await linesOf(userAccount);
      const entryId = (await db('journal_lines').where({ id: second!.id }).first<{ entry_id: string }>('entry_id')).entry_id;
      const found = await afterTampering(async (trx) => {
        await trx('journal_lines').where({ entry_id: entryId }).delete();
        await trx('journal_entries').where({ id: entryId }).delete();
      });
      expect(found.filter((f) => / removed \(missing between /.test(f.detail)).map((f) => f.detail.split(' removed')[0])).to.have.members([
        `position 2 of the chain of ledger account ${accountSpec({ userId }).code}`,
        `position 2 of the chain of ledger account ${adjustments}`,
      ]);
    });
  });

  describe('lines inserted', () => {
    it('a balanced entry inserted below the triggers: its lines have no link', async () => {
      const adjustmentsId = await accountId(adjustments);
      const found = await afterTampering(async (trx) => {
        const [e] = await trx('journal_entries').insert({ kind: 'test.forged', created_at: clock.now() }).returning<{ id: string }[]>('id');
        await trx('journal_lines').insert([
          { entry_id: e!.id, account_id: userAccount, amount: 5_000 },
          { entry_id: e!.id, account_id: adjustmentsId, amount: -5_000 },
        ]);
      });
      expect(found.map((f) => f.detail)).to.have.length(2);
      for (const f of found) expect(f.detail).to.match(/^journal line \d+ \(account #\d+\) has no link in its account's chain: inserted$/);
    });

    it('a line given the next position and a well-formed hash, head left alone: past the head, inserted', async () => {
      const lines = await linesOf(userAccount);
      const adjustmentsId = await accountId(adjustments);
      const found = await afterTampering(async (trx) => {
        const [e] = await trx('journal_entries').insert({ kind: 'test.forged', created_at: clock.now() }).returning<{ id: string }[]>('id');
        const [l] = await trx('journal_lines')
          .insert({ entry_id: e!.id, account_id: userAccount, amount: 5_000, chain_seq: 5, chain_hash: link(lines[3]!.chain_hash, Buffer.from('x')) })
          .returning<{ id: string }[]>('id');
        await trx('journal_lines').insert({ entry_id: e!.id, account_id: adjustmentsId, amount: -5_000, chain_seq: 99, chain_hash: Buffer.alloc(32) });
        expect(l).to.not.equal(undefined);
      });
      expect(found.find((f) => f.detail.includes(`of the chain of ledger account ${accountSpec({ userId }).code}`))!.detail).to.match(
        /^journal line \d+ is at position 5 of the chain of ledger account .+, past its recorded head 4: inserted$/,
      );
      expect(found.find((f) => f.detail.includes(`of the chain of ledger account ${adjustments}`))!.detail).to.match(/past its recorded head 4: inserted$/);
    });

    it('a line slipped into a chain by renumbering the rows after it: the first renumbered row no longer links', async () => {
      const lines = await linesOf(userAccount);
      const found = await afterTampering(async (trx) => {
        for (const l of [...lines].reverse().slice(0, 2)) await trx('journal_lines').where({ id: l.id }).update({ chain_seq: Number(l.chain_seq) + 1 });
        const [e] = await trx('journal_entries').insert({ kind: 'test.forged', created_at: clock.now() }).returning<{ id: string }[]>('id');
        await trx('journal_lines').insert({ entry_id: e!.id, account_id: userAccount, amount: 1, chain_seq: 3, chain_hash: link(lines[1]!.chain_hash, Buffer.from('x')) });
      });
      expect(found.find((f) => f.detail.includes(accountSpec({ userId }).code))!.detail).to.match(/^journal line \d+ \(position 3 of .+\) altered: its content no longer matches its hash$/);
    });
  });

  describe('the staff audit', () => {
    it('a note edited, a row deleted, a row inserted: each named', async () => {
      const rows = await db('staff_audit').where({ actor_id: staffId }).orderBy('chain_seq').select<{ id: string }[]>('id');
      const chain = `the staff audit chain of actor ${staffId}`;
      expect(await afterTampering(async (trx) => void (await trx('staff_audit').where({ id: rows[0]!.id }).update({ note: 'a gentler reason' })))).to.deep.equal([
        { rule: 'audit-chain', detail: `staff audit row ${rows[0]!.id} (position 1 of ${chain}) altered: its content no longer matches its hash` },
      ]);
      expect(await afterTampering(async (trx) => void (await trx('staff_audit').where({ id: rows[1]!.id }).delete()))).to.deep.equal([
        { rule: 'audit-chain', detail: `position 2 of ${chain} removed (missing between staff audit row ${rows[0]!.id} and staff audit row ${rows[2]!.id})` },
      ]);
      const inserted = await afterTampering(async (trx) => {
        await trx('staff_audit').insert({ actor_id: staffId, action: 'user.reactivate', target_type: 'user', target_id: userId, details: '{}', created_at: clock.now() });
      });
      expect(inserted).to.have.length(1);
      expect(inserted[0]!.detail).to.match(/^staff audit row \d+ has no link in its actor's chain: inserted$/);
    });

    it("only the service's own actions (system.*) may have no actor: a staff action without one is refused", async () => {
      const err = await db.transaction((trx) => recordStaffAction(trx, { actorId: null, action: 'user.suspend', targetType: 'user', targetId: userId })).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as { constraint?: string } | undefined)?.constraint).to.equal('staff_audit_actor_or_system');
      await db.transaction((trx) => recordStaffAction(trx, { actorId: null, action: 'system.test', targetType: 'ledger', targetId: 'x' }));
      const row = await db('staff_audit').where({ action: 'system.test' }).first<{ chain_seq: string }>('chain_seq');
      expect(Number(row.chain_seq)).to.equal(1);
      expect(chainRules(await checkLedger(db))).to.deep.equal([]);
    });

    it("each actor has a chain of its own: another staff member's actions start at position 1", async () => {
      const other = (await createUser({ role: 'admin' })).user.id;
      await db.transaction((trx) => recordStaffAction(trx, { actorId: other, action: 'user.suspend', targetType: 'user', targetId: userId }));
      const row = await db('staff_audit').where({ actor_id: other }).first<{ chain_seq: string }>('chain_seq');
      expect(Number(row.chain_seq)).to.equal(1);
      expect(chainRules(await checkLedger(db))).to.deep.equal([]);
    });
  });

  it('race: 24 postings on the same accounts and 12 staff actions at once all link, each position once, and the chains hold', async () => {
    await Promise.all([
      ...Array.from({ length: 24 }, (_, k) =>
        db.transaction((trx) => post(trx, { kind: 'test.race', refType: 'test', refId: `race-${k}`, lines: [{ account: { userId }, amount: -10 }, { account: { system: 'adjustments' }, amount: 10 }] })),
      ),
      ...Array.from({ length: 12 }, (_, k) => db.transaction((trx) => recordStaffAction(trx, { actorId: staffId, action: 'user.suspend', targetType: 'user', targetId: userId, note: `race ${k}` }))),
    ]);
    expect((await linesOf(userAccount)).map((l) => Number(l.chain_seq))).to.deep.equal(Array.from({ length: 28 }, (_, k) => k + 1));
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('several postings on one account in one statement (postMany) link one after the other; the head moves once to the last', async () => {
    const adjustmentsId = await accountId(adjustments);
    const before = Number((await db('ledger_accounts').where({ id: adjustmentsId }).first<{ chain_seq: string }>('chain_seq')).chain_seq);
    await postMany(db, [1, 2, 3].map((k) => ({ kind: 'test.batch', refType: 'test', refId: `batch-${k}`, lines: [{ account: { userId }, amount: -k }, { account: { system: 'adjustments' }, amount: k }] })));
    expect((await linesOf(userAccount)).map((l) => Number(l.chain_seq))).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
    const lines = await linesOf(adjustmentsId);
    expect(lines.map((l) => Number(l.chain_seq))).to.deep.equal(Array.from({ length: before + 3 }, (_, k) => k + 1));
    const head = await db('ledger_accounts').where({ id: adjustmentsId }).first<{ chain_seq: string; chain_hash: Buffer }>('chain_seq', 'chain_hash');
    expect(Number(head.chain_seq)).to.equal(before + 3);
    expect(head.chain_hash.equals(lines[lines.length - 1]!.chain_hash)).to.equal(true);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('an account whose lines net to zero in one statement still moves its head; its balance does not move', async () => {
    await postMany(db, [
      { kind: 'test.there', lines: [{ account: { userId }, amount: -500 }, { account: { system: 'adjustments' }, amount: 500 }] },
      { kind: 'test.back', lines: [{ account: { userId }, amount: 500 }, { account: { system: 'adjustments' }, amount: -500 }] },
    ]);
    const head = await db('ledger_accounts').where({ id: userAccount }).first<{ chain_seq: string; balance: string }>('chain_seq', 'balance');
    expect([Number(head.chain_seq), Number(head.balance)]).to.deep.equal([6, 94_000]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  describe('the daily check (job maintenance.check-ledger)', () => {
    const staffMails = () => db('outbound_emails').where({ template: STAFF_TEMPLATE }).orderBy('user_id').select<{ to_address: string; subject: string; body_sealed: string }[]>('to_address', 'subject', 'body_sealed');

    it('is a timers job with a processor and a daily schedule after the reconciliation', () => {
      expect(JOBS[JOB]).to.equal('timers');
      expect(buildRegistry().has(JOB)).to.equal(true);
      expect(MAINTENANCE_SCHEDULES.find((s) => s.job === JOB)).to.deep.equal({ id: 'check-ledger', job: JOB, pattern: LEDGER_CHECK_PATTERN });
      expect(LEDGER_CHECK_PATTERN).to.equal('0 20 * * *');
    });

    it('sound books: records the heads in the audit as the system, once a day, e-mails nobody, and the result reaches /metrics', async () => {
      clock.set(new Date('2026-12-12T20:00:00.000Z'));
      await getQueue('timers').add(JOB, {}, { jobId: `check-${Date.now()}` });
      const ran = (await runJobs(['timers'])).filter((j) => j.name === JOB);
      expect(ran).to.have.length(1);
      const result = ran[0]!.result as { ok: boolean; checkpoint_id: number; ledger_root: string };
      expect(result.ok).to.equal(true);
      const cp = await db('staff_audit').where({ action: CHECKPOINT_ACTION }).first<{ id: string; actor_id: string | null; target_type: string; target_id: string; details: { ledger: { chains: number; heads: Record<string, [number, string]> }; audit: { heads: Record<string, [number, string]> } } }>();
      expect(Number(cp.id)).to.equal(result.checkpoint_id);
      expect(cp.actor_id).to.equal(null);
      expect([cp.target_type, cp.target_id]).to.deep.equal(['ledger', '2026-12-12']);
      const lines = await linesOf(userAccount);
      expect(cp.details.ledger.heads[userAccount]).to.deep.equal([4, lines[3]!.chain_hash.toString('hex')]);
      expect(cp.details.audit.heads[staffId]![0]).to.equal(3);
      expect(result.ledger_root).to.match(/^[0-9a-f]{64}$/);
      expect(await staffMails()).to.deep.equal([]);
      expect((await lastLedgerCheck())?.ok).to.equal(true);
      // The same day again: nothing more recorded.
      expect((await runDailyLedgerCheck()).checkpoint_id).to.equal(null);
      expect(await db('staff_audit').where({ action: CHECKPOINT_ACTION }).count<{ n: number }[]>({ n: '*' })).to.deep.equal([{ n: 1 }]);
      // The next day records only the chains that moved since.
      clock.set(new Date('2026-12-13T20:00:00.000Z'));
      await post(db, { kind: 'test.spend', lines: [{ account: { userId }, amount: -1 }, { account: { system: 'adjustments' }, amount: 1 }] });
      const next = await runDailyLedgerCheck();
      const second = await db('staff_audit').where({ id: next.checkpoint_id! }).first<{ details: { ledger: { heads: Record<string, [number, string]> } } }>('details');
      expect(Object.keys(second.details.ledger.heads).sort()).to.deep.equal([userAccount, await accountId(adjustments)].sort());
      expect(second.details.ledger.heads[userAccount]![0]).to.equal(5);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a chain rewritten after a checkpoint, hashes and head and all: only the recorded head catches it', async () => {
      clock.set(new Date('2026-12-12T20:00:00.000Z'));
      await runDailyLedgerCheck();
      const lines = await linesOf(userAccount);
      const found = await afterTampering(async (trx) => {
        // A careful forger: changes the amount of line 3 and 4 both (so the balance holds) and relinks from there.
        const entry = (id: string) => trx('journal_lines as l').join('journal_entries as e', 'e.id', 'l.entry_id').where('l.id', id).first<{ entry_id: string; kind: string; ref_type: string | null; ref_id: string | null; posting_key: string | null; memo: string | null; at: string }>(
          trx.raw('l.entry_id::text AS entry_id'), 'e.kind', 'e.ref_type', 'e.ref_id', 'e.posting_key', 'e.memo', trx.raw(`to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at`),
        );
        let prev = lines[1]!.chain_hash;
        for (const [k, amount] of [[2, -2_500], [3, -2_500]] as const) {
          const l = lines[k]!;
          const e = await entry(l.id);
          const text = `[${['ledger-line/1', String(l.id), e.entry_id, String(userAccount), String(amount), String(k + 1), e.kind, e.ref_type, e.ref_id, e.posting_key, e.memo, e.at].map((v) => JSON.stringify(v)).join(', ')}]`;
          prev = link(prev, Buffer.from(text, 'utf8'));
          await trx('journal_lines').where({ id: l.id }).update({ amount, chain_hash: prev });
        }
        await trx('ledger_accounts').where({ id: userAccount }).update({ chain_hash: prev });
      });
      expect(found.map((f) => f.rule)).to.deep.equal(['chain-anchor']);
      expect(found[0]!.detail).to.match(new RegExp(`recorded position 4 of ledger account #${userAccount} as [0-9a-f]{16}…, the row there now hashes to [0-9a-f]{16}…: rewritten$`));
    });

    it('a failed check: every active admin is e-mailed the violations, the checkpoint says so, the record reads not ok', async () => {
      clock.set(new Date('2026-12-12T20:00:00.000Z'));
      const [, second] = await linesOf(userAccount);
      await db.transaction(async (trx) => {
        await trx.raw('SET LOCAL session_replication_role = replica');
        await trx('journal_entries').where({ id: trx('journal_lines').where({ id: second!.id }).select('entry_id') }).update({ memo: 'rewritten' });
      });
      await createUser({ role: 'admin', status: 'suspended' });
      const result = await runDailyLedgerCheck();
      expect(result.ok).to.equal(false);
      expect(result.staff_alerted).to.equal(1);
      const mails = await staffMails();
      expect(mails).to.have.length(1);
      expect(mails[0]!.subject).to.equal(`Ledger check 2026-12-12: ${result.violations} violation(s)`);
      expect(decryptSecret(mails[0]!.body_sealed)).to.include(`[ledger-chain] journal line ${second!.id} (position 2 of the chain of ledger account ${accountSpec({ userId }).code}) altered`);
      const cp = await db('staff_audit').where({ id: result.checkpoint_id! }).first<{ note: string; details: { ok: boolean } }>('note', 'details');
      expect(cp.details.ok).to.equal(false);
      expect(cp.note).to.equal(`ledger check found ${result.violations} violation(s)`);
      expect((await lastLedgerCheck())?.ok).to.equal(false);
      // A second run that day e-mails nobody again.
      await runDailyLedgerCheck();
      expect(await staffMails()).to.have.length(1);
      // Leave the books sound for the suite's final ledger:check.
      await db.transaction(async (trx) => {
        await trx.raw('SET LOCAL session_replication_role = replica');
        await trx('journal_entries').where({ id: trx('journal_lines').where({ id: second!.id }).select('entry_id') }).update({ memo: 'spend 1000' });
      });
      expect(chainRules(await checkLedger(db))).to.deep.equal([]);
    });
  });
});
