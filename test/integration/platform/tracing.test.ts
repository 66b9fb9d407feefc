/**
 * OpenTelemetry tracing (issue 47, shared/tracing.ts): a paid escrow's story is one trace. The
 * real API and worker entry points run as two processes with tracing on, each keeping its
 * spans in an in-memory exporter (test/helpers/traced-process.ts); a signed gateway callback
 * is sent to the API over HTTP and the worker does the rest (the callbacks inbox, the outbox
 * relay, the notifications and mail queues, SMTP). The two processes share nothing but
 * Postgres and Redis, so the trace can only continue through the stored callback's and the
 * outbox rows' `trace_context` and the jobs BullMQ carries. With tracing off (this mocha
 * process), rows keep no trace context and the statements are the ones they always were.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { MailSink } from '../../helpers/smtp.js';
import type { SpanRecord } from '../../helpers/traced-process.js';
import { createEscrow } from '../../factories/escrows.js';
import { createGateway, sandboxCallback } from '../../factories/payments.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { noticeSettings } from '../../../shared/notifications/settings.js';
import { outboxInsertSql, outboxInsertWhereSql, outboxItem } from '../../../shared/outbox.js';
import { currentTraceparent, tracingOn } from '../../../shared/tracing.js';
import { apiPort, until } from '../../helpers/processes.js';

const TSX = 'node_modules/.bin/tsx';
const AMOUNT = 150_000;
const TOTAL = AMOUNT + 1050; // the sandbox's 0.7% surcharge
const CALLBACK_PATH = '/api/webhooks/inbound';
/** A sampled W3C context of a caller's own choosing. */
const FORGED_TRACEPARENT = '00-0af7651916cd43dd0000000000000000-b7ad6b7169203331-01';
/** Rows of `table` (those `where` keeps). */
async function countRows(table: string, where: (q: Knex.QueryBuilder) => Knex.QueryBuilder = (q) => q): Promise<number> {
  const [row] = await where(db(table)).count<{ count: string | number }[]>('* as count');
  return Number(row?.count ?? 0);
}

/** The trace context of each row of `table` (of outbox rows, those of `job`). */
function traceContexts(table: 'outbox' | 'payment_callbacks', job?: string): Promise<{ trace_context: string | null }[]> {
  const q = db(table).select<{ trace_context: string | null }[]>('trace_context');
  return job ? q.where({ job }) : q;
}

const SPAN = { internal: 0, server: 1, client: 2, producer: 3, consumer: 4 } as const;

interface Traced {
  child: ChildProcess;
  spansFile: string;
}

function exitOf(child: ChildProcess, ms: number): Promise<number | null | 'timeout'> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** The spans a stopped process wrote. */
async function spansOf(p: Traced): Promise<SpanRecord[]> {
  const text = await readFile(p.spansFile, 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as SpanRecord);
}

/** A row's `traceparent`, split. */
function parentOf(traceContext: string | null): { traceId: string; spanId: string } {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(traceContext ?? '');
  expect(m, `a sampled traceparent, got ${traceContext}`).to.not.equal(null);
  return { traceId: m![1]!, spanId: m![2]! };
}

