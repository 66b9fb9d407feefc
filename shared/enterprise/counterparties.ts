/** A workspace's counterparties (decision D7): list newest first, add, change any subset of the fields. */
import { clock } from '../clock.js';
import { db, inTransaction, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { byOf, type WorkspaceActor } from './access.js';
import * as repo from './counterparties-repo.js';
import type { CounterpartyRow } from './counterparties-repo.js';
import { enterpriseErrors } from './errors.js';
import { appendEvent } from './events.js';
import { lockWorkspace } from './repo.js';

export type { CounterpartyRow } from './counterparties-repo.js';

export interface CounterpartyInput {
  name: string;
  country_code: string;
  relationship: 'seller' | 'buyer';
  email?: string;
}

export type CounterpartyPatch = Partial<Omit<CounterpartyInput, 'email'>> & { email?: string | null };

export async function listCounterparties(actor: WorkspaceActor, page: number, limit: number) {
  return repo.listCounterparties(db, actor.workspaceId, page, limit);
}

export async function createCounterparty(trx: Db | undefined, actor: WorkspaceActor, input: CounterpartyInput): Promise<CounterpartyRow> {
  return inTransaction(trx, async (t) => {
    const now = clock.now();
    const row = await repo.insertCounterparty(t, {
      workspace_id: actor.workspaceId,
      name: input.name,
      country_code: input.country_code,
      relationship: input.relationship,
      email: input.email ?? null,
      kyb_status: 'not_started',
      created_by: actor.userId,
      created_at: now,
      updated_at: now,
    });
    await appendEvent(t, actor.workspaceId, {
      event: 'counterparty.created',
      entityType: 'counterparty',
      entityId: row.id,
      actor: byOf(actor),
      summary: `Counterparty ${row.name} added`,
    });
    return row;
  });
}

export async function updateCounterparty(trx: Db | undefined, actor: WorkspaceActor, id: string, input: CounterpartyPatch): Promise<CounterpartyRow> {
  if (!isUuid(id)) throw enterpriseErrors.counterpartyNotFound();
  return inTransaction(trx, async (t) => {
    // The workspace row before the counterparty's: the order KYB review and verification take.
    await lockWorkspace(t, actor.workspaceId);
    const row = await repo.updateCounterparty(t, actor.workspaceId, id, { ...input, updated_at: clock.now() });
    if (!row) throw enterpriseErrors.counterpartyNotFound();
    await appendEvent(t, actor.workspaceId, {
      event: 'counterparty.updated',
      entityType: 'counterparty',
      entityId: row.id,
      actor: byOf(actor),
      summary: `Counterparty ${row.name} changed: ${Object.keys(input).sort().join(', ')}`,
    });
    return row;
  });
}
