/**
 * Raw HTTP for the route-table fuzz test: one listening app, and requests sent byte for
 * byte as written (supertest and URL parsers would normalise the very path spellings the
 * fuzzer tries: `//v1`, `%61dmin`, `/./`). Also the route table, read from the routers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { createApp, routers } from '../../api/app.js';
import { QUEUE_DASHBOARD_PATH } from '../../api/routes/admin-queues.js';

export interface FuzzRoute {
  /** The method the route is registered for (HEAD is listed apart from GET). */
  method: string;
  /** The registered path, e.g. `/v1/admin/users/:id/suspend` (`*rest` for a mounted app). */
  template: string;
  /** Where it comes from, for failure messages. */
  source: 'router' | 'dashboard';
}

/** Mounted apps that are not router layers: the queue dashboard answers everything under its path. */
const DASHBOARD_METHODS = ['GET', 'POST', 'PUT', 'DELETE'];

/**
 * Every route the API registers: each layer of each router in `routers` (a layer without
 * methods is `router.use()` middleware, not a route), plus the queue dashboard mounted by
 * `createApp()` (its base path and anything below it).
 */
export function routeTable(): FuzzRoute[] {
  const routes: FuzzRoute[] = [];
  for (const router of routers) {
    for (const layer of router.stack) {
      if (typeof layer.path !== 'string') throw new Error(`route with a RegExp path cannot be fuzzed: ${String(layer.path)}`);
      for (const method of layer.methods) routes.push({ method, template: layer.path, source: 'router' });
    }
  }
  for (const method of DASHBOARD_METHODS) {
    routes.push({ method, template: QUEUE_DASHBOARD_PATH, source: 'dashboard' });
    routes.push({ method, template: `${QUEUE_DASHBOARD_PATH}/*rest`, source: 'dashboard' });
  }
  return routes;
}

/** Staff-only routes: everything under /v1/admin and the queue dashboard. */
export function isAdminRoute(route: FuzzRoute): boolean {
  return route.template.startsWith('/v1/admin') || route.template.startsWith(QUEUE_DASHBOARD_PATH);
}

export interface RawRequest {
  method: string;
  /** Sent as is (must hold only bytes 0x21-0xff: Node refuses others before sending). */
  path: string;
  headers: [string, string][];
  body?: Buffer;
  /** Who sends it (for failure messages only). */
  label?: string;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export interface FuzzServer {
  port: number;
  send(request: RawRequest): Promise<RawResponse>;
  close(): Promise<void>;
}

const ANSWER_WITHIN_MS = 10_000;

class StaleSocket extends Error {}

/** One app instance listening on loopback, and a keep-alive client for it. */
export async function startFuzzServer(): Promise<FuzzServer> {
  const handle = createApp().callback();
  const server = http.createServer((req, res) => void handle(req, res));
  // Node's parser refuses a head past http.maxHeaderSize before the app sees it: it answers
  // 431 and closes, which a client still writing a long body sees as a reset (Node 24). The
  // client ports it did so for, so such a reset is read as that 431. Node applies its own
  // answer only when nobody listens, so this listener gives the same one.
  const overflowed = new Set<number>();
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex & { remotePort?: number }) => {
    if (err.code === 'HPE_HEADER_OVERFLOW' && socket.remotePort !== undefined) overflowed.add(socket.remotePort);
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
    if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

  const sendOnce = (request: RawRequest): Promise<RawResponse> =>
    new Promise((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = {};
      for (const [name, value] of request.headers) {
        const lower = name.toLowerCase();
        const existing = headers[lower];
        // Repeated headers go out as repeated lines; Node sends one Host only (the last wins).
        headers[lower] = existing === undefined || lower === 'host' ? value : ([] as string[]).concat(existing as string, value);
      }
      if (request.body) headers['content-length'] = String(request.body.length);
      const req = http.request({ host: '127.0.0.1', port, method: request.method, path: request.path, headers, agent }, (res) => {
        // An event stream never ends by itself: its status and headers are the answer.
        if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '' });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      // The connection's local port, read while it is open (a reset socket no longer has one).
      let localPort: number | undefined;
      req.on('socket', (socket) => {
        localPort = socket.localPort;
        if (localPort === undefined) socket.once('connect', () => (localPort = socket.localPort));
      });
      req.setTimeout(ANSWER_WITHIN_MS, () => req.destroy(new Error(`no answer within ${ANSWER_WITHIN_MS} ms`)));
      req.on('error', (err: NodeJS.ErrnoException) => {
        // Headers past Node's limit: see `overflowed` above.
        if ((err.code === 'ECONNRESET' || err.code === 'EPIPE') && localPort !== undefined && overflowed.delete(localPort)) {
          resolve({ status: 431, headers: {}, text: `(${err.code} after Node's parser refused the head past http.maxHeaderSize with 431)` });
          return;
        }
        // A kept-alive socket the server closed while idle: not an answer, send again.
        reject(req.reusedSocket && err.code === 'ECONNRESET' ? new StaleSocket(err.message) : err);
      });
      req.end(request.body);
    });

  const send = async (request: RawRequest): Promise<RawResponse> => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await sendOnce(request);
      } catch (err) {
        if (!(err instanceof StaleSocket) || attempt >= 3) throw err;
      }
    }
  };

  return {
    port,
    send,
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A request and its answer in a few lines (long values cut), for failure messages. */
export function describeExchange(request: RawRequest, response?: RawResponse | Error): string {
  const cut = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}... (${s.length} chars)` : s);
  const lines = [`${request.method} ${cut(request.path, 500)}${request.label ? `   [${request.label}]` : ''}`];
  for (const [name, value] of request.headers) lines.push(`  ${name}: ${cut(JSON.stringify(value), 200)}`);
  if (request.body) lines.push(`  body: ${cut(JSON.stringify(request.body.toString('latin1')))}`);
  if (response instanceof Error) lines.push(`  => ${response.message}`);
  else if (response) lines.push(`  => ${response.status} ${cut(response.text)}`);
  return lines.join('\n');
}
