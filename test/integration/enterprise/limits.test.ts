/**
 * The limits of enterprise spec section 8 on every route they cover (issue 42), written out
 * here from the spec, not read from the code: each covered route answers 429 RATE_LIMITED
 * with Retry-After once its limit is spent (and not one request before), and the routes
 * that share a limit share it. The sweep fails when a registered /v1/enterprise or /v1/kyb
 * route is neither in the table nor named as covered only by the shared 300 per minute.
 *
 * Limits are counted in Redis over a real window; the root hooks empty Redis before each
 * test, so no test waits for a window to pass (nothing sleeps).
 */
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { createUser } from '../../factories/users.js';
import { addMember, createWorkspace, headersOf, sessionOf } from '../../factories/enterprise.js';
import { routers } from '../../../api/app.js';
import { config } from '../../../shared/config.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

interface Row {
  method: Method;
  /** As registered. */
  path: string;
  /** The spec's limit (section 8). */
  limit: number;
  window: 'minute' | 'hour';
  /** Counted per user (default) or per address (several users from one address spend it). */
  by?: 'user' | 'ip';
  /** Routes sharing this route's counter: spent here, they answer 429 too. */
  group?: string;
}

const E = '/v1/enterprise';
const I = '/v1/kyb/invite/:token';
const MONEY = 30; // "Fund, submit evidence, dispute, decide, release, payout instruction writes, member writes: 30 per minute"

const LIMITED: Row[] = [
  // Workspace registration: 5 per hour per user and 10 per hour per IP.
  { method: 'POST', path: `${E}/register`, limit: 5, window: 'hour' },
  { method: 'POST', path: `${E}/register`, limit: 10, window: 'hour', by: 'ip' },
  // Member writes: 30 per minute, one counter.
  { method: 'POST', path: `${E}/members`, limit: MONEY, window: 'minute', group: 'members' },
  { method: 'PATCH', path: `${E}/members/:id`, limit: MONEY, window: 'minute', group: 'members' },
  { method: 'DELETE', path: `${E}/members/:id`, limit: MONEY, window: 'minute', group: 'members' },
  { method: 'PATCH', path: `${E}/members/me/preferences`, limit: MONEY, window: 'minute', group: 'members' },
  // Money moves and payout instruction writes: 30 per minute.
  { method: 'POST', path: `${E}/deals/:id/milestones/:mid/fund`, limit: MONEY, window: 'minute' },
  { method: 'POST', path: `${E}/deals/:id/milestones/:mid/submit-evidence`, limit: MONEY, window: 'minute' },
  { method: 'POST', path: `${E}/deals/:id/milestones/:mid/dispute`, limit: MONEY, window: 'minute' },
  { method: 'POST', path: `${E}/deals/:id/milestones/:mid/release`, limit: MONEY, window: 'minute' },
  { method: 'POST', path: `${E}/approvals/:milestoneId/decide`, limit: MONEY, window: 'minute' },
  { method: 'POST', path: `${E}/payout-instructions`, limit: MONEY, window: 'minute', group: 'instructions' },
  { method: 'PATCH', path: `${E}/payout-instructions/:id`, limit: MONEY, window: 'minute', group: 'instructions' },
  { method: 'DELETE', path: `${E}/payout-instructions/:id`, limit: MONEY, window: 'minute', group: 'instructions' },
  // Overview 60; fee preview 60; summary 30; exports 5 (new exports).
  { method: 'GET', path: `${E}/overview`, limit: 60, window: 'minute' },
  { method: 'POST', path: `${E}/fees/preview`, limit: 60, window: 'minute' },
  { method: 'GET', path: `${E}/reports/summary`, limit: 30, window: 'minute' },
  { method: 'GET', path: `${E}/audit/export.csv`, limit: 5, window: 'minute' },
  { method: 'GET', path: `${E}/reports/deals.csv`, limit: 5, window: 'minute' },
  { method: 'GET', path: `${E}/reports/disbursements.csv`, limit: 5, window: 'minute' },
  // Templates, notes, API keys, webhooks: 60 per minute (templates and notes per route; 4.10: keys one counter; webhooks one counter).
  { method: 'GET', path: `${E}/templates`, limit: 60, window: 'minute' },
  { method: 'POST', path: `${E}/templates`, limit: 60, window: 'minute' },
  { method: 'PATCH', path: `${E}/templates/:id`, limit: 60, window: 'minute' },
  { method: 'DELETE', path: `${E}/templates/:id`, limit: 60, window: 'minute' },
  { method: 'GET', path: `${E}/deals/:id/notes`, limit: 60, window: 'minute' },
  { method: 'POST', path: `${E}/deals/:id/notes`, limit: 60, window: 'minute' },
  { method: 'DELETE', path: `${E}/deals/:id/notes/:nid`, limit: 60, window: 'minute' },
  { method: 'GET', path: `${E}/api-keys`, limit: 60, window: 'minute', group: 'keys' },
  { method: 'POST', path: `${E}/api-keys`, limit: 60, window: 'minute', group: 'keys' },
  { method: 'DELETE', path: `${E}/api-keys/:id`, limit: 60, window: 'minute', group: 'keys' },
  { method: 'GET', path: `${E}/webhooks`, limit: 60, window: 'minute', group: 'webhooks' },
  { method: 'POST', path: `${E}/webhooks`, limit: 60, window: 'minute', group: 'webhooks' },
  { method: 'PATCH', path: `${E}/webhooks/:id`, limit: 60, window: 'minute', group: 'webhooks' },
  { method: 'DELETE', path: `${E}/webhooks/:id`, limit: 60, window: 'minute', group: 'webhooks' },
  { method: 'POST', path: `${E}/webhooks/:id/rotate-secret`, limit: 60, window: 'minute', group: 'webhooks' },
  { method: 'POST', path: `${E}/webhooks/:id/test`, limit: 60, window: 'minute', group: 'webhooks' },
  { method: 'GET', path: `${E}/webhooks/:id/deliveries`, limit: 60, window: 'minute', group: 'webhooks' },
  { method: 'POST', path: `${E}/webhooks/:id/deliveries/:did/redeliver`, limit: 60, window: 'minute', group: 'webhooks' },
  // KYB read 120 per minute (every KYB GET, one counter); upload 30 per user and 60 per IP; attach 30 (4.2); kyb-invite 30.
  { method: 'GET', path: `${E}/kyb`, limit: 120, window: 'minute', group: 'kyb-read' },
  { method: 'GET', path: `${E}/kyb/documents/:id/url`, limit: 120, window: 'minute', group: 'kyb-read' },
  { method: 'GET', path: I, limit: 120, window: 'minute', group: 'kyb-read' },
  { method: 'GET', path: `${I}/documents/:id/url`, limit: 120, window: 'minute', group: 'kyb-read' },
  { method: 'POST', path: `${E}/kyb/uploads`, limit: 30, window: 'minute', group: 'kyb-upload' },
  { method: 'POST', path: `${I}/uploads`, limit: 30, window: 'minute', group: 'kyb-upload' },
  { method: 'POST', path: `${E}/kyb/uploads`, limit: 60, window: 'minute', by: 'ip' },
  { method: 'POST', path: `${I}/uploads`, limit: 60, window: 'minute', by: 'ip' },
  { method: 'POST', path: `${E}/kyb/documents`, limit: 30, window: 'minute', group: 'kyb-attach' },
  { method: 'POST', path: `${I}/documents`, limit: 30, window: 'minute', group: 'kyb-attach' },
  { method: 'POST', path: `${E}/counterparties/:id/kyb-invite`, limit: 30, window: 'minute' },
];

