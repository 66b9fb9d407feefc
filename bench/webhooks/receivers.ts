/**
 * The webhook bench's receivers: one node http server per endpoint on 127.0.0.1, in the
 * bench process. Each checks every request's Standard Webhooks signature with the
 * `standardwebhooks` package and the endpoint's secret (after the round, as the secret is
 * known only once the endpoint exists and the first events may come before), and records
 * what it saw: arrival time, webhook-id, the event's seq, the status it answered. A receiver told to fail half
 * its requests answers 500 to every other one (the 1st, 3rd, 5th...), so every event it
 * gets fails once and succeeds on its retry. A round gives every receiver a new path, so a
 * late request of an earlier round is never counted.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Hit {
  at: number;
  id: string;
  seq: number;
  status: number;
  body: string;
  headers: Record<string, string>;
}

export interface Receiver {
  port: number;
  /** Requests of the current round. */
  hits: Hit[];
  /** Starts a round: a new path, and whether to fail every other request. */
  round(path: string, failHalf: boolean): void;
  urlFor(path: string): string;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  let state: { path: string; failHalf: boolean; n: number } | undefined;
  const r: Receiver = {
    port: 0,
    hits: [],
    round(path, failHalf) {
      state = { path, failHalf, n: 0 };
      r.hits = [];
    },
    urlFor: (path) => `http://127.0.0.1:${r.port}${path}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = state;
      if (!s || req.url !== s.path) {
        res.writeHead(410).end();
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : (v ?? '');
      let seq: number;
      try {
        seq = Number((JSON.parse(body) as { data: { seq: number } }).data.seq);
      } catch {
        seq = -1;
      }
      const status = s.failHalf && s.n % 2 === 0 ? 500 : 200;
      s.n += 1;
      r.hits.push({ at: Date.now(), id: headers['webhook-id'] ?? '', seq, status, body, headers });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'fail');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.port = (server.address() as AddressInfo).port;
  return r;
}

export interface Tally {
  requests: number;
  accepted: number;
  failedAnswers: number;
  /** Events accepted more than once (the same webhook-id answered 2xx twice). */
  duplicates: number;
  /** Expected events never accepted. */
  missing: number;
  /** Accepted events that are not the endpoint's (outside its range). */
  unexpected: number;
  /** Accepted events whose seq is lower than the one accepted before. */
  outOfOrder: number;
  badSignatures: number;
  firstAt: number | null;
  lastAt: number | null;
}

/** What one receiver saw against the seqs it should get, (cursor, last], each request's signature checked with the endpoint's secret. */
export function tally(hits: readonly Hit[], secret: string, cursor: number, last: number): Tally {
  const hook = new Webhook(secret);
  const signed = (h: Hit): boolean => {
    try {
      hook.verify(h.body, h.headers);
      return true;
    } catch {
      return false;
    }
  };
  const ok = hits.filter((h) => h.status === 200);
  const ids = new Map<string, number>();
  for (const h of ok) ids.set(h.id, (ids.get(h.id) ?? 0) + 1);
  const seqs = new Set(ok.map((h) => h.seq));
  let missing = 0;
  for (let s = cursor + 1; s <= last; s += 1) if (!seqs.has(s)) missing += 1;
  let outOfOrder = 0;
  for (let i = 1; i < ok.length; i += 1) if (ok[i]!.seq < ok[i - 1]!.seq) outOfOrder += 1;
  return {
    requests: hits.length,
    accepted: ok.length,
    failedAnswers: hits.length - ok.length,
    duplicates: [...ids.values()].reduce((n, c) => n + (c - 1), 0),
    missing,
    unexpected: ok.filter((h) => h.seq <= cursor || h.seq > last).length,
    outOfOrder,
    badSignatures: hits.filter((h) => !signed(h)).length,
    firstAt: ok[0]?.at ?? null,
    lastAt: ok.at(-1)?.at ?? null,
  };
}

/** Whether a receiver has every event it should (accepted at least once each). */
export function complete(hits: readonly Hit[], cursor: number, last: number): boolean {
  const need = last - cursor;
  const seen = new Set<number>();
  for (const h of hits) if (h.status === 200 && h.seq > cursor && h.seq <= last) seen.add(h.seq);
  return seen.size === need;
}
