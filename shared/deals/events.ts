/** A deal's events in the workspace feed (spec 6): deal id and reference on each; livemode false for a sandbox deal even on a live workspace. */
import type { Db } from '../db.js';
import { byOf, type WorkspaceActor } from '../enterprise/access.js';
import { appendEvent } from '../enterprise/events.js';
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
  await appendEvent(trx, deal.workspace_id, {
    event,
    entityType: extra.entityType ?? 'deal',
    entityId: extra.entityId ?? deal.id,
    dealId: deal.id,
    dealReference: deal.reference,
    actor: actor ? byOf(actor) : null,
    actorLabel: extra.actorLabel ?? null,
    amount: extra.amount ?? null,
    summary,
    realMoney: !deal.is_test,
  });
}
