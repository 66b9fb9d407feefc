/**
 * Verifies the hash chains of the journal lines (one per ledger account) and of the staff
 * audit (one per actor), and the heads recorded by the daily checkpoints (issue 47;
 * decision 0028; the chains are written by the triggers of migration 20261212000210).
 *
 * Each row's hash is recomputed here from its columns, in Node, with the canonical bytes
 * written out below: the check does not trust the database's own functions. Per chain it
 * names the first row that breaks it and stops there (what follows a break cannot be judged):
 * - a row at a position already taken, or past the chain's recorded head: inserted;
 * - a position missing (between two rows, or between the last row and the head): removed;
 * - a row whose hash is not sha256(previous hash ‖ its canonical bytes): altered (its own
 *   columns, its entry's, or its hash);
 * - a row without a link (inserted with the triggers off): inserted.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db.js';
import type { LedgerViolation } from './check.js';

/** How many rows one read of a chain walk takes. */
const PAGE = 5_000;
/** How many of the latest checkpoints' heads are compared with the rows they name. */
export const ANCHORED_CHECKPOINTS = 31;
export const CHECKPOINT_ACTION = 'system.chain_heads_recorded';

/** A time as the chains write it: UTC with microseconds (migration 20261212000100 chain_time). */
const TIME = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** json_build_array(...)::text of text values: `["a", null, "b"]`. */
function canon(values: readonly (string | null)[]): Buffer {
  return Buffer.from(`[${values.map((v) => JSON.stringify(v)).join(', ')}]`, 'utf8');
}

export function link(prev: Buffer | null, bytes: Buffer): Buffer {
  return createHash('sha256').update(prev ?? Buffer.alloc(0)).update(bytes).digest();
}

interface LineRow {
  id: string;
  entry_id: string;
  account_id: string;
  amount: string;
  seq: string;
  hash: Buffer;
  kind: string | null;
  ref_type: string | null;
  ref_id: string | null;
  posting_key: string | null;
  memo: string | null;
  at: string | null;
}

interface AuditRow {
  id: string;
  chain: string;
  actor_id: string | null;
  action: string;
  target_type: string;
  target_id: string;
  note: string | null;
  details: string;
  ip: string | null;
  at: string;
  seq: string;
  hash: Buffer;
}

interface Head {
  seq: number;
  hash: Buffer | null;
}

const lineBytes = (r: LineRow): Buffer =>
  canon(['ledger-line/1', r.id, r.entry_id, r.account_id, r.amount, r.seq, r.kind, r.ref_type, r.ref_id, r.posting_key, r.memo, r.at]);

const auditBytes = (r: AuditRow): Buffer =>
  canon(['staff-audit/1', r.id, r.actor_id, r.action, r.target_type, r.target_id, r.note, r.details, r.ip, r.at, r.seq]);

async function rows<T>(trx: Db, sql: string, bindings: readonly (string | number)[] = []): Promise<T[]> {
  return (await trx.raw<{ rows: T[] }>(sql, bindings)).rows;
}

/** One chain walked row by row: the first break, if any. */
class ChainWalk {
  private expected = 1;
  private prev: Buffer | null = null;
  private lastId: string | null = null;
  broken: string | null = null;

  constructor(
    private readonly name: string,
    private readonly head: Head,
  ) {}

  /** `seq`, `hash` and `id` of the next row in chain order; `bytes` its canonical bytes. */
  step(id: string, seq: number, hash: Buffer, bytes: () => Buffer, what: string): void {
    if (this.broken !== null) return;
    if (seq < this.expected) {
      this.broken = `${what} ${id} takes position ${seq} of ${this.name}, already held by an earlier row: inserted`;
    } else if (seq > this.head.seq) {
      this.broken = `${what} ${id} is at position ${seq} of ${this.name}, past its recorded head ${this.head.seq}: inserted`;
    } else if (seq > this.expected) {
      const gap = seq - 1 === this.expected ? `position ${this.expected}` : `positions ${this.expected} to ${seq - 1}`;
      this.broken = `${gap} of ${this.name} removed (missing between ${this.lastId === null ? 'its start' : `${what} ${this.lastId}`} and ${what} ${id})`;
    } else if (!link(this.prev, bytes()).equals(hash)) {
      this.broken = `${what} ${id} (position ${seq} of ${this.name}) altered: its content no longer matches its hash`;
    } else {
      this.prev = hash;
      this.lastId = id;
      this.expected = seq + 1;
    }
  }

