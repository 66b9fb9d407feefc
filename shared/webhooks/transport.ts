/**
 * One webhook attempt over HTTP(S) (decision 0020 "Webhooks"): a POST with the signed body,
 * on a connection of its own, to an address checked when connecting.
 *
 * - SSRF: a literal IP host is checked before anything is sent; a host name is resolved by
 *   the connection's own `lookup`, which refuses the connection when ANY address the name
 *   resolves to is not allowed (address.ts). The address checked is the address connected
 *   to, so a name that resolved to a public address a moment ago and to 10.0.0.1 now
 *   (DNS rebinding) is refused. Redirects are never followed (a 3xx is a failed attempt).
 * - Time: the whole attempt (resolving, connecting, TLS, sending, the answer's head and
 *   body) ends after `timeoutMs`; a receiver that never answers costs one timeout. Resolving
 *   and connecting (with TLS) end sooner, after `connectTimeoutMs` (review R2).
 * - Size: the answer is read up to `capBytes`, then the connection is closed.
 * An attempt succeeds on a 2xx status; the status decides, so a 2xx whose body is cut off
 * by the cap or the deadline still succeeded.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { addressAllowed, bareHost } from './address.js';

/** Resolves a host name to every address it has (the default: the system resolver, as Node connects). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

let resolver: Resolver = systemResolver;

/** Replaces the resolver (tests: a name that resolves to a private address); null restores the system one. */
export function useResolver(r: Resolver | null): void {
  resolver = r ?? systemResolver;
}

export interface Attempt {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Resolving and connecting (and the TLS handshake) end after this long; the whole attempt still ends after `timeoutMs`. */
  connectTimeoutMs?: number;
  capBytes: number;
  /** Loopback receivers are allowed (sandbox mode). */
  allowLoopback: boolean;
}

export interface AttemptResult {
  ok: boolean;
  /** The receiver's status, or null when no answer came. */
  status: number | null;
  /** Why no 2xx came (a short text naming the cause), or null. */
  error: string | null;
  /** The start of the answer's body (up to the cap), or null. */
  body: string | null;
  durationMs: number;
}

const NOT_ALLOWED = 'EADDRNOTALLOWED';

class AddressNotAllowed extends Error {
  readonly code = NOT_ALLOWED;
  constructor(hostname: string, address: string) {
    super(`address not allowed: ${hostname} resolves to ${address}`);
  }
}

/** A `lookup` for net.connect that refuses names resolving to an address not allowed. */
function guardedLookup(allowLoopback: boolean): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    resolver(hostname).then(
      (found) => {
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const addresses = found.filter((a) => family === 0 || a.family === family);
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
          return;
        }
        // Every address must pass: a mixed answer (one public, one private) is refused as a whole.
        const bad = found.find((a) => !addressAllowed(a.address, allowLoopback));
        if (bad) {
          callback(new AddressNotAllowed(hostname, bad.address), '', 0);
          return;
        }
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), '', 0),
    );
  };
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (code === NOT_ALLOWED) return message;
  return (code ? `${code}: ${message}` : message).slice(0, 300);
}

export function attempt(a: Attempt): Promise<AttemptResult> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const url = new URL(a.url);
  const host = bareHost(url);
  if (isIP(host) !== 0 && !addressAllowed(host, a.allowLoopback)) {
    return Promise.resolve({ ok: false, status: null, error: `address not allowed: ${host}`, body: null, durationMs: took() });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return Promise.resolve({ ok: false, status: null, error: `unsupported scheme ${url.protocol}`, body: null, durationMs: took() });
  }
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let status: number | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      const ok = error === null && status !== null && status >= 200 && status < 300;
      const body = status === null ? null : Buffer.concat(chunks).toString('utf8');
      resolve({ ok, status, error: error ?? (status !== null && !ok ? `HTTP ${status}` : null), body, durationMs: took() });
    };
    const request = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...a.headers, 'content-length': String(Buffer.byteLength(a.body)) },
        agent: false,
        lookup: guardedLookup(a.allowLoopback),
      },
      (res) => {
        status = res.statusCode ?? null;
        res.on('data', (chunk: Buffer) => {
          const room = a.capBytes - size;
          if (room > 0) chunks.push(chunk.subarray(0, room));
          size += chunk.length;
          if (size >= a.capBytes) finish(null);
        });
        res.on('end', () => finish(null));
        // The answer's head came: a body cut short does not change the status.
        res.on('error', () => finish(null));
        res.on('aborted', () => finish(null));
      },
    );
    request.on('error', (err) => finish(status === null ? describe(err) : null));
    const timer = setTimeout(() => finish(status === null ? `timeout after ${a.timeoutMs} ms` : null), a.timeoutMs);
    if (a.connectTimeoutMs !== undefined && a.connectTimeoutMs < a.timeoutMs) {
      const connectTimer = setTimeout(() => finish(`connect timeout after ${a.connectTimeoutMs} ms`), a.connectTimeoutMs);
      const connected = () => clearTimeout(connectTimer);
      request.on('socket', (socket) => socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', connected));
      request.on('close', connected);
    }
    request.end(a.body);
  });
}
