/**
 * `npm run chaos` (issue 14): the service under faults. Starts its own Postgres database
 * (`<bench db>_chaos`, recreated each run) and its own Redis server (a `redis-server` child
 * on a free loopback port with an append-only file, so a restart keeps its data as a
 * managed Redis with persistence would), 2 API copies and 2 worker copies (the Procfile
 * commands, compiled), and drives a mixed workload over both API copies:
 *
 *   escrows from signed partner links, sandbox payments whose callbacks arrive duplicated,
 *   reordered (a failed report first) and late (an expired report after paid), sends,
 *   receipts, releases, disputes and staff rulings (release or refund), payment-service
 *   orders, withdrawals with staff approvals and rejections, and reads; and money at the
 *   edges: manual transfers claimed after a cancel and credited by staff, short and long
 *   gateway payments credited or marked returned by staff, callbacks sent before their
 *   pay has answered.
 *
 * Meanwhile: one worker copy is SIGKILLed every 2 s and restarted; a few payout jobs have
 * their worker SIGKILLed while they run; one API copy is killed and restarted every 15 s;
 * Redis is restarted once; the busy Postgres backends of the service's processes are
 * terminated at once, tried every 200 ms until one of them is inside a transaction. Each
 * planned fault must have happened, or the run fails. The longest wait of a stalled payout
 * or a due callback must stay under 30 s. A request that loses its connection is sent
 * again to the other copy with the same Idempotency-Key, as a client would.
 *
 * Every request and its answer is appended to a JSON-lines log; after the queues drain, the
 * expected state is computed from that log alone and compared with the database: every
 * escrow's status, every withdrawal's status, every user's balance, every paid callback
 * credited once, every outbox row delivered, no job failed without a recorded reason, no
 * 5xx other than to a request whose connection was cut, and `checkLedger`. Prints the
 * figures; exit code 1 on any difference.
 *
 * `npm run chaos -- --overload`: sends 10x the per-user limit and 10x a per-IP limit through
 * both copies; every answer must be 2xx or 429 with Retry-After (never 5xx), and every
 * accepted write must be in the database.
 *
 * Tunables: CHAOS_DEALS (900 escrow flows), CHAOS_CONCURRENCY (32), CHAOS_USERS (120).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { freePort, HOST, intFromEnv, PINNED, ROOT, runToCompletion, startChild, stopChild, stopChildrenOnSignals, stopAll, waitFor, type Child } from './procs.js';
import { execFileSync } from 'node:child_process';

const DEALS = intFromEnv('CHAOS_DEALS', 900, 10, 100_000);
const CONCURRENCY = intFromEnv('CHAOS_CONCURRENCY', 32, 1, 500);
const USERS = intFromEnv('CHAOS_USERS', 120, 4, 10_000);
const OVERLOAD = process.argv.includes('--overload');
const RUN_DIR = mkdtempSync(path.join(os.tmpdir(), 'escrow-chaos-'));
const LOG_FILE = path.join(RUN_DIR, 'requests.jsonl');
/** The processes' own logs (pino JSON lines), appended across restarts. */
const PROC_LOG = openSync(path.join(RUN_DIR, 'processes.log'), 'a');
const AMOUNT_MIN = 60_000;
/** The driver's own Postgres connections (never cut). */
const DRIVER_APP = 'chaos-driver';
/** A worker copy's Postgres connections: slot and start number, so a backend names its process. */
const workerApp = (slot: number, generation: number) => `chaos-worker-${slot + 1}-${generation}`;
/** A payout or callback may wait less than this after its worker was killed (issue "Money at the edges"). */
const STALL_LIMIT_S = 30;

function unpin(): void {
  if (PINNED) execFileSync('taskset', ['-cp', `0-${os.cpus().length - 1}`, String(process.pid)], { stdio: 'ignore' });
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * DATABASE_URL with an `application_name` (node-postgres lets the URL's parameter win over
 * the service's own), so pg_stat_activity names the process behind each backend: the cut
 * spares the driver's own connections, and a payout job blocked on a row lock is traced to
 * the worker copy that runs it.
 */
function withAppName(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', name);
  return u.toString();
}

// ---- Redis: our own server, restartable with its data -------------------------------------

class RedisServer {
  proc: ChildProcess | null = null;
  constructor(
    readonly port: number,
    readonly dir: string,
  ) {}
  async start(): Promise<void> {
    const proc = spawn('redis-server', ['--port', String(this.port), '--bind', HOST, '--dir', this.dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''], {
      stdio: 'ignore',
    });
    this.proc = proc;
    for (let i = 0; i < 100; i += 1) {
      try {
        execFileSync('redis-cli', ['-p', String(this.port), 'ping'], { stdio: 'pipe' });
        return;
      } catch {
        await sleep(50);
      }
    }
    throw new Error('redis-server did not start');
  }
  /** SIGTERM: Redis finishes its append-only file and exits; start() brings the same data back. */
  async restart(): Promise<void> {
    const proc = this.proc;
    if (proc) {
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      await exited;
    }
    await this.start();
  }
  stop(): void {
    this.proc?.kill('SIGTERM');
  }
}

// ---- The request log ----------------------------------------------------------------------

interface Logged {
  seq: number;
  at: number;
  api: number;
  /** The calling user's id (never the credential). */
  as: string | null;
  method: string;
  path: string;
  key: string | null;
  body: unknown;
  status: number | 'cut';
  answer: unknown;
  /** When the answer (or the cut) came. */
  done?: number;
}

const log = createWriteStream(LOG_FILE);
const entries: Logged[] = [];
let seq = 0;

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

let apiBases: string[] = [];
/** Copies currently down (killed by the chaos loop). */
const down = new Set<number>();

/**
 * One logical request: sent to a live API copy; on a cut connection sent again (same
 * Idempotency-Key) to the other copy, up to 8 tries. Each try is logged.
 */
async function call(
  method: string,
  urlPath: string,
  opts: { key?: string; as?: string; body?: unknown; idem?: boolean; headers?: Record<string, string>; raw?: string } = {},
): Promise<Answer> {
  const idemKey = opts.idem ? randomUUID() : null;
  let copy = Math.floor(Math.random() * apiBases.length);
  for (let attempt = 0; attempt < 12; attempt += 1) {
    if (down.has(copy)) copy = (copy + 1) % apiBases.length;
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(opts.headers ?? {}) };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    if (idemKey) headers['idempotency-key'] = idemKey;
    const entry: Logged = { seq: (seq += 1), at: Date.now(), api: copy, as: opts.as ?? null, method, path: urlPath, key: idemKey, body: opts.raw ?? opts.body ?? null, status: 'cut', answer: null };
    try {
      const res = await fetch(`${apiBases[copy]}${urlPath}`, {
        method,
        headers,
        body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
        signal: AbortSignal.timeout(20_000),
      });
      const text = await res.text();
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = { raw: text.slice(0, 200) };
      }
      entry.status = res.status;
      entry.answer = body;
      record(entry);
      if (res.status === 503 && attempt < 11) {
        // An API copy shutting down (SIGTERM) or not ready: try the other one.
        copy = (copy + 1) % apiBases.length;
        await sleep(100);
        continue;
      }
      return { status: res.status, body, headers: res.headers };
    } catch {
      record(entry);
      copy = (copy + 1) % apiBases.length;
      await sleep(100 + attempt * 100);
    }
  }
  throw new Error(`${method} ${urlPath}: no answer after 12 tries`);
}

function record(e: Logged): void {
  e.done = Date.now();
  entries.push(e);
  log.write(`${JSON.stringify(e)}\n`);
}

/** E-mails the SMTP sink received. */
let mails: readonly unknown[] = [];

const dataOf = (a: Answer): Record<string, unknown> => (a.body.data ?? {}) as Record<string, unknown>;

// ---- Workload -----------------------------------------------------------------------------

interface Actor {
  id: string;
  key: string;
  secret?: string;
}

/** The service's own signers, loaded in main() once the environment points at the chaos stores. */
let signFields: (secret: string, fields: Record<string, string>) => string = () => {
  throw new Error('signers not loaded');
};
let signCallback: (rawBody: string) => string = () => {
  throw new Error('signers not loaded');
};

function sandboxCallback(order: string, status: string, amount: number): { raw: string; headers: Record<string, string> } {
  const raw = JSON.stringify({ provider: 'sandbox', gateway_order_id: order, status, amount });
  return { raw, headers: { 'x-sandbox-signature': signCallback(raw) } };
}

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

/** An escrow from the seller's signed link, created by the buyer; its id, or null when refused. */
async function createEscrow(n: number, buyer: Actor, seller: Actor, amount: number): Promise<string | null> {
  const fields: Record<string, string> = {
    seller: seller.id,
    item: `Barang chaos ${n}`,
    category: pick(['goods', 'service', 'digital']),
    ref: `chaos-${n}-${randomBytes(4).toString('hex')}`,
    v: '1',
    expires: String(Math.floor(Date.now() / 1000) + 3600),
  };
  const created = await call('POST', '/api/escrows/from-link', { key: buyer.key, as: buyer.id, idem: true, body: { ...fields, sig: signFields(seller.secret!, fields), amount } });
  return created.status === 201 ? String(dataOf(created).id) : null;
}

