/**
 * Loopback webhook receivers for tests (decision 0020 "Webhooks"): a node http server on
 * 127.0.0.1 that records every request (headers, raw body) and answers as told; and the
 * Standard Webhooks check of a received message with the `standardwebhooks` package, the
 * receiver's clock being the service's (tests move it).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { clock } from '../../shared/clock.js';

export interface Received {
  /** The service clock when it arrived (the receiver's "now" when it checks the signature). */
  at: number;
  headers: Record<string, string>;
  body: string;
  json: { id: string; type: string; created_at: string; livemode: boolean; data: Record<string, unknown> & { seq: number | null; id: string; event: string } };
}

/** How to answer the n-th request (0-based): a status and body, or `hang` (never answer). */
export type Answer = { status: number; body?: string } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Sets how the next requests are answered (default 200 "ok"). */
  answer(fn: (r: Received, n: number) => Answer): void;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hooks'): Promise<Receiver> {
  const received: Received[] = [];
  let decide: (r: Received, n: number) => Answer = () => ({ status: 200, body: 'ok' });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : (v ?? '');
      let json: Received['json'];
      try {
        json = JSON.parse(body) as Received['json'];
      } catch {
        json = { id: '', type: '', created_at: '', livemode: false, data: { seq: null, id: '', event: '' } };
      }
      const r = { at: clock.nowMs(), headers, body, json };
      received.push(r);
      const a = decide(r, received.length - 1);
      if (a === 'hang') return; // never answers; the sender's timeout ends it
      res.writeHead(a.status, { 'content-type': 'text/plain' });
      res.end(a.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    received,
    answer(fn) {
      decide = fn;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Verifies a received message with the `standardwebhooks` package as the receiver did when it
 * arrived, its "now" being the service clock then (the tolerance is 5 minutes); returns the payload.
 */
export function verified(secret: string, r: Received): unknown {
  const realNow = Date.now;
  Date.now = () => r.at;
  try {
    return new Webhook(secret).verify(r.body, r.headers);
  } finally {
    Date.now = realNow;
  }
}