  /** After the chain's last row: the head must be that row. */
  end(what: string): string | null {
    if (this.broken !== null) return this.broken;
    const last = this.expected - 1;
    if (last < this.head.seq) {
      const gap = last + 1 === this.head.seq ? `position ${this.head.seq}` : `positions ${last + 1} to ${this.head.seq}`;
      return `${gap} of ${this.name} removed (the chain ends at ${this.lastId === null ? 'its start' : `${what} ${this.lastId}`}, its head is at ${this.head.seq})`;
    }
    if (last > 0 && (this.head.hash === null || !this.head.hash.equals(this.prev!))) return `the head of ${this.name} does not match its last row (${what} ${this.lastId}): altered`;
    return null;
  }
}

/** What a kind of chain is made of: its heads, its rows in chain order, its words. */
interface ChainKind<R extends { id: string; chain: string; seq: string; hash: Buffer }> {
  rule: 'ledger-chain' | 'audit-chain';
  /** A row's name in the findings ("journal line"). */
  what: string;
  /** Every head: `chain`, `seq`, `hash` and a display `name` (or null). */
  headsSql: string;
  /** Rows without a link (inserted with the triggers off), at most 100, and their finding. */
  unlinkedSql: string;
  unlinked: (r: { id: string; chain: string }) => string;
  /** A page of linked rows after the keyset (chain, seq) bound as two parameters, in chain order. */
  pageSql: string;
  /** A keyset before every chain. */
  start: [string, string];
  chainName: (chain: string, name: string | null) => string;
  bytes: (r: R) => Buffer;
}

/** Walks every chain of a kind: the first break of each, and heads whose chain has no row left. */
async function walkChains<R extends { id: string; chain: string; seq: string; hash: Buffer }>(trx: Db, kind: ChainKind<R>, out: LedgerViolation[]): Promise<void> {
  const heads = new Map<string, Head & { name: string | null }>();
  for (const h of await rows<{ chain: string; name: string | null; seq: string; hash: Buffer | null }>(trx, kind.headsSql)) {
    heads.set(h.chain, { name: h.name, seq: Number(h.seq), hash: h.hash });
  }
  const push = (detail: string | null) => detail !== null && out.push({ rule: kind.rule, detail });
  const walkOf = (chain: string) => {
    const head = heads.get(chain) ?? { name: null, seq: 0, hash: null };
    heads.delete(chain);
    return new ChainWalk(kind.chainName(chain, head.name), head);
  };

  for (const r of await rows<{ id: string; chain: string }>(trx, kind.unlinkedSql)) out.push({ rule: kind.rule, detail: kind.unlinked(r) });

  let current: { chain: string; walk: ChainWalk } | null = null;
  let after = kind.start;
  for (;;) {
    const page = await rows<R>(trx, kind.pageSql, after);
    for (const r of page) {
      if (current === null || current.chain !== r.chain) {
        if (current !== null) push(current.walk.end(kind.what));
        current = { chain: r.chain, walk: walkOf(r.chain) };
      }
      current.walk.step(r.id, Number(r.seq), r.hash, () => kind.bytes(r), kind.what);
    }
    if (page.length < PAGE) break;
    const last = page[page.length - 1]!;
    after = [last.chain, last.seq];
  }
  if (current !== null) push(current.walk.end(kind.what));
  // Chains without any row left: their head must say so.
  for (const [chain] of [...heads]) push(walkOf(chain).end(kind.what));
}

/** One chain per ledger account over its journal lines. */
const LEDGER_CHAINS: ChainKind<LineRow & { chain: string }> = {
  rule: 'ledger-chain',
  what: 'journal line',
  headsSql: `SELECT id::text AS chain, code AS name, chain_seq::text AS seq, chain_hash AS hash FROM ledger_accounts`,
  unlinkedSql: `SELECT id::text, account_id::text AS chain FROM journal_lines WHERE chain_seq IS NULL ORDER BY id LIMIT 100`,
  unlinked: (r) => `journal line ${r.id} (account #${r.chain}) has no link in its account's chain: inserted`,
  pageSql: `SELECT l.id::text, l.entry_id::text, l.account_id::text, l.account_id::text AS chain, l.amount::text, l.chain_seq::text AS seq, l.chain_hash AS hash,
                   e.kind, e.ref_type, e.ref_id, e.posting_key, e.memo, ${TIME('e.created_at')} AS at
              FROM journal_lines l LEFT JOIN journal_entries e ON e.id = l.entry_id
             WHERE l.chain_seq IS NOT NULL AND (l.account_id, l.chain_seq) > (?::bigint, ?::bigint)
             ORDER BY l.account_id, l.chain_seq
             LIMIT ${PAGE}`,
  start: ['0', '0'],
  chainName: (chain, code) => `the chain of ledger account ${code ?? `#${chain}`}`,
  bytes: lineBytes,
};