async function deal(n: number, users: Actor[], admin: Actor): Promise<void> {
  const seller = users[n % users.length]!;
  let buyer = pick(users);
  if (buyer.id === seller.id) buyer = users[(n + 1) % users.length]!;
  const amount = AMOUNT_MIN + Math.floor(Math.random() * 40) * 5_000;
  const created = await createEscrow(n, buyer, seller, amount);
  if (created === null) return;
  const escrowId = created;
  const pay = await call('POST', `/api/escrows/${escrowId}/pay`, { key: buyer.key, as: buyer.id, idem: true, body: { method: 'qris' } });
  if (pay.status !== 201) return;
  const order = String(dataOf(pay).gateway_order_id);
  const total = Number(dataOf(pay).amount ?? dataOf(pay).total_amount ?? 0);
  // Callbacks: duplicated, sometimes a failed report first (reordered), sometimes expired after paid (late).
  const shape = n % 4;
  if (shape === 1) await call('POST', '/api/webhooks/inbound', sandboxCallback(order, 'failed', total));
  await call('POST', pick(['/api/webhooks/inbound', '/api/webhooks/ipn', '/api/webhooks/payment', '/api/webhooks/universal']), sandboxCallback(order, 'paid', total));
  await call('POST', '/api/webhooks/inbound', sandboxCallback(order, 'paid', total));
  if (shape === 2) await call('POST', '/api/webhooks/inbound', sandboxCallback(order, 'expired', total));
  // Poll as the checkout does, until paid.
  for (let i = 0; i < 120; i += 1) {
    const st = await call('GET', `/api/escrows/${escrowId}/payment-status`, { key: buyer.key });
    if (st.status === 200 && dataOf(st).status === 'paid') break;
    await sleep(500);
  }
  const path = n % 10;
  if (path < 6) {
    await call('POST', `/api/escrows/${escrowId}/send`, { key: seller.key, idem: true, body: { courier: 'jne', tracking_number: `JNE${n}X` } });
    await call('POST', `/api/escrows/${escrowId}/confirm-received`, { key: buyer.key, idem: true, body: {} });
    await call('POST', `/api/escrows/${escrowId}/release`, { key: buyer.key, idem: true, body: {} });
  } else if (path < 9) {
    const d = await call('POST', `/v1/escrows/${escrowId}/dispute`, { key: buyer.key, body: { reason_category: 'item_not_received', description: 'Barang belum sampai' } });
    let disputeId = d.status === 201 ? String(dataOf(d).id) : null;
    if (d.status === 409) {
      // A cut first try may have opened it: find it.
      const list = await call('GET', '/v1/disputes', { key: buyer.key, as: buyer.id });
      const found = ((list.body.data ?? []) as { id: string; escrow_id: string }[]).find((x) => x.escrow_id === escrowId);
      disputeId = found?.id ?? null;
    }
    if (disputeId) {
      await call('POST', `/v1/admin/disputes/${disputeId}/resolve`, { key: admin.key, idem: true, body: { outcome: n % 2 === 0 ? 'release' : 'refund', note: 'chaos ruling' } });
      // The ruling's answer has no fee: read the escrow (the released amount's fee).
      await call('GET', `/api/escrows/${escrowId}`, { key: buyer.key, as: buyer.id });
    }
  } else {
    await call('GET', `/api/escrows/${escrowId}`, { key: seller.key });
  }
}

/** A payment-service order paid through the sandbox gateway, then delivered or refunded by staff. */
async function serviceOrder(n: number, users: Actor[], admin: Actor): Promise<void> {
  const buyer = users[(n * 7) % users.length]!;
  const created = await call('POST', '/api/jasabayar', {
    key: buyer.key,
    as: buyer.id,
    idem: true,
    body: { target_url: `https://toko.example/item/${n}`, target_label: `Pesanan chaos ${n}`, item_price: 50_000 + (n % 20) * 5_000 },
  });
  if (created.status !== 201) return;
  const orderId = String(dataOf(created).id);
  const pay = await call('POST', `/api/jasabayar/${orderId}/pay`, { key: buyer.key, as: buyer.id, idem: true, body: { method: 'qris' } });
  if (pay.status !== 201) return;
  const order = String(dataOf(pay).gateway_order_id);
  const total = Number(dataOf(pay).amount);
  await call('POST', '/api/webhooks/inbound', sandboxCallback(order, 'paid', total));
  await call('POST', '/api/webhooks/ipn', sandboxCallback(order, 'paid', total));
  for (let i = 0; i < 120; i += 1) {
    const st = await call('GET', `/api/jasabayar/${orderId}/payment-status`, { key: buyer.key, as: buyer.id });
    if (st.status === 200 && dataOf(st).status === 'paid') break;
    await sleep(500);
  }
  await call('POST', `/v1/admin/jasabayar/${orderId}/process`, { key: admin.key, idem: true, body: {} });
  if (n % 3 === 0) {
    await call('POST', `/v1/admin/jasabayar/${orderId}/refund`, { key: admin.key, idem: true, body: { reason: 'chaos refund' } });
  } else {
    await call('POST', `/v1/admin/jasabayar/${orderId}/deliver`, { key: admin.key, idem: true, body: { credentials: `user${n}:secret${n}`, delivery_note: 'done' } });
  }
}

// ---- Money at the edges: late manual transfers, short and long payments, early callbacks ----

/** The manual bank-transfer gateway the chaos setup adds (no surcharge; staff settle its claims). */
const MANUAL_GATEWAY = 'chaos_manual_bca';

/** What the edge flows need beyond the users: a second staff member, buyers of their own for the early callbacks, the database. */
interface Edge {
  /** Staff for the edge flows (the first admin's key is busy with rulings and order moves, 300 a minute). */
  staff: Actor;
  /** Buyers used only by the early-callback flows (their charges are found by amount). */
  racers: Actor[];
  db: Knex;
}

/** Early callbacks: how many were sent before their pay had answered, of how many tried. */
const racing = { tried: 0, beforeCommit: 0 };

/** A staff move of the edge flows, sent again after `Retry-After` when it is rate limited. */
async function staffMove(staff: Actor, urlPath: string, body: Record<string, unknown>): Promise<Answer> {
  for (let i = 0; ; i += 1) {
    const a = await call('POST', urlPath, { key: staff.key, as: staff.id, idem: true, body });
    if (a.status !== 429 || i >= 5) return a;
    await sleep(1000 * Math.min(30, Math.max(1, Number(a.headers.get('retry-after') ?? 1))));
  }
}

/**
 * A manual transfer claimed after the escrow was cancelled: the buyer opens a manual
 * bank-transfer payment, the seller cancels before the buyer claims, the buyer claims late
 * (recorded, 2xx), staff credit it to the buyer's balance, and a second credit is refused.
 */
async function lateManualTransfer(n: number, users: Actor[], edge: Edge): Promise<void> {
  const seller = users[n % users.length]!;
  let buyer = users[(n * 13 + 7) % users.length]!;
  if (buyer.id === seller.id) buyer = users[(n + 1) % users.length]!;
  const escrowId = await createEscrow(n, buyer, seller, AMOUNT_MIN + (n % 30) * 5_000);
  if (escrowId === null) return;
  const pay = await call('POST', `/api/escrows/${escrowId}/pay`, { key: buyer.key, as: buyer.id, idem: true, body: { method: 'bank_transfer', provider: MANUAL_GATEWAY } });
  if (pay.status !== 201) return;
  const paymentId = String(dataOf(pay).payment_link_id);
  const cancelled = await call('POST', `/api/escrows/${escrowId}/cancel`, { key: seller.key, as: seller.id, idem: true, body: { reason: 'Stok habis' } });
  if (cancelled.status !== 200) return;
  const claim = await call('POST', `/api/escrows/${escrowId}/claim-payment`, { key: buyer.key, as: buyer.id, idem: true, body: { reference: `TRF-CHAOS-${n}` } });
  if (claim.status < 200 || claim.status >= 300) return;
  await staffMove(edge.staff, `/v1/admin/payments/${paymentId}/credit`, { note: 'late transfer, credited to the buyer' });
  // Another click (another key): refused, the money is credited once.
  await staffMove(edge.staff, `/v1/admin/payments/${paymentId}/credit`, { note: 'second click' });
}

/**
 * A short or long gateway payment: the sandbox reports paid with less or more than the
 * link's total (twice), the worker flags it, and staff credit the reported amount to the
 * buyer or mark it returned; a second move is refused.
 */