describe('platform: tracing (OpenTelemetry, issue 47)', function () {
  this.timeout(120_000);
  const mail = new MailSink();
  let dir = '';
  before(async () => {
    await mail.start();
    dir = await mkdtemp(path.join(tmpdir(), 'escrow-trace-'));
  });
  after(async () => {
    await mail.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** A pending escrow with a live sandbox link, made in this (untraced) process. */
  async function pendingLink(): Promise<{ escrowId: string; order: string; buyerEmail: string; sellerEmail: string }> {
    await createGateway({ provider: 'sandbox', feePercent: '0.7' });
    const made = await createEscrow({ amount: AMOUNT });
    const key = await issueKey(made.buyer.id);
    const res = await api().post(`/api/escrows/${made.escrow.id}/pay`).set('Authorization', `Bearer ${key}`).send({ method: 'qris' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return { escrowId: made.escrow.id, order: res.body.data.gateway_order_id as string, buyerEmail: made.buyer.email, sellerEmail: made.seller.email };
  }

  it('a paid escrow is one trace: callback request, reconciliation, notice job and e-mail job, parented through the callback and outbox rows', async () => {
    const link = await pendingLink();
    let said = '';
    let apiSaid = '';
    const start = (which: 'api' | 'worker', env: Record<string, string>): Traced => {
      const spansFile = path.join(dir, `${which}.jsonl`);
      const child = spawn(TSX, ['test/helpers/traced-process.ts', which], {
        env: { ...process.env, LOG_LEVEL: 'warn', TRACE_SPANS_OUT: spansFile, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout?.on('data', (c: Buffer) => {
        said += `[${which}] ${c.toString()}`;
        if (which === 'api') apiSaid += c.toString();
      });
      child.stderr?.on('data', (c: Buffer) => (said += `[${which}] ${c.toString()}`));
      return { child, spansFile };
    };
    // PORT=0: the port it listens on is read from its log (one picked beforehand could be taken by a parallel test file's server).
    const apiProcess = start('api', { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' });
    // Stalled-job checks every 250 ms: BullMQ's housekeeping, which must start no traces.
    const workerProcess = start('worker', { OUTBOX_POLL_MS: '50', WORKER_STALLED_CHECK_MS: '250', SMTP_URL: config.smtpUrl, NOTIFICATION_EMAILS: '1' });
    try {
      const port = await apiPort(() => apiSaid, 30_000, 'the API to listen');
      await until(
        'the API',
        30_000,
        async () => {
          try {
            return (await fetch(`http://127.0.0.1:${port}/readyz`)).ok || undefined;
          } catch {
            return undefined;
          }
        },
        () => said,
      );
      // The gateway's delivery, as the sandbox gateway signs it, carrying a trace context of
      // the caller's own choosing, which the API must not take up.
      const cb = sandboxCallback(link.order, 'paid', TOTAL);
      const res = await fetch(`http://127.0.0.1:${port}${CALLBACK_PATH}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Sandbox-Signature': cb.signature, traceparent: FORGED_TRACEPARENT, tracestate: 'caller=1' },
        body: cb.body,
      });
      expect(res.status, await res.clone().text()).to.equal(200);
      // Both parties are told by e-mail once the worker reconciled the payment.
      await until('both notice e-mails', 60_000, () => Promise.resolve(mail.to(link.buyerEmail).length > 0 && mail.to(link.sellerEmail).length > 0 ? true : undefined), () => said);
      await until(
        'the e-mails marked sent',
        10_000,
        async () => ((await db('outbound_emails').whereNull('sent_at').first()) === undefined ? true : undefined),
        () => said,
      );
    } finally {
      apiProcess.child.kill('SIGTERM');
      workerProcess.child.kill('SIGTERM');
    }
    expect(await exitOf(apiProcess.child, 20_000), said).to.equal(0);
    expect(await exitOf(workerProcess.child, 30_000), said).to.equal(0);
    expect(((await db('escrows').where({ id: link.escrowId }).first()) as { status: string }).status).to.equal('paid');

    const apiSpans = await spansOf(apiProcess);
    const workerSpans = await spansOf(workerProcess);
    expect(new Set(apiSpans.map((s) => s.service))).to.deep.equal(new Set(['api']));
    expect(new Set(workerSpans.map((s) => s.service))).to.deep.equal(new Set(['worker']));

    // The story starts at the gateway's request: the API's server span, named after its route, the root of the trace.
    const server = apiSpans.find((s) => s.kind === SPAN.server && s.scope === '@opentelemetry/instrumentation-http' && s.name === `POST ${CALLBACK_PATH}`);
    expect(server, apiSpans.map((s) => s.name).join(', ')).to.not.equal(undefined);
    expect(server!.attributes['http.route']).to.equal(CALLBACK_PATH);
    // The root of a trace of our own: the caller's traceparent chose neither its parent nor its trace id.
    expect(server!.parentSpanId).to.equal(null);
    const traceId = server!.traceId;
    expect(traceId).to.match(/^[0-9a-f]{32}$/).and.not.equal(FORGED_TRACEPARENT.split('-')[1]);
    expect([...apiSpans, ...workerSpans].filter((s) => s.traceId === FORGED_TRACEPARENT.split('-')[1])).to.deep.equal([]);
    const story = [...apiSpans, ...workerSpans].filter((s) => s.traceId === traceId);
    const byId = new Map(story.map((s) => [s.spanId, s]));
    const named = (name: string, kind: number) => story.filter((s) => s.name === name && s.kind === kind);
    const only = (name: string, kind: number): SpanRecord => {
      const found = named(name, kind);
      expect(found, `${name} in the trace: ${story.map((s) => `${s.service}:${s.name}`).join(', ')}`).to.have.length(1);
      return found[0]!;
    };
    /** Whether `s` is `ancestor` or below it. */
    const under = (s: SpanRecord, ancestor: SpanRecord): boolean => {
      for (let at: SpanRecord | undefined = s; at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined) if (at.spanId === ancestor.spanId) return true;
      return false;
    };

    // One tree: the server span is the only root; every other span's parent is in the trace.
    expect(story.filter((s) => s.parentSpanId === null)).to.deep.equal([server]);
    for (const s of story) if (s.parentSpanId !== null) expect(byId.has(s.parentSpanId), `${s.service}:${s.name}'s parent is in the trace`).to.equal(true);

    // API: koa's spans and the stored callback's INSERT (node-postgres) under the request.
    const dispatch = story.find((s) => s.service === 'api' && s.scope === '@opentelemetry/instrumentation-koa' && s.name === 'middleware - dispatch');
    expect(dispatch && under(dispatch, server!), 'koa\'s span of the dispatch under the request').to.equal(true);
    const storeCallback = story.find((s) => s.service === 'api' && s.scope === '@opentelemetry/instrumentation-pg' && /INSERT INTO payment_callbacks/.test(JSON.stringify(s.attributes)));
    expect(storeCallback, 'the INSERT of the callback in the trace').to.not.equal(undefined);
    expect(under(storeCallback!, dispatch!)).to.equal(true);

    // The stored callback keeps a span of the request; the inbox's reconciliation is its child.
    const [stored] = await traceContexts('payment_callbacks');
    const storedBy = parentOf(stored!.trace_context);
    expect(storedBy.traceId).to.equal(traceId);
    expect(byId.get(storedBy.spanId)?.service).to.equal('api');
    const reconcile = only('gateway-callbacks reconcile', SPAN.consumer);
    expect(reconcile.service).to.equal('worker');
    expect(reconcile.parentSpanId).to.equal(storedBy.spanId);
    // The payment marked paid in the reconciliation's transaction.
    expect(story.some((s) => s.scope === '@opentelemetry/instrumentation-pg' && /UPDATE|payments/.test(JSON.stringify(s.attributes)) && under(s, reconcile))).to.equal(true);

    // The notice's outbox row keeps the reconciliation's span; BullMQ's producer span (the relay's add) is its child, the job's consumer span the producer's.
    const noticeRows = await traceContexts('outbox', 'notifications.create-batch');
    expect(noticeRows.map((r) => parentOf(r.trace_context))).to.deep.equal([{ traceId, spanId: reconcile.spanId }]);
    const addNotices = only('addBulk notifications', SPAN.producer);
    expect(addNotices.parentSpanId).to.equal(reconcile.spanId);
    const notices = only('process notifications', SPAN.consumer);
    expect(notices.parentSpanId).to.equal(addNotices.spanId);
    // Redis (ioredis) under the relay's add, Postgres under the job.
    expect(story.some((s) => s.scope === '@opentelemetry/instrumentation-ioredis' && under(s, addNotices))).to.equal(true);
    expect(story.some((s) => s.scope === '@opentelemetry/instrumentation-pg' && /notifications/.test(JSON.stringify(s.attributes)) && under(s, notices))).to.equal(true);

    // The e-mails' outbox rows keep the notices job's span; each mail job and its SMTP exchange continue it.
    const mailRows = await traceContexts('outbox', 'mail.send');
    expect(mailRows).to.have.length(2);
    for (const row of mailRows) expect(parentOf(row.trace_context)).to.deep.equal({ traceId, spanId: notices.spanId });
    const addMail = only('addBulk mail', SPAN.producer);
    expect(addMail.parentSpanId).to.equal(notices.spanId);
    const mailJobs = named('process mail', SPAN.consumer);
    expect(mailJobs).to.have.length(2);
    const sends = named('smtp send', SPAN.client);
    expect(sends).to.have.length(2);
    for (const job of mailJobs) {
      expect(job.parentSpanId).to.equal(addMail.spanId);
      expect(sends.filter((s) => s.parentSpanId === job.spanId)).to.have.length(1);
    }
    // BullMQ's housekeeping (each queue's stalled-job check, here every 250 ms) starts no trace.
    expect(workerSpans.filter((s) => /^(moveStalledJobsToWait|startStalledCheckTimer|close) /.test(s.name)).map((s) => s.name)).to.deep.equal([]);
    // No address or subject on any span of the story.
    const everything = JSON.stringify(story);
    for (const secret of [link.buyerEmail, link.sellerEmail]) expect(everything).to.not.contain(secret);
  });

  it('with tracing off rows keep no trace context and the statements are the ones they always were', async () => {
    expect(tracingOn()).to.equal(false);
    expect(currentTraceparent()).to.equal(null);
    const item = outboxItem('mail.send', { emailId: '00000000-0000-4000-8000-000000000000' });
    expect(outboxInsertSql(db, [item])!.sql).to.equal('insert into "outbox" ("available_at", "created_at", "job", "payload", "queue") values (?, ?, ?, ?, ?)');
    expect(outboxInsertWhereSql(item, 'true', []).sql).to.equal('INSERT INTO outbox (queue, job, payload, available_at, created_at) SELECT ?, ?, ?::jsonb, ?::timestamptz, ?::timestamptz WHERE true');

    noticeSettings.emails = true;
    try {
      const link = await pendingLink();
      const cb = sandboxCallback(link.order, 'paid', TOTAL);
      const res = await api().post(CALLBACK_PATH).set('Content-Type', 'application/json').set('X-Sandbox-Signature', cb.signature).send(cb.body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      await runJobs();
      await runJobs();
    } finally {
      noticeSettings.emails = false;
    }
    const jobs = (await db('outbox').select<{ job: string }[]>('job')).map((r) => r.job);
    expect(jobs).to.include.members(['notifications.create-batch', 'mail.send']);
    expect(await countRows('outbox')).to.equal(jobs.length);
    expect(await countRows('outbox', (q) => q.whereNotNull('trace_context'))).to.equal(0);
    expect(await countRows('payment_callbacks')).to.equal(1);
    expect(await countRows('payment_callbacks', (q) => q.whereNotNull('trace_context'))).to.equal(0);
  });
});
