/**
 * The chaos driver's HTTP client and its request log: every request and its answer (or
 * `cut`) is appended to a JSON-lines file and kept in memory for the expected state. A
 * request that loses its connection is sent again to the other API copy with the same
 * Idempotency-Key, as a client would. Also the run's files and the service's signers.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync, openSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const RUN_DIR = mkdtempSync(path.join(os.tmpdir(), 'escrow-chaos-'));
export const LOG_FILE = path.join(RUN_DIR, 'requests.jsonl');
export const PROCESS_LOG_FILE = path.join(RUN_DIR, 'processes.log');
/** The processes' own logs (pino JSON lines), appended across restarts. */
export const PROC_LOG = openSync(PROCESS_LOG_FILE, 'a');

export interface Logged {
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

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

export interface Actor {
  id: string;
  key: string;
  secret?: string;
}

const log = createWriteStream(LOG_FILE);
/** Every try of every request, in the order the answers came. */
export const entries: Logged[] = [];
let seq = 0;

/** The API copies' base URLs, and the copies currently down (killed by the chaos loop). */
export const net = { bases: [] as string[], down: new Set<number>() };

function record(e: Logged): void {
  e.done = Date.now();
  entries.push(e);
  log.write(`${JSON.stringify(e)}\n`);
}

/** Ends the log file (after the drain). */
export const endLog = (): void => void log.end();

/**
 * One logical request: sent to a live API copy; on a cut connection (or a 503 from a copy
 * shutting down) sent again, same Idempotency-Key, to the other copy, up to 12 tries. A
 * resend after a cut that is answered 429 waits `Retry-After` and is sent again: the first
 * try's outcome is unknown until a resend is answered (a staff deliver whose first try
 * committed before the cut and whose resend hit the staff limit was logged as never done).
 * Each try is logged.
 */
export async function call(
  method: string,
  urlPath: string,
  opts: { key?: string; as?: string; body?: unknown; idem?: boolean; idemKey?: string; headers?: Record<string, string>; raw?: string } = {},
): Promise<Answer> {
  // `idemKey`: the caller's own key, kept across its own retries (enterprise.ts).
  const idemKey = opts.idemKey ?? (opts.idem ? randomUUID() : null);
  const bases = net.bases;
  let copy = Math.floor(Math.random() * bases.length);
  let cut = false;
  for (let attempt = 0; attempt < 12; attempt += 1) {
    if (net.down.has(copy)) copy = (copy + 1) % bases.length;
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(opts.headers ?? {}) };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    if (idemKey) headers['idempotency-key'] = idemKey;
    const entry: Logged = { seq: (seq += 1), at: Date.now(), api: copy, as: opts.as ?? null, method, path: urlPath, key: idemKey, body: opts.raw ?? opts.body ?? null, status: 'cut', answer: null };
    try {
      const res = await fetch(`${bases[copy]}${urlPath}`, {
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
      if (res.status === 429 && cut && attempt < 11) {
        await sleep(1000 * Math.min(30, Math.max(1, Number(res.headers.get('retry-after') ?? 1))));
        continue;
      }
      if (res.status === 503 && attempt < 11) {
        // An API copy shutting down (SIGTERM) or not ready: try the other one.
        copy = (copy + 1) % bases.length;
        await sleep(100);
        continue;
      }
      return { status: res.status, body, headers: res.headers };
    } catch {
      record(entry);
      cut = true;
      copy = (copy + 1) % bases.length;
      await sleep(100 + attempt * 100);
    }
  }
  throw new Error(`${method} ${urlPath}: no answer after 12 tries`);
}

export const dataOf = (a: Answer): Record<string, unknown> => (a.body.data ?? {}) as Record<string, unknown>;

/** The service's own signers, set in main() once the environment points at the chaos stores. */
export const signers = {
  fields: (_secret: string, _fields: Record<string, string>): string => {
    throw new Error('signers not loaded');
  },
  callback: (_rawBody: string): string => {
    throw new Error('signers not loaded');
  },
};

/** A sandbox gateway callback and its signature header. */
export function sandboxCallback(order: string, status: string, amount: number): { raw: string; headers: Record<string, string> } {
  const raw = JSON.stringify({ provider: 'sandbox', gateway_order_id: order, status, amount });
  return { raw, headers: { 'x-sandbox-signature': signers.callback(raw) } };
}

export const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;