async function wrongAmount(n: number, users: Actor[], edge: Edge): Promise<void> {
  const seller = users[n % users.length]!;
  let buyer = users[(n * 17 + 3) % users.length]!;
  if (buyer.id === seller.id) buyer = users[(n + 1) % users.length]!;
  const escrowId = await createEscrow(n, buyer, seller, AMOUNT_MIN + (n % 30) * 5_000);
  if (escrowId === null) return;
  const pay = await call('POST', `/api/escrows/${escrowId}/pay`, { key: buyer.key, as: buyer.id, idem: true, body: { method: 'qris' } });
  if (pay.status !== 201) return;
  const paymentId = String(dataOf(pay).payment_link_id);
  const order = String(dataOf(pay).gateway_order_id);
  const total = Number(dataOf(pay).amount);
  const kind = Math.floor(n / 25) % 4;
  const reported = kind % 2 === 0 ? total - 1_000 : total + 2_500;
  await call('POST', '/api/webhooks/inbound', sandboxCallback(order, 'paid', reported));
  await call('POST', '/api/webhooks/payment', sandboxCallback(order, 'paid', reported));
  const move = kind < 2 ? 'credit' : 'mark-returned';
  const note = move === 'credit' ? 'reported amount credited to the buyer' : 'returned to the payer by bank transfer, ref CHAOS';
  // Refused (409) until the worker has flagged the mismatch.
  for (let i = 0; i < 120; i += 1) {
    const a = await staffMove(edge.staff, `/v1/admin/payments/${paymentId}/${move}`, { note });
    if (a.status !== 409) break;
    await sleep(500);
  }
  await staffMove(edge.staff, `/v1/admin/payments/${paymentId}/${move}`, { note: 'second click' });
}

/**
 * A callback that races its payment: the driver, standing for a fast gateway, watches the
 * sandbox's charges and sends the paid callback and a redelivery the moment the charge for
 * this payment exists, while `pay` has not answered yet (the link's row is committed before
 * the gateway is called, decision 0015; its answer is recorded after), with the other
 * flows' traffic going on; then one more redelivery after the answer. The payment must end
 * paid, once.
 */
async function earlyCallback(n: number, users: Actor[], edge: Edge, k: number): Promise<void> {
  const seller = users[n % users.length]!;
  const buyer = edge.racers[k % edge.racers.length]!;
  // An amount no other flow uses (others stay under 260,000), so its charge is found by its total.
  const amount = 400_007 + k * 1_000;
  const total = amount + Math.ceil((amount * 7) / 1000); // the sandbox gateway's 0.7%
  const escrowId = await createEscrow(n, buyer, seller, amount);
  if (escrowId === null) return;
  racing.tried += 1;
  let answered = false;
  const payP = call('POST', `/api/escrows/${escrowId}/pay`, { key: buyer.key, as: buyer.id, idem: true, body: { method: 'qris' } }).finally(() => {
    answered = true;
  });
  let order: string | null = null;
  while (order === null && !answered) {
    const charge = await edge.db('sandbox_charges').where({ amount: total }).orderBy('created_at', 'desc').first<{ gateway_order_id: string } | undefined>('gateway_order_id');
    if (charge) order = charge.gateway_order_id;
    else await sleep(5);
  }
  if (order !== null) {
    // The gateway's own record says paid (its status API answers so), then it calls back twice.
    await edge.db('sandbox_charges').where({ gateway_order_id: order }).update({ status: 'paid', updated_at: new Date() });
    const early = !answered;
    await Promise.all([call('POST', '/api/webhooks/inbound', sandboxCallback(order, 'paid', total)), call('POST', '/api/webhooks/ipn', sandboxCallback(order, 'paid', total))]);
    if (early) racing.beforeCommit += 1;
  }
  const pay = await payP;
  if (pay.status !== 201) return;
  const paidOrder = String(dataOf(pay).gateway_order_id);
  if (paidOrder !== order) await edge.db('sandbox_charges').where({ gateway_order_id: paidOrder }).update({ status: 'paid', updated_at: new Date() });
  // The gateway's retry after the answer (and the callback itself, if the charge seen was a cut try's).
  await call('POST', '/api/webhooks/universal', sandboxCallback(paidOrder, 'paid', total));
  for (let i = 0; i < 120; i += 1) {
    const st = await call('GET', `/api/escrows/${escrowId}/payment-status`, { key: buyer.key, as: buyer.id });
    if (st.status === 200 && dataOf(st).status === 'paid') break;
    await sleep(500);
  }
}

async function withdrawals(users: Actor[], admin: Actor, onApproved: (id: string) => void): Promise<void> {
  for (const [i, u] of users.entries()) {
    const bal = await call('GET', '/v1/user/balance', { key: u.key });
    const balance = Number(dataOf(bal).balance ?? 0);
    if (bal.status !== 200 || balance < 60_000) continue;
    const amount = Math.floor(balance / 2 / 10_000) * 10_000;
    if (amount < 50_000) continue;
    const w = await call('POST', '/v1/withdrawals', {
      key: u.key,
      as: u.id,
      idem: true,
      body: { amount, method: 'bank_transfer', destination_details: { bank_name: 'BCA', account_number: `88${String(i).padStart(8, '0')}`, account_holder: `Chaos ${i}` }, destination_ack: true },
    });
    if (w.status !== 201) continue;
    const id = String(dataOf(w).id);
    const decided = await call('POST', `/v1/admin/withdrawals/${id}/${i % 3 === 0 ? 'reject' : 'approve'}`, { key: admin.key, idem: true, body: { note: 'chaos review' } });
    if (i % 3 !== 0 && decided.status >= 200 && decided.status < 300) onApproved(id);
  }
}

async function pool(n: number, limit: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (;;) {
        const i = next;
        next += 1;
        if (i >= n) return;
        await work(i);
      }
    }),
  );
}

// ---- Expected state from the log ----------------------------------------------------------

/** A payment link from a pay answer (escrow or payment-service order). */
interface Link {
  paymentId: string;
  total: number;
  buyer: string;
}

interface Expected {
  orders: Map<string, { status: string; total: number; buyer: string }>;
  escrows: Map<string, { status: string; amount: number; buyer: string; seller: string; fee: number }>;
  withdrawals: Map<string, { status: string; user: string; amount: number }>;
  balances: Map<string, number>;
  paidOrders: Set<string>;
  /** Links whose paid report differed from their total: the reported amount. */
  mismatched: Map<string, number>;
  /** Late manual claims (answered 2xx with late_claim). */
  lateClaims: Set<string>;
  /** Staff credits and returns accepted, by payment id: what, and the amount it moves. */
  settled: Map<string, { how: 'credit' | 'mark-returned'; amount: number }>;
  /** Payments a second staff move (another key) was also accepted for: money moved twice. */
  settledTwice: string[];
}

/**
 * Replays the successful answers in the order they were given: an escrow's status is the
 * last state an answer reported; money follows the answers (a release credits the seller
 * the amount less the fee the answer states; a refund ruling credits the buyer; a
 * withdrawal takes its amount and a rejection gives it back).
 */
