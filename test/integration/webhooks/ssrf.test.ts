/**
 * SSRF at connect time (decision 0020 "Webhooks"): the worker checks the address it
 * actually connects to, so a host name that resolves to a private, metadata or (outside
 * sandbox mode) loopback address is refused and nothing reaches it, however the name looked
 * when the endpoint was saved; a name that changes its answer between two attempts (DNS
 * rebinding) is checked again on each. The resolver is injected (no DNS here); the
 * receiver listening on 127.0.0.1 shows nothing was sent.
 */
import { expect } from 'chai';
import type { LookupAddress } from 'node:dns';
import { runJobs } from '../../helpers/jobs.js';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver.js';
import { addMember, createWorkspace } from '../../factories/enterprise.js';
import { actorOf, feedEvent, makeEndpoint } from '../../factories/webhooks.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { sendTest } from '../../../shared/webhooks/service.js';
import { RETRY_DELAYS_MS } from '../../../shared/webhooks/states.js';
import { useResolver } from '../../../shared/webhooks/transport.js';

describe('webhook SSRF checks at connect time', () => {
  let rx: Receiver;
  const savedSandbox = config.sandboxMode;
  let answers: Record<string, LookupAddress[]> = {};
  let lookups: string[] = [];

  beforeEach(async () => {
    rx = await startReceiver();
    answers = {};
    lookups = [];
    useResolver((host) => {
      lookups.push(host);
      const found = answers[host];
      return found ? Promise.resolve(found) : Promise.reject(Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' }));
    });
  });
  afterEach(async () => {
    useResolver(null);
    config.sandboxMode = savedSandbox;
    await rx.close();
  });

  async function endpointAt(url: string) {
    const ws = await createWorkspace();
    const admin = await addMember(ws.workspace.id, 'admin');
    const made = await makeEndpoint(actorOf(ws.workspace.id, admin), { url });
    return { workspaceId: ws.workspace.id, endpointId: made.endpoint.id };
  }
  const log = (endpointId: string) => db('webhook_deliveries').where({ endpoint_id: endpointId }).orderBy('position');

  for (const [label, addresses] of [
    ['a private address', [{ address: '10.0.0.7', family: 4 }]],
    ['the cloud metadata address', [{ address: '169.254.169.254', family: 4 }]],
    ['a unique-local IPv6 address (fd00:ec2::254)', [{ address: 'fd00:ec2::254', family: 6 }]],
    ['a CGNAT address', [{ address: '100.64.1.2', family: 4 }]],
    ['a public and a private address at once', [{ address: '8.8.8.8', family: 4 }, { address: '192.168.0.10', family: 4 }]],
  ] as [string, LookupAddress[]][]) {
    it(`refuses a name resolving to ${label}`, async () => {
      answers['hooks.partner.example'] = addresses;
      const w = await endpointAt('https://hooks.partner.example/in');
      await feedEvent(w.workspaceId, { event: 'deal.created' });
      await runJobs(['webhooks']);
      expect(lookups).to.include('hooks.partner.example');
      const [d] = await log(w.endpointId);
      expect(d).to.include({ status: 'failed', response_status: null });
      expect(d.error).to.match(/^address not allowed: hooks\.partner\.example resolves to /);
    });
  }

  it('outside sandbox mode a name resolving to loopback is refused, and the loopback receiver gets nothing', async () => {
    answers['rebind.partner.example'] = [{ address: '127.0.0.1', family: 4 }];
    const w = await endpointAt(`https://rebind.partner.example:${rx.port}/hooks`);
    config.sandboxMode = false;
    await feedEvent(w.workspaceId, { event: 'deal.created' });
    await runJobs(['webhooks']);
    expect(rx.received).to.have.length(0);
    const [d] = await log(w.endpointId);
    expect(d.error).to.equal('address not allowed: rebind.partner.example resolves to 127.0.0.1');
  });

  it('DNS rebinding: the same name is checked again on every attempt', async () => {
    clock.set(new Date('2026-12-01T08:00:00Z'));
    // In sandbox mode loopback is allowed: the first attempt reaches the receiver (which fails it).
    answers['flip.partner.example'] = [{ address: '127.0.0.1', family: 4 }];
    const w = await endpointAt(`http://localhost:${rx.port}/hooks`);
    await db('webhook_endpoints').where({ id: w.endpointId }).update({ url: `http://flip.partner.example:${rx.port}/hooks` });
    rx.answer(() => ({ status: 500 }));
    await feedEvent(w.workspaceId, { event: 'deal.created' });
    await runJobs(['webhooks']);
    expect(rx.received).to.have.length(1);
    // Now the name points at a private address: the retry is refused before connecting.
    answers['flip.partner.example'] = [{ address: '10.1.2.3', family: 4 }];
    clock.advance(RETRY_DELAYS_MS[0]!);
    await runJobs(['webhooks']);
    expect(rx.received).to.have.length(1);
    const attempts = await log(w.endpointId);
    expect(attempts.map((d: { error: string }) => d.error)).to.deep.equal(['HTTP 500', 'address not allowed: flip.partner.example resolves to 10.1.2.3']);
  });

  it('a literal private address stored in the database is refused without a lookup or a connection', async () => {
    const w = await endpointAt(rx.url);
    await db('webhook_endpoints').where({ id: w.endpointId }).update({ url: 'http://169.254.169.254/latest/meta-data/' });
    await feedEvent(w.workspaceId, { event: 'deal.created' });
    await runJobs(['webhooks']);
    const [d] = await log(w.endpointId);
    expect(d.error).to.equal('address not allowed: 169.254.169.254');
    expect(lookups).to.deep.equal([]);
  });

  it('a test message goes through the same check (redeliveries are sent by the same one-off sender)', async () => {
    answers['hooks.partner.example'] = [{ address: '169.254.169.254', family: 4 }];
    const w = await endpointAt('https://hooks.partner.example/in');
    const ws = await db('workspace_members').where({ workspace_id: w.workspaceId, role: 'admin' }).first();
    const user = await db('users').where({ id: ws.user_id }).first();
    await sendTest(undefined, { workspaceId: w.workspaceId, memberId: ws.id, role: 'admin', userId: user.id, userName: user.full_name }, w.endpointId);
    await runJobs(['webhooks']);
    const [d] = await log(w.endpointId);
    expect(d).to.include({ kind: 'test', status: 'failed' });
    expect(d.error).to.match(/^address not allowed/);
  });
});
