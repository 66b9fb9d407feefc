import { expect } from 'chai';
import { UnrecoverableError, type Job } from 'bullmq';
import { JOBS, type JobData } from '../../../shared/queues.js';
import { buildRegistry, PROCESSOR_FILES, queueProcessor } from '../../../workers/registry.js';
import { mail } from '../../../workers/mail.js';
import { timers } from '../../../workers/timers.js';
import type { Processor, QueueProcessors } from '../../../workers/types.js';

const noop: Processor = () => Promise.resolve('ran');

function fakeJob(name: string): Job<JobData> {
  return { name, data: {} } as unknown as Job<JobData>;
}

describe('platform: worker job registry', () => {
  it('builds from the real processor files with exactly one processor per known job', () => {
    const registry = buildRegistry();
    expect([...registry.keys()].sort()).to.deep.equal(Object.keys(JOBS).sort());
    expect(PROCESSOR_FILES.map((f) => f.queue)).to.have.members(['gateway-callbacks', 'mail', 'notifications', 'payouts', 'timers', 'upload-sanitise', 'exports', 'tracking-refresh', 'webhooks']);
  });

  it('throws when a job has no processor', () => {
    expect(() => buildRegistry([mail])).to.throw(/maintenance\.purge-idempotency-keys has no processor/);
    expect(() => buildRegistry([])).to.throw(/mail\.send has no processor/);
  });

  it('throws when a job has two processors', () => {
    const again: QueueProcessors = { queue: 'timers', processors: { 'maintenance.purge-idempotency-keys': noop } };
    expect(() => buildRegistry([mail, timers, again])).to.throw(/maintenance\.purge-idempotency-keys has two processors/);
    expect(() => buildRegistry([mail, timers, mail])).to.throw(/mail\.send has two processors/);
  });

  it('throws for a processor of an unknown job or one filed under the wrong queue', () => {
    const unknown: QueueProcessors = { queue: 'timers', processors: { 'timers.nonexistent': noop } };
    expect(() => buildRegistry([mail, timers, unknown])).to.throw(/unknown job timers\.nonexistent/);
    const misfiled: QueueProcessors = { queue: 'mail', processors: { 'maintenance.purge-idempotency-keys': noop } };
    expect(() => buildRegistry([mail, misfiled])).to.throw(/belongs to queue timers, not mail/);
  });

  it('dispatches by job name and refuses (unrecoverably) a job sent to the wrong queue', async () => {
    const registry = new Map<string, Processor>([['maintenance.purge-idempotency-keys', noop]]);
    expect(await queueProcessor(registry, 'timers')(fakeJob('maintenance.purge-idempotency-keys'))).to.equal('ran');
    for (const [queue, name] of [
      ['mail', 'maintenance.purge-idempotency-keys'],
      ['timers', 'no.such.job'],
    ] as const) {
      let caught: unknown;
      try {
        await queueProcessor(registry, queue)(fakeJob(name));
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(UnrecoverableError);
    }
  });
});