/** Routes section 8 covers only with "every route: 300 requests per minute per user (shared)". */
const SHARED_ONLY: string[] = [
  `GET ${E}/me`,
  `POST ${E}/invites/:memberId/accept`,
  `GET ${E}/members`,
  `GET ${E}/settings`,
  `PATCH ${E}/settings`,
  `GET ${E}/notifications`,
  `POST ${E}/notifications/read`,
  `GET ${E}/counterparties`,
  `POST ${E}/counterparties`,
  `PATCH ${E}/counterparties/:id`,
  `GET ${E}/events`,
  `PATCH ${E}/kyb`,
  `DELETE ${E}/kyb/documents/:id`,
  `POST ${E}/kyb/submit`,
  `PATCH ${I}`,
  `DELETE ${I}/documents/:id`,
  `POST ${I}/submit`,
  `GET ${E}/deals`,
  `GET ${E}/deals/:id`,
  `POST ${E}/deals`,
  `PATCH ${E}/deals/:id`,
  `POST ${E}/deals/:id/milestones`,
  `PATCH ${E}/deals/:id/milestones/:mid`,
  `POST ${E}/deals/:id/activate`,
  `POST ${E}/deals/:id/cancel`,
  `GET ${E}/fees`,
  `PUT ${E}/fees/default-allocation`,
  `GET ${E}/documents`,
  `POST ${E}/documents`,
  `DELETE ${E}/documents/:id`,
  `GET ${E}/approvals`,
  `GET ${E}/approvals/:milestoneId`,
  `GET ${E}/payouts`,
  `GET ${E}/payout-instructions`,
  `GET ${E}/payout-instructions/:id`,
  `GET ${E}/reconciliation`,
];

