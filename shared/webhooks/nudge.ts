/**
 * The cheap notifier behind the event feed (decision 0020 "Webhooks"): `appendEvent` calls
 * `nudgeWebhooks` in the change's transaction. When the workspace has an active endpoint it
 * writes one outbox row, `webhooks.dispatch`, so after the change commits the worker nudges
 * each endpoint's delivery. At most one check (and one row) per transaction and workspace,
 * however many events the change appends; a workspace without endpoints costs one indexed
 * lookup per transaction. The sweeper (`webhooks.sweep`) catches anything missed.
 */
import type { Db } from '../db.js';
import { enqueue } from '../outbox.js';
import { hasActiveEndpoint } from './repo.js';

/** Workspaces already looked at, per transaction (the object is the transaction's own). */
const seen = new WeakMap<object, Set<string>>();

export async function nudgeWebhooks(trx: Db, workspaceId: string): Promise<void> {
  let done = seen.get(trx);
  if (done?.has(workspaceId)) return;
  if (!done) {
    done = new Set();
    seen.set(trx, done);
  }
  done.add(workspaceId);
  if (await hasActiveEndpoint(trx, workspaceId)) await enqueue(trx, 'webhooks.dispatch', { workspace_id: workspaceId });
}
