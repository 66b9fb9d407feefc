/**
 * The baseline: a bare Koa app with a single middleware answering GET /healthz, and
 * `GET /v1/auth/me` as the API answers it without credentials (the frame figure, issue 43),
 * with the same JSON bodies as the real API. Started by bench/auth-read/main.ts as a child process;
 * listens on HOST:PORT (loopback only) and exits on SIGTERM/SIGINT.
 */
import Koa from 'koa';

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? '0');
if (!['127.0.0.1', '::1', 'localhost'].includes(host)) {
  console.error(`bare-koa: refusing to listen on non-loopback host "${host}"`);
  process.exit(2);
}
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error('bare-koa: PORT must be a port number');
  process.exit(2);
}

const app = new Koa();
app.use((ctx, next) => {
  if (ctx.method === 'GET' && ctx.path === '/healthz') {
    ctx.status = 200;
    ctx.body = { success: true, data: { status: 'ok' } };
    return;
  }
  if (ctx.method === 'GET' && ctx.path === '/v1/auth/me') {
    ctx.status = 200;
    ctx.body = { success: true, data: { user: null, csrf_token: null } };
    return;
  }
  return next();
});

const server = app.listen(port, host);

function stop(): void {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