const AUDIT_CHAIN = `coalesce(actor_id::text, 'system')`;

/** One chain per actor over the staff audit. */
const AUDIT_CHAINS: ChainKind<AuditRow> = {
  rule: 'audit-chain',
  what: 'staff audit row',
  headsSql: `SELECT chain, NULL AS name, seq::text, hash FROM audit_chain_heads`,
  unlinkedSql: `SELECT id::text, ${AUDIT_CHAIN} AS chain FROM staff_audit WHERE chain_seq IS NULL ORDER BY id LIMIT 100`,
  unlinked: (r) => `staff audit row ${r.id} has no link in its actor's chain: inserted`,
  pageSql: `SELECT id::text, ${AUDIT_CHAIN} AS chain, actor_id::text, action, target_type, target_id, note, details::text AS details, ip,
                   ${TIME('created_at')} AS at, chain_seq::text AS seq, chain_hash AS hash
              FROM staff_audit
             WHERE chain_seq IS NOT NULL AND (${AUDIT_CHAIN}, chain_seq) > (?::text, ?::bigint)
             ORDER BY ${AUDIT_CHAIN}, chain_seq
             LIMIT ${PAGE}`,
  start: ['', '0'],
  chainName: (chain) => `the staff audit chain of ${chain === 'system' ? 'the system' : `actor ${chain}`}`,
  bytes: auditBytes,
};

/**
 * The heads recorded by the latest checkpoints (shared/ledger/checkpoint.ts) against the rows
 * at those positions now: a chain rewritten from some row on, hashes and head included, still
 * differs from what was recorded before the rewrite.
 */
async function checkAnchors(trx: Db, out: LedgerViolation[]): Promise<void> {
  const recent = `SELECT id, created_at, details FROM staff_audit WHERE action = ? ORDER BY id DESC LIMIT ${ANCHORED_CHECKPOINTS}`;
  const columns = `cp.id::text AS checkpoint, ${TIME('cp.created_at')} AS recorded_at, h.key AS chain, h.value->>0 AS seq, h.value->>1 AS hash`;
  const checks = [
    {
      name: (chain: string) => `ledger account #${chain}`,
      sql: `SELECT ${columns}, encode(l.chain_hash, 'hex') AS now
              FROM (${recent}) cp CROSS JOIN LATERAL jsonb_each(cp.details->'ledger'->'heads') AS h
              LEFT JOIN journal_lines l ON l.account_id = h.key::bigint AND l.chain_seq = (h.value->>0)::bigint
             WHERE l.chain_hash IS NULL OR encode(l.chain_hash, 'hex') <> h.value->>1
             ORDER BY cp.id DESC, h.key LIMIT 100`,
    },
    {
      name: (chain: string) => `the staff audit chain ${chain}`,
      sql: `SELECT ${columns}, encode(a.chain_hash, 'hex') AS now
              FROM (${recent}) cp CROSS JOIN LATERAL jsonb_each(cp.details->'audit'->'heads') AS h
              LEFT JOIN staff_audit a ON coalesce(a.actor_id::text, 'system') = h.key AND a.chain_seq = (h.value->>0)::bigint
             WHERE a.chain_hash IS NULL OR encode(a.chain_hash, 'hex') <> h.value->>1
             ORDER BY cp.id DESC, h.key LIMIT 100`,
    },
  ];
  for (const check of checks) {
    for (const f of await rows<{ checkpoint: string; recorded_at: string; chain: string; seq: string; hash: string; now: string | null }>(trx, check.sql, [CHECKPOINT_ACTION])) {
      out.push({
        rule: 'chain-anchor',
        detail: `checkpoint ${f.checkpoint} (${f.recorded_at}) recorded position ${f.seq} of ${check.name(f.chain)} as ${f.hash.slice(0, 16)}…, the row there now ${f.now === null ? 'is gone' : `hashes to ${f.now.slice(0, 16)}…`}: rewritten`,
      });
    }
  }
}

/** Every chain and the recorded heads; one violation per broken chain (its first break). */
export async function checkChains(trx: Db): Promise<LedgerViolation[]> {
  const out: LedgerViolation[] = [];
  await walkChains(trx, LEDGER_CHAINS, out);
  await walkChains(trx, AUDIT_CHAINS, out);
  await checkAnchors(trx, out);
  return out;
}