function expectedFromLog(log: readonly Logged[]): Expected {
  const ok = log.filter((e) => typeof e.status === 'number' && e.status >= 200 && e.status < 300).sort((a, b) => a.seq - b.seq);
  const escrows: Expected['escrows'] = new Map();
  const withdrawals: Expected['withdrawals'] = new Map();
  const paidOrders = new Set<string>();
  const escrowOfOrder = new Map<string, string>();
  const orders: Expected['orders'] = new Map();
  const serviceOrderOf = new Map<string, string>();
  const ORDER_RANK: Record<string, number> = { awaiting_payment: 0, pending_review: 1, paid: 2, processing: 3, delivered: 4, refunded: 4, cancelled: 4 };
  const advanceOrder = (id: string, status: string) => {
    const o = orders.get(id);
    if (o && (ORDER_RANK[status] ?? -1) > (ORDER_RANK[o.status] ?? -1)) o.status = status;
  };
  const disputeEscrow = new Map<string, string>();
  // A status may only move forward: a late answer (a replay of an earlier move) never moves it back.
  const RANK: Record<string, number> = { pending_payment: 0, paid: 1, sent: 2, received: 3, disputed: 4, released: 5, refunded: 5, cancelled: 5 };
  const advance = (id: string, status: string) => {
    const x = escrows.get(id);
    if (x && (RANK[status] ?? -1) > (RANK[x.status] ?? -1)) x.status = status;
  };
  // Links first: a callback may be logged before the answer of the pay it pays (sent early).
  const links = new Map<string, Link>();
  const linkById = new Map<string, Link>();
  for (const e of ok) {
    if (!/^\/api\/(escrows|jasabayar)\/[^/]+\/pay$/.test(e.path)) continue;
    const data: Record<string, unknown> = (e.answer as { data?: Record<string, unknown> } | null)?.data ?? {};
    const link: Link = { paymentId: String(data.payment_link_id), total: Number(data.amount), buyer: e.as ?? '' };
    links.set(String(data.gateway_order_id), link);
    linkById.set(link.paymentId, link);
    (e.path.startsWith('/api/escrows/') ? escrowOfOrder : serviceOrderOf).set(String(data.gateway_order_id), e.path.split('/')[3]!);
  }
  const mismatched = new Map<string, number>();
  const lateClaims = new Set<string>();
  const settled: Expected['settled'] = new Map();
  const settledKey = new Map<string, string | null>();
  const settledTwice: string[] = [];
  for (const e of ok) {
    const data: Record<string, unknown> = (e.answer as { data?: Record<string, unknown> } | null)?.data ?? {};
    const parts = e.path.split('/');
    if (e.path === '/api/jasabayar' && e.method === 'POST') {
      const id = String(data.id);
      if (!orders.has(id)) orders.set(id, { status: 'awaiting_payment', total: Number(data.total), buyer: e.as ?? '' });
    } else if (/^\/api\/jasabayar\/[^/]+\/payment-status$/.test(e.path) && data.status === 'paid') {
      advanceOrder(parts[3]!, 'paid');
    } else if (/^\/v1\/admin\/jasabayar\/[^/]+\/(start|process|deliver|refund)$/.test(e.path)) {
      // { order } (decision 0016), or the bare order of older versions.
      const status = (data.order as { status?: unknown } | undefined)?.status ?? data.status;
      if (typeof status === 'string') advanceOrder(parts[4]!, status);
    } else if (e.path === '/api/escrows/from-link') {
      const id = String(data.id);
      if (!escrows.has(id)) escrows.set(id, { status: 'pending_payment', amount: Number(data.amount), buyer: String(data.buyer_id), seller: String(data.seller_id), fee: Number.NaN });
    } else if (/^\/api\/webhooks\//.test(e.path)) {
      const b = JSON.parse(typeof e.body === 'string' ? e.body : '{}') as { status?: string; gateway_order_id?: string; amount?: number };
      const link = b.gateway_order_id ? links.get(b.gateway_order_id) : undefined;
      // A paid report for a link no pay answered (a charge of a cut try) pays nothing; one whose
      // amount differs from the link's total is flagged for staff.
      if (b.status === 'paid' && link && typeof b.amount === 'number' && b.amount !== link.total) {
        mismatched.set(link.paymentId, b.amount);
      } else if (b.status === 'paid' && b.gateway_order_id && link) {
        paidOrders.add(b.gateway_order_id);
        const id = escrowOfOrder.get(b.gateway_order_id);
        if (id) advance(id, 'paid');
        const so = serviceOrderOf.get(b.gateway_order_id);
        if (so) advanceOrder(so, 'paid');
      }
    } else if (/^\/api\/escrows\/[^/]+\/claim-payment$/.test(e.path)) {
      if (data.late_claim === true) lateClaims.add(String(data.id));
    } else if (/^\/v1\/admin\/payments\/[^/]+\/(credit|mark-returned)$/.test(e.path)) {
      const id = parts[4]!;
      const link = linkById.get(id);
      if (settledKey.has(id)) {
        if (settledKey.get(id) !== e.key) settledTwice.push(id);
      } else if (link) {
        settledKey.set(id, e.key);
        settled.set(id, { how: e.path.endsWith('/credit') ? 'credit' : 'mark-returned', amount: mismatched.get(id) ?? link.total });
      }
    } else if (/^\/api\/escrows\/[^/]+(\/(send|confirm-received|release|cancel))?$/.test(e.path) && typeof data.status === 'string') {
      advance(parts[3]!, data.status);
      const x = escrows.get(parts[3]!);
      if (x && data.status === 'released' && data.platform_fee !== undefined && data.platform_fee !== null) x.fee = Number(data.platform_fee);
    } else if (/^\/v1\/escrows\/[^/]+\/dispute$/.test(e.path)) {
      disputeEscrow.set(String(data.id), parts[3]!);
      advance(parts[3]!, 'disputed');
    } else if (e.path === '/v1/disputes' && Array.isArray(e.answer && (e.answer as { data?: unknown }).data)) {
      for (const d of (e.answer as { data: { id: string; escrow_id: string }[] }).data) {
        disputeEscrow.set(d.id, d.escrow_id);
        advance(d.escrow_id, 'disputed');
      }
    } else if (/^\/v1\/admin\/disputes\/[^/]+\/resolve$/.test(e.path)) {
      const id = disputeEscrow.get(parts[4]!);
      const outcome = (e.body as { outcome?: string }).outcome;
      if (id) advance(id, outcome === 'release' ? 'released' : outcome === 'refund' ? 'refunded' : 'disputed');
    } else if (e.path === '/v1/withdrawals' && e.method === 'POST') {
      const id = String(data.id);
      if (!withdrawals.has(id)) withdrawals.set(id, { status: 'pending', user: e.as ?? String(data.user_id), amount: Number(data.amount) });
    } else if (/^\/v1\/admin\/withdrawals\/[^/]+\/(approve|reject)$/.test(e.path)) {
      const w = withdrawals.get(parts[4]!);
      if (w && w.status === 'pending') w.status = e.path.endsWith('/reject') ? 'rejected' : 'approved';
    }
  }
  // Money follows the statuses: released pays the seller the amount less its fee, refunded
  // pays the buyer back; a withdrawal takes its amount unless rejected.
  const balances = new Map<string, number>();
  const add = (user: string, delta: number) => balances.set(user, (balances.get(user) ?? 0) + delta);
  for (const x of escrows.values()) {
    if (x.status === 'released') add(x.seller, x.amount - x.fee);
    if (x.status === 'refunded') add(x.buyer, x.amount);
  }
  for (const w of withdrawals.values()) if (w.status !== 'rejected') add(w.user, -w.amount);
  // A refunded order gives its total back to the buyer's balance.
  for (const o of orders.values()) if (o.status === 'refunded') add(o.buyer, o.total);
  // Staff credits put the reported amount (a mismatch) or the claimed total (a late claim) on the buyer's balance, once.
  for (const [id, x] of settled) if (x.how === 'credit') add(linkById.get(id)!.buyer, x.amount);
  return { orders, escrows, withdrawals, balances, paidOrders, mismatched, lateClaims, settled, settledTwice };
}

// ---- Main ---------------------------------------------------------------------------------

