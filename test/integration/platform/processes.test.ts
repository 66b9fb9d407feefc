/**
 * The two real entry points as separate processes: the worker relays the outbox and
 * delivers mail through SMTP, two API processes share notification streams through Redis,
 * and the processes stop cleanly on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { queueMail } from '../../../shared/mail/service.js';
import { MailSink } from '../../helpers/smtp.js';
import { createUser, fundUser, withoutTriggers } from '../../helpers/platform-factories.js';
import { closedPort, issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { openStream } from '../../helpers/sse.js';
import { createEscrow } from '../../factories/escrows.js';
import { createUser as createAccount } from '../../factories/users.js';
import * as escrows from '../../../shared/escrows/service.js';
import { lastLedgerCheck } from '../../../shared/ledger/check-record.js';
import { apiPort, until } from '../../helpers/processes.js';

const TSX = 'node_modules/.bin/tsx';

function start(entry: string, env: Record<string, string>): ChildProcess {
  return spawn(TSX, [entry], { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

function exitOf(child: ChildProcess, ms: number): Promise<number | null | 'timeout'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe('platform: the api and worker processes', function () {
  this.timeout(60_000);
  const mail = new MailSink();
  before(() => mail.start());
  after(() => mail.stop());

  it('api and worker refuse to start (exit 78) on a database whose session settings differ from what the code assumes (decision 0025)', async () => {
    const url = new URL(config.databaseUrl);
    url.searchParams.set('options', '-c standard_conforming_strings=off');
    for (const entry of ['api/server.ts', 'workers/index.ts']) {
      const child = start(entry, { DATABASE_URL: url.toString(), PORT: String(await closedPort()) });
      let output = '';
      child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
      const code = await exitOf(child, 30_000);
      if (code === 'timeout') child.kill('SIGKILL');
      expect(code, `${entry}: ${output}`).to.equal(78);
      expect(output).to.contain('standard_conforming_strings is off, expected on');
    }
  });

  it('worker: relays a committed outbox row, delivers the e-mail once, and exits 0 on SIGTERM', async () => {
    const emailId = await db.transaction((trx) =>
      queueMail(trx, { to: 'buyer@example.com', template: 'test', subject: 'Hello from the worker', text: 'kode 424242' }),
    );
    const worker = start('workers/index.ts', { OUTBOX_POLL_MS: '50', SMTP_URL: config.smtpUrl });
    let output = '';
    worker.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    worker.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    try {
      const received = await until('the e-mail', 30_000, () => mail.to('buyer@example.com')[0]).catch((e: Error) => {
        throw new Error(`${e.message}; worker said: ${output}`);
      });
      expect(received.subject).to.equal('Hello from the worker');
      expect(received.text).to.contain('kode 424242');
      const row = await until('sent_at', 10_000, async () => {
        const r = (await db('outbound_emails').where({ id: emailId }).first()) as { sent_at: Date | null; body_sealed: string | null };
        return r.sent_at ? r : undefined;
      });
      expect(row.body_sealed).to.equal(null);
      expect(output).to.contain('workers running');
    } finally {
      worker.kill('SIGTERM');
    }
    expect(await exitOf(worker, 20_000)).to.equal(0);
    expect(output).to.contain('workers stopped');
    expect(mail.to('buyer@example.com')).to.have.length(1);
  });

  it('api: answers on its port and exits 0 on SIGTERM, closing the port', async () => {
    const server = start('api/server.ts', { PORT: '0', HOST: '127.0.0.1' });
    let output = '';
    server.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    server.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    let port = 0;
    try {
      port = await apiPort(() => output);
      const res = await until('the API', 30_000, async () => {
        try {
          return await fetch(`http://127.0.0.1:${port}/readyz`);
        } catch {
          return undefined;
        }
      });
      expect(res.status).to.equal(200);
    } finally {
      server.kill('SIGTERM');
    }
    expect(await exitOf(server, 20_000)).to.equal(0);
    expect(output).to.contain('api stopped');
    let refused = false;
    await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => {
      refused = true;
    });
    expect(refused).to.equal(true);
  });
  it('api: two API processes sharing Redis: a worker-made notice and a read mark through process A reach a stream held by process B within a second', async () => {
    const { user: buyer } = await createAccount();
    const key = await issueKey(buyer.id);
    const { escrow } = await createEscrow({ buyer });
    await runJobs();
    const apis = [0, 1].map(() => start('api/server.ts', { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' }));
    const said = ['', ''];
    let output = '';
    apis.forEach((p, i) => {
      p.stdout?.on('data', (c: Buffer) => {
        said[i] += c.toString();
        output += c.toString();
      });
      p.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    });
    try {
      const [portA, portB] = [await apiPort(() => said[0]!), await apiPort(() => said[1]!)];
      for (const port of [portA, portB]) {
        await until(`the API on ${port}`, 30_000, async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.ok || undefined).catch((e: Error) => {
          throw new Error(`${e.message}; the APIs said: ${output}`);
        });
      }
      const stream = await openStream(portB, key);
      expect(stream.status).to.equal(200);
      await stream.waitFor('event: unread\ndata: {"count":0}\n\n', 0, 5000);

      // The notifications worker's code runs here, a third process: its publish reaches process B.
      await escrows.markPaid(undefined, escrow.id, { reference: 'two-processes' });
      await runJobs();
      const written = Date.now();
      await stream.waitFor('event: unread\ndata: {"count":1}\n\n', 0, 1000);
      expect(Date.now() - written).to.be.lessThan(1000);

      // A read mark through process A: process B's stream hears the new count.
      const auth = { Authorization: `Bearer ${key}` };
      const list = (await (await fetch(`http://127.0.0.1:${portA}/v1/notifications`, { headers: auth })).json()) as { data: { id: string }[] };
      const at = stream.text().length;
      const marked = await fetch(`http://127.0.0.1:${portA}/v1/notifications/${list.data[0]!.id}/read`, { method: 'PATCH', headers: auth });
      expect(marked.status).to.equal(200);
      const readAt = Date.now();
      await stream.waitFor('event: unread\ndata: {"count":0}\n\n', at, 1000);
      expect(Date.now() - readAt).to.be.lessThan(1000);
      stream.close();
    } finally {
      for (const p of apis) p.kill('SIGTERM');
    }
    const exits = await Promise.all(apis.map((p) => exitOf(p, 20_000)));
    expect(exits, output).to.deep.equal([0, 0]);
  });

  it('npm run ledger:check: exits 0 on sound books and 1, naming the rule, on a tampered balance', async () => {
    const user = await createUser();
    await fundUser(user.id, 25_000);
    const run = async () => {
      const child = start('scripts/ledger-check.ts', {});
      let output = '';
      child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
      return { code: await exitOf(child, 30_000), output: () => output };
    };
    const sound = await run();
    expect(sound.code).to.equal(0);
    expect(sound.output()).to.contain('all invariants hold');
    // Each run is recorded for /metrics (issue 47).
    const soundRecord = await lastLedgerCheck();
    expect([soundRecord?.ok, soundRecord?.violations]).to.deep.equal([true, 0]);
    // The database refuses a balance change without journal lines; forge one with its triggers off.
    await withoutTriggers((trx) => trx('users').where({ id: user.id }).increment('balance', 1));
    const tampered = await run();
    expect(tampered.code).to.equal(1);
    expect(tampered.output()).to.contain('user-projection');
    const tamperedRecord = await lastLedgerCheck();
    expect(tamperedRecord?.ok).to.equal(false);
    expect(tamperedRecord!.violations).to.be.greaterThan(0);
    expect(Date.parse(tamperedRecord!.ran_at)).to.be.at.least(Date.parse(soundRecord!.ran_at));
    expect(tamperedRecord!.first_violations.map((v) => v.rule)).to.include('user-projection');
  });
});