const ID = '5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3';
const concrete = (path: string): string => path.replace(':token', 'not-a-real-token').replace(/:\w+/g, ID);

describe('enterprise: the limits of section 8 on every route they cover', () => {
  const client = api();

  function send(method: Method, path: string, h: Record<string, string>): Promise<Response> {
    const req = client[method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete'](concrete(path)).set(h);
    return method === 'GET' ? req : req.send({});
  }

  function expectLimited(res: Response, row: Row, label: string): void {
    expect(res.status, `${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`).to.equal(429);
    expect(res.body.error.code, label).to.equal('RATE_LIMITED');
    expect(res.headers['cache-control'], label).to.equal('private, no-store');
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter, label).to.be.within(1, row.window === 'hour' ? 3600 : 60);
  }

  it('the sweep: every registered enterprise route is in the table or named as covered only by the shared limit', () => {
    expect(config.enterpriseMoneyLimitPerMinute).to.equal(MONEY);
    const registered = new Set<string>();
    for (const router of routers) {
      for (const layer of router.stack) {
        const path = String(layer.path);
        if (!path.startsWith(`${E}/`) && !path.startsWith('/v1/kyb/')) continue;
        for (const method of layer.methods) if (method !== 'HEAD') registered.add(`${method} ${path}`);
      }
    }
    const named = new Set([...LIMITED.map((r) => `${r.method} ${r.path}`), ...SHARED_ONLY]);
    expect([...registered].filter((r) => !named.has(r)).sort(), 'registered routes missing from the table').to.deep.equal([]);
    expect([...named].filter((r) => !registered.has(r)).sort(), 'table rows with no registered route').to.deep.equal([]);
  });

  for (const row of LIMITED) {
    const label = `${row.method} ${row.path}: ${row.limit} per ${row.window}${row.by === 'ip' ? ' per IP' : ''}`;
    it(label, async function () {
      this.timeout(60_000);
      const w = await createWorkspace();
      // Per IP: several admins from one address, each under the per-user limit that also applies.
      const callers = [w.owner];
      if (row.by === 'ip') for (let i = 0; i < 2; i += 1) callers.push((await addMember(w.workspace.id, 'admin')).user);
      const headers = await Promise.all(callers.map(async (u) => headersOf(await sessionOf(u))));
      const per = row.by === 'ip' ? Math.ceil(row.limit / 2) : row.limit;
      for (let i = 0; i < row.limit; i += 1) {
        const res = await send(row.method, row.path, headers[Math.floor(i / per)]!);
        expect(res.status, `${label}, request ${i + 1}: ${JSON.stringify(res.body).slice(0, 200)}`).to.not.equal(429);
      }
      expectLimited(await send(row.method, row.path, headers[row.by === 'ip' ? 2 : 0]!), row, `${label}, request ${row.limit + 1}`);
      if (row.group) {
        for (const other of LIMITED.filter((r) => r.group === row.group && r !== row && r.by !== 'ip')) {
          expectLimited(await send(other.method, other.path, headers[0]!), other, `${other.method} ${other.path} shares the counter of ${label}`);
        }
      }
      // Another user's budget is their own (per-user rows).
      if (row.by !== 'ip') {
        const stranger = headersOf(await sessionOf((await addMember(w.workspace.id, 'owner')).user));
        expect((await send(row.method, row.path, stranger)).status, `${label}: another user`).to.not.equal(429);
      }
    });
  }

  it('every route: 300 requests per minute per user, shared by all routes', async function () {
    this.timeout(60_000);
    expect(config.authRateLimitPerMinute).to.equal(300);
    const w = await createWorkspace();
    const h = headersOf(await sessionOf(w.owner));
    const paths = [`${E}/settings`, `${E}/members`, `${E}/counterparties`];
    for (let i = 0; i < 300; i += 1) expect((await client.get(paths[i % 3]!).set(h)).status).to.equal(200);
    for (const p of [...paths, `${E}/deals`]) {
      expectLimited(await client.get(p).set(h), { method: 'GET', path: p, limit: 300, window: 'minute' }, `${p} after 300 on three routes`);
    }
    const { user } = await createUser();
    expect((await client.get(`${E}/me`).set(headersOf(await sessionOf(user)))).status).to.equal(200);
  });
});