async function main(): Promise<void> {
  unpin();
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) throw new Error('DATABASE_URL must be set; run `npm run chaos` (bench/run.sh) instead');
  const dbName = `${new URL(baseUrl).pathname.slice(1)}_chaos`;
  const dbUrl = withDatabase(baseUrl, dbName);
  await runToCompletion('ensure-db (chaos database)', ['--import', 'tsx', 'scripts/ensure-db.ts', dbUrl, '--recreate'], process.env);
  await runToCompletion('migrate (chaos database)', ['--import', 'tsx', 'scripts/migrate.ts'], { ...process.env, DATABASE_URL: dbUrl });
  const redisPort = await freePort();
  const redis = new RedisServer(redisPort, mkdtempSync(path.join(os.tmpdir(), 'escrow-chaos-redis-')));
  await redis.start();
  ownRedis = redis;
  const redisUrl = `redis://${HOST}:${redisPort}/0`;
  process.env.DATABASE_URL = withAppName(dbUrl, DRIVER_APP);
  process.env.REDIS_URL = redisUrl;
  process.env.QUEUE_PREFIX = 'escrow-chaos';
  const sandboxSecret = `chaos-${randomBytes(16).toString('hex')}`;

  const { db } = await import('../shared/db.js');
  const { signLink } = await import('../shared/escrows/links.js');
  const { sandboxSignature } = await import('../shared/payments/gateways/sandbox.js');
  signFields = signLink;
  signCallback = (raw) => sandboxSignature(raw, sandboxSecret);
  // An SMTP sink on loopback for the mail queue (the service's e-mails are part of the run).
  const { MailSink } = await import('../test/helpers/smtp.js');
  const { config } = await import('../shared/config.js');
  const mailSink = new MailSink();
  await mailSink.start();
  mails = mailSink.messages;
  const { insertKey } = await import('../shared/auth/api-keys.js');
  const env: NodeJS.ProcessEnv = { ...process.env, SMTP_URL: config.smtpUrl, NODE_ENV: 'development', SANDBOX_MODE: '1', SANDBOX_GATEWAY_SECRET: sandboxSecret, LOG_LEVEL: 'warn' };

  // Seed: users (verified, active) with keys; two staff; buyers of the early-callback flows;
  // the sandbox gateway and a manual bank-transfer gateway.
  const RACERS = 4;
  const now = new Date();
  const rows = Array.from({ length: USERS + 2 + RACERS }, (_, i) => ({
    email: `chaos${i}@chaos.test`,
    username: `chaos_u${i}`,
    full_name: `Chaos ${i}`,
    kyc_status: 'verified',
    email_verified_at: now,
    role: i === USERS || i === USERS + 1 ? 'admin' : 'user',
    status: 'active',
    created_at: now,
    updated_at: now,
  }));
  const ids = (await db('users').insert(rows).returning<{ id: string }[]>('id')).map((r) => r.id);
  const everyone: Actor[] = [];
  for (const id of ids) everyone.push({ id, key: (await insertKey(db, id, 'chaos', HOST)).plaintext });
  const actors = everyone.slice(0, USERS);
  const admin = everyone[USERS]!;
  const edge: Edge = { staff: everyone[USERS + 1]!, racers: everyone.slice(USERS + 2), db };
  await db('payment_gateways').insert({
    provider: 'sandbox', display_name: 'Sandbox', supported_methods: ['qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto'],
    is_manual: false, enabled: true, in_maintenance: false, config: null, fee_percent: '0.7', fee_fixed: 0, sort_order: 0, created_at: now, updated_at: now,
  }).onConflict('provider').merge();
  await db('payment_gateways').insert({
    provider: MANUAL_GATEWAY, display_name: 'Transfer BCA (manual)', supported_methods: ['bank_transfer'], is_manual: true, enabled: true, in_maintenance: false,
    config: JSON.stringify({ bank_name: 'BCA', account_number: '8800112233', account_holder: 'PT Chaos Escrow' }), fee_percent: '0', fee_fixed: 0, sort_order: 1, created_at: now, updated_at: now,
  }).onConflict('provider').merge();

  // Processes.
  const ports = [await freePort(), await freePort()];
  apiBases = ports.map((p) => `http://${HOST}:${p}`);
  const apiEnv = (p: number): NodeJS.ProcessEnv => ({
    ...env,
    DATABASE_URL: withAppName(dbUrl, `chaos-api-${ports.indexOf(p) + 1}`),
    PORT: String(p),
    PUBLIC_BASE_URL: `http://${HOST}:${ports[0]}`,
    PUBLIC_LINK_HOSTS: `${HOST}`,
  });
  const workerEnv = (app: string): NodeJS.ProcessEnv => ({ ...env, DATABASE_URL: withAppName(dbUrl, app) });
  const apis: Child[] = ports.map((p, i) => startChild(`API ${i + 1}`, ['dist/api/server.js'], apiEnv(p), { pin: false, stdout: PROC_LOG }));
  const workers: Child[] = [0, 1].map((i) => startChild(`worker ${i + 1}`, ['dist/workers/index.js'], workerEnv(workerApp(i, 0)), { pin: false, stdout: PROC_LOG }));
  // Patient: on 2 shared cores an API copy may take many seconds to boot; one that exits says why.
  const ready = (i: number) => waitFor(`${apiBases[i]}/readyz`, apis[i]!, 90_000);
  await Promise.all(apis.map((_, i) => ready(i)));
  for (const a of actors) {
    const rot = await call('POST', '/v1/partner/link-secret/rotate', { key: a.key, body: {} });
    a.secret = String(dataOf(rot).link_secret);
  }
  console.log(`chaos: ${actors.length} users, 2 API copies (${apiBases.join(', ')}), 2 workers, Redis on ${redisPort}, database ${dbName}; log ${LOG_FILE}`);

  if (OVERLOAD) {
    await overload(actors, admin, db);
  } else {
    await chaosRun(actors, admin, edge, { apis, workers, apiEnv, workerEnv, ports, redis, db, ready });
  }
  for (const c of [...apis, ...workers]) await stopChild(c, 35_000);
  const { redis: client } = await import('../shared/redis.js');
  client.disconnect();
  redis.stop();
  await mailSink.stop();
  await db.destroy();
}

interface Faults {
  apis: Child[];
  workers: Child[];
  apiEnv: (p: number) => NodeJS.ProcessEnv;
  /** A worker copy's environment; `app` names its Postgres connections. */
  workerEnv: (app: string) => NodeJS.ProcessEnv;
  ports: number[];
  redis: RedisServer;
  db: Knex;
  ready: (copy: number) => Promise<void>;
}

/** The faults of a run; each planned one must have happened, or the run fails. */
interface FaultCounts {
  workerKills: number;
  apiKills: number;
  redisRestarts: number;
  /** Tries of the Postgres cut (every ~200 ms until a backend in a transaction was there to cut). */
  pgCutAttempts: number;
  terminatedBackends: number;
  /** Of those, backends inside a transaction of several statements (idle in it, or past its first statement). */
  terminatedMidTx: number;
  pgCutAt: number;
  /** Payout jobs whose worker copy was SIGKILLed while it ran them. */
  stalledPayouts: { withdrawal: string; killedAt: number; attempts: number; takenAt?: number }[];
}

/**
 * The longest a payout waited to be taken (from its approval, or from the last time a worker
 * claimed it: a claim of a run that then died starts the wait again) and a due callback
 * waited to be processed, sampled every 250 ms.
 */
interface Waits {
  payout: { s: number; id: string };
  callback: { s: number; id: string };
  /** From the end of the workload (the last kill) until nothing was left to drain. */
  drainS: number;
}

