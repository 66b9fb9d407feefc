/** A deal's events in the workspace feed (spec 6): deal id and reference on each; livemode false for a sandbox deal even on a live workspace. */
import type { Db } from '../db.js';
import { byOf, type WorkspaceActor } from '../enterprise/access.js';
import { appendEventsAtCommit } from '../enterprise/events.js';
import type { DealRow } from './repo.js';

export interface DealEventExtra {
  entityType?: string;
  entityId?: string;
  amount?: number | null;
  /** Operator moves (D9): the operator label, no actor. */
  actorLabel?: string;
}

export async function dealEvent(
  trx: Db,
  actor: WorkspaceActor | null,
  deal: Pick<DealRow, 'id' | 'reference' | 'workspace_id' | 'is_test'>,
  event: string,
  summary: string,
  extra: DealEventExtra = {},
): Promise<void> {
  await dealEvents(trx, actor, deal, [{ event, summary, ...extra }]);
}

/** One of `dealEvents`' events. */
export interface DealEventItem extends DealEventExtra {
  event: string;
  summary: string;
}

/**
 * A change's deal events in the order given, with consecutive seqs, in one statement held
 * for the transaction's COMMIT (appendEventsAtCommit: the deal's foreign key keeps its
 * workspace there); any later statement of the transaction runs after them.
 */
export async function dealEvents(
  trx: Db,
  actor: WorkspaceActor | null,
  deal: Pick<DealRow, 'id' | 'reference' | 'workspace_id' | 'is_test'>,
  items: readonly DealEventItem[],
): Promise<void> {
  await appendEventsAtCommit(
    trx,
    deal.workspace_id,
    items.map((e) => ({
      event: e.event,
      entityType: e.entityType ?? 'deal',
      entityId: e.entityId ?? deal.id,
      dealId: deal.id,
      dealReference: deal.reference,
      actor: actor ? byOf(actor) : null,
      actorLabel: e.actorLabel ?? null,
      amount: e.amount ?? null,
      summary: e.summary,
      sandbox: deal.is_test,
    })),
  );
}
