/**
 * The cheap notifier behind the event feed (decision 0020 "Webhooks"): `appendEvents` writes
 * the nudge in the change's transaction. When the workspace has an active endpoint it
 * writes one outbox row, `webhooks.dispatch`, so after the change commits the worker nudges
 * each endpoint's delivery. At most one check (and one row) per transaction and workspace,
 * however many events the change appends; a workspace without endpoints costs one indexed
 * lookup per transaction. The sweeper (`webhooks.sweep`) catches anything missed.
 */
import type { Db } from '../db.js';
import { outboxInsertWhereSql, outboxItem } from '../outbox.js';

/** Workspaces already looked at, per transaction (the object is the transaction's own). */
const seen = new WeakMap<object, Set<string>>();

/**
 * The nudge as SQL for `appendEvents`, which writes it in its own statement (a
 * data-modifying CTE of the event INSERT): the outbox row, written only when the workspace
 * has an active endpoint as the statement runs. Undefined
 * when this transaction already looked at the workspace.
 */
export function nudgeWebhooksSql(trx: Db, workspaceId: string): { sql: string; bindings: readonly unknown[] } | undefined {
  let done = seen.get(trx);
  if (done?.has(workspaceId)) return undefined;
  if (!done) {
    done = new Set();
    seen.set(trx, done);
  }
  done.add(workspaceId);
  return outboxInsertWhereSql(
    outboxItem('webhooks.dispatch', { workspace_id: workspaceId }),
    `EXISTS (SELECT 1 FROM webhook_endpoints WHERE workspace_id = ? AND status = 'active')`,
    [workspaceId],
  );
}