async function chaosRun(actors: Actor[], admin: Actor, edge: Edge, f: Faults): Promise<void> {
  const started = Date.now();
  let running = true;
  const counts: FaultCounts = { workerKills: 0, apiKills: 0, redisRestarts: 0, pgCutAttempts: 0, terminatedBackends: 0, terminatedMidTx: 0, pgCutAt: 0, stalledPayouts: [] };
  const cutWindows: { api: number; from: number; to: number }[] = [];

  // Worker copies are killed by the 2 s loop and by the stalled-payout fault: one kill at a
  // time per slot. Each start has its own application_name (slot and start number).
  const generation = [0, 0];
  const killedAt = new Map<string, number>();
  const slotQueue: Promise<unknown>[] = [Promise.resolve(), Promise.resolve()];
  /** SIGKILLs the copy in `slot` (only if it is still the start named `onlyApp`), restarts it, and resolves with the kill time. */
  const killWorker = (slot: number, onlyApp?: string): Promise<number> => {
    const run = slotQueue[slot]!.then(async () => {
      const app = workerApp(slot, generation[slot]!);
      if (onlyApp !== undefined && onlyApp !== app) return killedAt.get(onlyApp) ?? Date.now();
      const at = Date.now();
      killedAt.set(app, at);
      f.workers[slot]!.proc.kill('SIGKILL');
      await f.workers[slot]!.exited;
      generation[slot]! += 1;
      f.workers[slot] = startChild(`worker ${slot + 1}`, ['dist/workers/index.js'], f.workerEnv(workerApp(slot, generation[slot]!)), { pin: false, stdout: PROC_LOG });
      counts.workerKills += 1;
      return at;
    });
    slotQueue[slot] = run.catch(() => undefined);
    return run;
  };
  // Worker killer: every 2 s one copy, SIGKILL, restarted at once, and up before the next
  // kill (its outbox relay connects at once): on 2 busy cores a copy may take seconds to
  // boot, and killing copies that never started would test nothing.
  const workerLoop = (async () => {
    let k = 0;
    while (running) {
      await sleep(2000);
      if (!running) break;
      const slot = k % 2;
      k += 1;
      await killWorker(slot);
      const app = workerApp(slot, generation[slot]!);
      for (const until = Date.now() + 30_000; running && Date.now() < until; ) {
        const up = await f.db.raw<{ rows: unknown[] }>('SELECT 1 FROM pg_stat_activity WHERE application_name = ?', [app]).catch(() => ({ rows: [] }));
        if (up.rows.length > 0) break;
        await sleep(100);
      }
    }
  })();
  // API killer: every 15 s one copy, SIGKILL, restarted; requests to it are cut and retried.
  const apiLoop = (async () => {
    let k = 0;
    while (running) {
      await sleep(15_000);
      if (!running) break;
      const i = k % 2;
      k += 1;
      down.add(i);
      const from = Date.now();
      f.apis[i]!.proc.kill('SIGKILL');
      await f.apis[i]!.exited;
      f.apis[i] = startChild(`API ${i + 1}`, ['dist/api/server.js'], f.apiEnv(f.ports[i]!), { pin: false, stdout: PROC_LOG });
      await f.ready(i);
      down.delete(i);
      cutWindows.push({ api: i, from, to: Date.now() });
      counts.apiKills += 1;
    }
  })();
  // Redis once, at 10 s.
  const redisOnce = (async () => {
    await sleep(10_000);
    if (running) {
      await f.redis.restart();
      counts.redisRestarts += 1;
      console.log('chaos: Redis restarted');
    }
  })();
  // Postgres from 20 s: every busy backend of the service's processes is terminated at once,
  // tried every 200 ms until at least one of them is inside a transaction of several
  // statements (idle in it, or past its first statement), so a cut always lands mid-transaction.
  const pgCut = (async () => {
    await sleep(20_000);
    while (running && counts.terminatedMidTx === 0) {
      counts.pgCutAttempts += 1;
      try {
        const r = await f.db.raw<{ rows: { app: string; mid: boolean; ok: boolean }[] }>(
          `WITH busy AS (
             SELECT pid, application_name AS app, (state = 'idle in transaction' OR xact_start < query_start) AS mid
               FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
                AND application_name LIKE 'chaos-%' AND application_name <> ?
                AND state IN ('active', 'idle in transaction') AND xact_start IS NOT NULL)
           SELECT app, mid, pg_terminate_backend(pid) AS ok FROM busy WHERE EXISTS (SELECT 1 FROM busy WHERE mid)`,
          [DRIVER_APP],
        );
        const cut = r.rows.filter((x) => x.ok);
        if (cut.length > 0) {
          counts.pgCutAt = Date.now();
          counts.terminatedBackends = cut.length;
          counts.terminatedMidTx = cut.filter((x) => x.mid).length;
          console.log(`chaos: terminated ${cut.length} busy Postgres backends (${counts.terminatedMidTx} inside a transaction) at try ${counts.pgCutAttempts}: ${cut.map((x) => x.app).join(', ')}`);
        }
      } catch (err) {
        console.error(`chaos: Postgres cut try failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (counts.terminatedMidTx === 0) await sleep(200);
    }
  })();

  // Waits: the oldest approved payout not yet paid and the oldest due callback not yet
  // processed, sampled every 250 ms until the drain ends.
  const waits: Waits = { payout: { s: 0, id: '' }, callback: { s: 0, id: '' }, drainS: 0 };
  let sampling = true;
  const progress = new Map<string, { attempts: number; since: number }>();
  const sampler = (async () => {
    while (sampling) {
      try {
        const at = Date.now();
        const open = await f.db.raw<{ rows: { id: string; attempts: number; approved: Date }[] }>(
          `SELECT id::text AS id, payout_attempts AS attempts, approved_at AS approved FROM withdrawals WHERE status IN ('approved', 'processing')`,
        );
        const openIds = new Map(open.rows.map((w) => [w.id, w.attempts]));
        for (const w of open.rows) {
          const seen = progress.get(w.id);
          if (!seen) progress.set(w.id, { attempts: w.attempts, since: w.approved.getTime() });
          else if (w.attempts > seen.attempts) Object.assign(seen, { attempts: w.attempts, since: at });
          const s = (at - progress.get(w.id)!.since) / 1000;
          if (s > waits.payout.s) Object.assign(waits.payout, { s, id: w.id });
        }
        // A killed payout job is taken once another claim is made (or the withdrawal is done).
        for (const x of counts.stalledPayouts) {
          if (x.takenAt === undefined && at > x.killedAt && (openIds.get(x.withdrawal) ?? Number.POSITIVE_INFINITY) > x.attempts) x.takenAt = at;
        }
        const cb = await f.db.raw<{ rows: { id: string; s: number }[] }>(
          `SELECT id::text AS id, extract(epoch FROM now() - next_attempt_at)::float8 AS s
             FROM payment_callbacks WHERE processed_at IS NULL AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT 1`,
        );
        for (const row of cb.rows) if (row.s > waits.callback.s) Object.assign(waits.callback, { s: row.s, id: row.id });
      } catch {
        /* a sample lost to the Postgres cut: the next one */
      }
      await sleep(250);
    }
  })();

  /**
   * A payout job whose worker dies while it runs it: right after an approval the driver
   * locks the withdrawal's row, the worker that takes the payout job blocks on it in its
   * claim, the driver finds that backend among those its lock blocks, SIGKILLs the worker
   * copy the backend names, and lets go. BullMQ then holds the job as active under a dead
   * worker until another worker takes it over.
   */
  const stalls: Promise<void>[] = [];
  const stallPayout = async (withdrawalId: string): Promise<void> => {
    const trx = await f.db.transaction();
    trx.executionPromise.catch(() => undefined);
    try {
      const r = (await trx.raw<{ rows: { status: string; attempts: number; me: number }[] }>('SELECT status, payout_attempts AS attempts, pg_backend_pid() AS me FROM withdrawals WHERE id = ? FOR UPDATE', [withdrawalId])).rows[0];
      if (r?.status !== 'approved') return; // the payout worker was quicker
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline) {
        const blocked = await f.db.raw<{ rows: { app: string }[] }>('SELECT application_name AS app FROM pg_stat_activity WHERE ?::int = ANY(pg_blocking_pids(pid))', [r.me]);
        const app = blocked.rows.map((x) => x.app).find((a) => a.startsWith('chaos-worker-'));
        if (app) {
          const slot = Number(/^chaos-worker-(\d+)-/.exec(app)![1]) - 1;
          counts.stalledPayouts.push({ withdrawal: withdrawalId, killedAt: await killWorker(slot, app), attempts: r.attempts });
          return;
        }
        await sleep(50);
      }
      console.error(`chaos: no worker took the payout of ${withdrawalId} within 15 s of its approval`);
    } finally {
      await trx.rollback().catch(() => undefined);
    }
  };
  // Every fourth approval, until 3 payouts have stalled (a try finds the payout done when the worker was quicker).
  let approvals = 0;
  const onApproved = (id: string) => {
    approvals += 1;
    if (approvals % 4 === 1 && counts.stalledPayouts.length < 3) stalls.push(stallPayout(id));
  };

  // Escrow flows and payment-service orders interleaved (one order per six escrow flows);
  // of the escrow flows, one in 25 each a late manual transfer, a short or long payment, an early callback.
  const ORDERS = Math.floor(DEALS / 6);
  const flow = (n: number): Promise<void> => {
    if (n % 7 === 6) return serviceOrder(n, actors, admin);
    if (n % 25 === 3) return lateManualTransfer(n, actors, edge);
    if (n % 25 === 11) return wrongAmount(n, actors, edge);
    if (n % 25 === 19) return earlyCallback(n, actors, edge, Math.floor(n / 25));
    return deal(n, actors, admin);
  };
  await pool(DEALS + ORDERS, CONCURRENCY, flow);
  await withdrawals(actors, admin, onApproved);
  await Promise.all(stalls);
  running = false;
  await Promise.all([workerLoop, apiLoop, redisOnce, pgCut]);
  const workloadSeconds = (Date.now() - started) / 1000;
  console.log(`chaos: workload done in ${workloadSeconds.toFixed(0)} s: ${entries.length} requests; draining`);

  // Drain: callbacks processed, outbox completed, approved withdrawals paid, jobs idle.
  const drainStart = Date.now();
  for (;;) {
    const r = await f.db.raw<{ rows: { cb: number; ob: number; wd: number }[] }>(
      `SELECT (SELECT count(*)::int FROM payment_callbacks WHERE processed_at IS NULL) AS cb,
              (SELECT count(*)::int FROM outbox WHERE completed_at IS NULL AND dead_at IS NULL AND available_at <= now()) AS ob,
              (SELECT count(*)::int FROM withdrawals WHERE status IN ('approved', 'processing')) AS wd`,
    );
    const s = r.rows[0]!;
    if (s.cb === 0 && s.ob === 0 && s.wd === 0) break;
    if (Date.now() - drainStart > 300_000) {
      console.error(`chaos: not drained after 5 minutes: ${JSON.stringify(s)}`);
      break;
    }
    await sleep(500);
  }
  waits.drainS = (Date.now() - drainStart) / 1000;
  sampling = false;
  await sampler;
  log.end();
  await verify(f.db, counts, waits, cutWindows, workloadSeconds);
}

async function verify(db: Knex, counts: FaultCounts, waits: Waits, cutWindows: { api: number; from: number; to: number }[], seconds: number): Promise<void> {
  const problems: string[] = [];
  // Every planned fault happened: a run whose fault found nothing to hit tested nothing.
  const planned: [string, number][] = [
    ['worker SIGKILLs', counts.workerKills],
    ['API kills', counts.apiKills],
    ['Redis restarts', counts.redisRestarts],
    ['Postgres backends terminated inside a transaction', counts.terminatedMidTx],
    ['payout jobs whose worker was SIGKILLed while running them', counts.stalledPayouts.length],
  ];
  for (const [what, n] of planned) if (n === 0) problems.push(`planned fault did not happen: ${what} 0`);
  // Stalled jobs: from the kill of the worker that ran a payout until another worker took it
  // (sampled), and until it was paid (a second kill of the run that took it adds a second wait).
  const stalledPaid = new Map(
    (await db('withdrawals').whereIn('id', counts.stalledPayouts.map((x) => x.withdrawal)).select<{ id: string; paid_at: Date | null }[]>('id', 'paid_at')).map((r) => [r.id, r.paid_at]),
  );
  const stallWaits = counts.stalledPayouts.map((x) => {
    const paid = stalledPaid.get(x.withdrawal);
    return {
      id: x.withdrawal,
      s: x.takenAt === undefined ? Number.POSITIVE_INFINITY : (x.takenAt - x.killedAt) / 1000,
      paidS: paid ? (paid.getTime() - x.killedAt) / 1000 : Number.POSITIVE_INFINITY,
    };
  });
  const stallMax = Math.max(0, ...stallWaits.map((x) => x.s));
  const longestWait = Math.max(stallMax, waits.payout.s, waits.callback.s);
  if (longestWait >= STALL_LIMIT_S) {
    problems.push(
      `a job waited ${longestWait.toFixed(1)} s (limit ${STALL_LIMIT_S} s): killed payouts, kill to taken ${stallWaits.map((x) => `${x.id} ${x.s.toFixed(1)} s`).join(', ')}; ` +
        `longest a payout waited to be taken ${waits.payout.id} ${waits.payout.s.toFixed(1)} s; oldest due callback ${waits.callback.id} ${waits.callback.s.toFixed(1)} s`,
    );
  }
  const exp = expectedFromLog(entries);
  const { checkLedger } = await import('../shared/ledger/index.js');
  const ledger = await checkLedger(db);
  if (ledger.length > 0) problems.push(`checkLedger: ${ledger.slice(0, 3).map((v) => `${v.rule}: ${v.detail}`).join('; ')}`);
  // Escrows: the DB status equals the log's, except "paid" seen only through callbacks.
  const dbEscrows = new Map((await db('escrows').select<{ id: string; status: string }[]>('id', 'status')).map((r) => [r.id, r.status]));
  let escrowDiff = 0;
  for (const [id, x] of exp.escrows) {
    const actual = dbEscrows.get(id);
    if (actual !== x.status) {
      escrowDiff += 1;
      if (escrowDiff <= 5) problems.push(`escrow ${id}: log says ${x.status}, database ${actual ?? 'missing'}`);
    }
  }
  if (dbEscrows.size !== exp.escrows.size) problems.push(`escrows: ${dbEscrows.size} in the database, ${exp.escrows.size} created in the log`);
  // Withdrawals: approved ones end paid (the payout worker), rejected stay rejected.
  const dbW = new Map((await db('withdrawals').select<{ id: string; status: string }[]>('id', 'status')).map((r) => [r.id, r.status]));
  let wDiff = 0;
  for (const [id, w] of exp.withdrawals) {
    const want = w.status === 'approved' ? 'paid' : w.status;
    if (dbW.get(id) !== want) {
      wDiff += 1;
      if (wDiff <= 5) problems.push(`withdrawal ${id}: log implies ${want}, database ${dbW.get(id) ?? 'missing'}`);
    }
  }
  if (dbW.size !== exp.withdrawals.size) problems.push(`withdrawals: ${dbW.size} in the database, ${exp.withdrawals.size} in the log`);
  // Payment-service orders.
  const dbO = new Map((await db('service_orders').select<{ id: string; status: string }[]>('id', 'status')).map((r) => [r.id, r.status]));
  let oDiff = 0;
  for (const [id, o] of exp.orders) {
    if (dbO.get(id) !== o.status) {
      oDiff += 1;
      if (oDiff <= 5) problems.push(`order ${id}: log says ${o.status}, database ${dbO.get(id) ?? 'missing'}`);
    }
  }
  if (dbO.size !== exp.orders.size) problems.push(`orders: ${dbO.size} in the database, ${exp.orders.size} created in the log`);
  // Balances.
  const dbBal = new Map((await db('users').select<{ id: string; balance: number }[]>('id', 'balance')).map((r) => [r.id, Number(r.balance)]));
  let balDiff = 0;
  for (const [id, actual] of dbBal) {
    const want = exp.balances.get(id) ?? 0;
    if (want !== actual) {
      balDiff += 1;
      if (balDiff <= 5) problems.push(`balance of ${id}: log implies ${want}, database ${actual}`);
    }
  }
  // Every paid callback credited once.
  const credited = await db.raw<{ rows: { orders: number; paid: number; entries: number; dup: number }[] }>(
    `SELECT count(*)::int AS orders,
            count(*) FILTER (WHERE p.status = 'paid')::int AS paid,
            (SELECT count(*)::int FROM journal_entries WHERE kind IN ('escrow_payment', 'payment_credit')) AS entries,
            (SELECT count(*)::int FROM (SELECT ref_id FROM journal_entries WHERE kind = 'escrow_payment' GROUP BY ref_id HAVING count(*) > 1) d) AS dup
       FROM payments p WHERE p.gateway_order_id = ANY(?)`,
    [[...exp.paidOrders]],
  );
  const c = credited.rows[0]!;
  if (c.paid !== exp.paidOrders.size) problems.push(`paid callbacks: ${exp.paidOrders.size} orders reported paid, ${c.paid} payments paid`);
  if (c.dup > 0) problems.push(`${c.dup} escrows credited twice`);
  // Money at the edges: every flagged, late or settled payment as the log says.
  const edgeIds = [...new Set([...exp.mismatched.keys(), ...exp.lateClaims, ...exp.settled.keys()])];
  const dbEdge = new Map(
    (await db('payments').whereIn('id', edgeIds).select<{ id: string; status: string; flag: string | null; received_amount: number | null }[]>('id', 'status', 'flag', 'received_amount')).map((r) => [r.id, r]),
  );
  let edgeDiff = 0;
  for (const id of edgeIds) {
    const s = exp.settled.get(id);
    const want = s
      ? { status: 'paid', flag: s.how === 'credit' ? 'credited_to_buyer' : 'returned_outside', received: s.amount }
      : exp.lateClaims.has(id)
        ? { status: 'awaiting_confirmation', flag: 'late_claim', received: null }
        : { status: 'pending', flag: 'amount_mismatch', received: null };
    const got = dbEdge.get(id);
    if (!got || got.status !== want.status || got.flag !== want.flag || (got.received_amount === null ? null : Number(got.received_amount)) !== want.received) {
      edgeDiff += 1;
      if (edgeDiff <= 5) problems.push(`payment ${id}: log implies ${JSON.stringify(want)}, database ${JSON.stringify(got ?? 'missing')}`);
    }
  }
  for (const id of exp.settledTwice.slice(0, 5)) problems.push(`payment ${id}: a second staff credit or return was accepted`);
  const edgeCount = (how: 'credit' | 'mark-returned', late: boolean) => [...exp.settled].filter(([id, x]) => x.how === how && exp.lateClaims.has(id) === late).length;
  const edgeFigures = {
    lateCredited: edgeCount('credit', true),
    mismatchCredited: edgeCount('credit', false),
    mismatchReturned: edgeCount('mark-returned', false),
  };
  for (const [what, n] of [
    ['late manual transfers credited by staff', edgeFigures.lateCredited],
    ['short or long payments credited by staff', edgeFigures.mismatchCredited],
    ['short or long payments marked returned by staff', edgeFigures.mismatchReturned],
    ['callbacks sent before their pay answered', racing.beforeCommit],
  ] as const) {
    if (n === 0) problems.push(`planned case did not happen: ${what} 0`);
  }
  // Outbox and jobs.
  const ob = await db.raw<{ rows: { open: number; dead: number; unexplained: number }[] }>(
    `SELECT count(*) FILTER (WHERE completed_at IS NULL AND dead_at IS NULL AND available_at <= now())::int AS open,
            count(*) FILTER (WHERE dead_at IS NOT NULL)::int AS dead,
            count(*) FILTER (WHERE dead_at IS NOT NULL AND coalesce(dead_reason, '') = '')::int AS unexplained FROM outbox`,
  );
  const o = ob.rows[0]!;
  if (o.open > 0) problems.push(`${o.open} due outbox rows not delivered`);
  if (o.unexplained > 0) problems.push(`${o.unexplained} dead outbox rows without a reason`);
  const failedCallbacks = await db('payment_callbacks').whereNull('processed_at').count<{ n: string }[]>('* as n');
  if (Number(failedCallbacks[0]!.n) > 0) problems.push(`${failedCallbacks[0]!.n} callbacks never processed`);
  // Jobs: none stuck, none failed without a reason.
  const { QUEUE_NAMES, getQueue, closeQueues } = await import('../shared/queues.js');
  let jobsFailed = 0;
  let jobsStuck = 0;
  for (const q of QUEUE_NAMES) {
    const queue = getQueue(q);
    const c = await queue.getJobCounts('waiting', 'active', 'failed');
    jobsStuck += (c.waiting ?? 0) + (c.active ?? 0);
    jobsFailed += c.failed ?? 0;
    const noReason = (await queue.getFailed(0, 10_000)).filter((j) => !j.failedReason);
    if (noReason.length > 0) problems.push(`${noReason.length} failed ${q} jobs without a reason`);
  }
  if (jobsStuck > 0) problems.push(`${jobsStuck} jobs still waiting or active after the drain`);
  await closeQueues();
  // The public profile counters (triggers deferred to commit) against a recount of the rows.
  const profiles = await db.raw<{ rows: { off: number }[] }>(`
    SELECT count(*)::int AS off FROM public_profiles p
    WHERE escrows_count <> (SELECT count(*) FROM escrows e WHERE e.buyer_id = p.user_id OR e.seller_id = p.user_id)
       OR completed_count <> (SELECT count(*) FROM escrows e WHERE (e.buyer_id = p.user_id OR e.seller_id = p.user_id) AND e.status = 'released')
       OR ratings_received <> (SELECT count(*) FROM ratings r WHERE r.ratee_id = p.user_id)`);
  const profilesOff = profiles.rows[0]?.off ?? 0;
  if (profilesOff > 0) problems.push(`${profilesOff} public profiles whose counters differ from a recount`);
  // 5xx only on cut connections: the request's own (API killed: no answer at all), or its
  // database connection (answers given within 3 s of pg_terminate_backend).
  // A request whose connection was terminated may only find out later (a transaction that
  // waited on a lock): the process log names its request id with the connection error.
  const cutRequests = new Set<string>();
  for (const line of (await readFile(path.join(RUN_DIR, 'processes.log'), 'utf8')).split('\n')) {
    if (!line.includes('"level":50')) continue;
    try {
      const j = JSON.parse(line) as { request_id?: string; err?: { message?: string } };
      if (j.request_id && /terminating connection|Connection terminated|connection error|not queryable/i.test(j.err?.message ?? '')) cutRequests.add(j.request_id);
    } catch {
      /* not a log line */
    }
  }
  const requestIdOf = (e: Logged) => ((e.answer as { error?: { request_id?: string } } | null)?.error?.request_id ?? '');
  // In flight when the backends were terminated (sent before, answered after), or sent within 3 s after (a pooled connection found dead).
  const pgCut = (e: Logged) =>
    (counts.pgCutAt > 0 && e.at <= counts.pgCutAt + 3000 && (e.done ?? e.at) >= counts.pgCutAt - 1000) || cutRequests.has(requestIdOf(e));
  const all5xx = entries.filter((e) => typeof e.status === 'number' && e.status >= 500);
  const dbCut5xx = all5xx.filter(pgCut);
  const fiveXX = all5xx.filter((e) => !pgCut(e));
  for (const e of fiveXX.slice(0, 5)) problems.push(`5xx: ${e.method} ${e.path} answered ${String(e.status)} ${JSON.stringify(e.answer).slice(0, 160)}`);
  const cut = entries.filter((e) => e.status === 'cut').length;
  const unavailable = fiveXX.filter((e) => e.status === 503).length;

  const ops = entries.length;
  console.log('');
  console.log(`chaos: ${ops} requests (${exp.escrows.size} escrows, ${exp.orders.size} payment-service orders, ${exp.withdrawals.size} withdrawals) in ${seconds.toFixed(0)} s`);
  console.log(
    `chaos: worker SIGKILLs ${counts.workerKills} (${counts.stalledPayouts.length} of them while the worker ran a payout job), API kills ${counts.apiKills}, Redis restarts ${counts.redisRestarts}, ` +
      `Postgres backends terminated ${counts.terminatedBackends}, ${counts.terminatedMidTx} of them inside a transaction (cut at try ${counts.pgCutAttempts})`,
  );
  console.log(
    `chaos: stalled-job wait: ${longestWait.toFixed(1)} s at most (limit ${STALL_LIMIT_S} s); payouts whose worker was killed, kill to taken by another worker: ${stallWaits.map((x) => `${x.s.toFixed(1)} s`).join(', ') || 'none'} ` +
      `(to paid: ${stallWaits.map((x) => `${x.paidS.toFixed(1)} s`).join(', ')}); longest a payout waited to be taken ${waits.payout.s.toFixed(1)} s, a due callback to be processed ${waits.callback.s.toFixed(1)} s; drained ${waits.drainS.toFixed(1)} s after the workload`,
  );
  console.log(
    `chaos: requests whose connection was cut (API copy killed) ${cut}, then sent again; 5xx answers to requests whose Postgres connection was cut ${dbCut5xx.length}; ` +
      `other 5xx ${fiveXX.length} (of which 503 ${unavailable}); API down windows ${cutWindows.length}`,
  );
  console.log(`chaos: payment-service orders ${exp.orders.size} (differences ${oDiff}; ${[...exp.orders.values()].filter((o) => o.status === 'delivered').length} delivered, ${[...exp.orders.values()].filter((o) => o.status === 'refunded').length} refunded)`);
  console.log(`chaos: escrows ${exp.escrows.size} (differences ${escrowDiff}), withdrawals ${exp.withdrawals.size} (differences ${wDiff}), users with a balance difference ${balDiff}, paid orders ${exp.paidOrders.size} (credited ${c.paid}, doubled ${c.dup}), outbox open ${o.open} dead ${o.dead}; jobs failed ${jobsFailed} (each with its reason), stuck ${jobsStuck}`);
  console.log(
    `chaos: money at the edges: late manual transfers credited ${edgeFigures.lateCredited} (late claims ${exp.lateClaims.size}), short/long payments ${exp.mismatched.size} ` +
      `(credited ${edgeFigures.mismatchCredited}, marked returned ${edgeFigures.mismatchReturned}), second staff moves accepted ${exp.settledTwice.length}, ` +
      `callbacks sent before their pay answered ${racing.beforeCommit} of ${racing.tried}; payment differences ${edgeDiff}`,
  );
  console.log(`chaos: public profiles whose counters differ from a recount ${profilesOff}`);
  console.log(`chaos: e-mails received by the SMTP sink ${mails.length}`);
  console.log(`chaos: request log ${LOG_FILE}; process logs ${path.join(RUN_DIR, 'processes.log')}`);
  if (problems.length > 0) {
    for (const p of problems) console.error(`chaos: DIFFERENCE: ${p}`);
    process.exitCode = 1;
  } else console.log('chaos: differences found: 0');
}

async function overload(actors: Actor[], _admin: Actor, db: Knex): Promise<void> {
  // Per user: AUTH_RATE_LIMIT_PER_MINUTE (300) shared over every authenticated route; 10x in a burst.
  const user = actors[0]!;
  const perUser = Number(process.env.AUTH_RATE_LIMIT_PER_MINUTE ?? 300) * 10;
  const answers: Answer[] = [];
  await pool(perUser, 50, async () => {
    answers.push(await call('GET', '/v1/user/balance', { key: user.key }));
  });
  // Writes under the same overload: every accepted escrow must exist.
  const seller = actors[1]!;
  const accepted: string[] = [];
  await pool(400, 50, async (n) => {
    const fields: Record<string, string> = { seller: seller.id, item: `Overload ${n}`, category: 'goods', ref: `ovl-${n}-${randomBytes(3).toString('hex')}`, v: '1', expires: String(Math.floor(Date.now() / 1000) + 3600) };
    const a = await call('POST', '/api/escrows/from-link', { key: actors[2]!.key, idem: true, body: { ...fields, sig: signFields(seller.secret!, fields), amount: 100_000 } });
    answers.push(a);
    if (a.status === 201) accepted.push(String(dataOf(a).id));
  });
  // Per IP: sign-in (30 per minute per address), 10x.
  await pool(300, 30, async () => {
    answers.push(await call('POST', '/v1/auth/login', { body: { email: 'nobody@chaos.test', password: 'wrong-password-1' } }));
  });
  const by = new Map<number, number>();
  for (const a of answers) by.set(a.status, (by.get(a.status) ?? 0) + 1);
  const problems: string[] = [];
  const noRetry = answers.filter((a) => a.status === 429 && !a.headers.get('retry-after')).length;
  if (noRetry > 0) problems.push(`${noRetry} answers 429 without Retry-After`);
  const fives = answers.filter((a) => a.status >= 500).length;
  if (fives > 0) problems.push(`${fives} answers 5xx`);
  const found = accepted.length === 0 ? 0 : Number(((await db('escrows').whereIn('id', accepted).count<{ n: string }[]>('* as n'))[0]!).n);
  if (found !== accepted.length) problems.push(`accepted escrows: ${accepted.length}, in the database ${found}`);
  console.log(`chaos overload: ${answers.length} requests; answers ${[...by].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`).join(', ')}; accepted writes ${accepted.length}, found ${found}`);
  if (problems.length > 0) {
    for (const p of problems) console.error(`chaos overload: DIFFERENCE: ${p}`);
    process.exitCode = 1;
  } else console.log('chaos overload: differences found: 0');
}

stopChildrenOnSignals('chaos');
// An exception outside main() (a socket error) must not leave orphans: a worker left behind
// would keep draining the next run's database (same name) into its own Redis.
let ownRedis = null as RedisServer | null;
process.on('uncaughtException', (err) => {
  console.error(`chaos: uncaught ${err.stack ?? err.message}`);
  ownRedis?.stop();
  void stopAll().finally(() => process.exit(1));
});
try {
  await main();
} catch (err) {
  console.error(`chaos failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
} finally {
  await stopAll();
  ownRedis?.stop();
  void ROOT;
}
