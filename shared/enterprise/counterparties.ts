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

/**
 * At most this many counterparties per workspace (issue 42, review R3; decision 0020 "Issue 42:
 * one tenant's counterparties"): every per-counterparty read of the workspace (the overview's
 * alerts, the list's count) stays bounded. Counted under the workspace lock, so two creates
 * racing for the last place cannot both pass; counterparties are never deleted.
 */
export const COUNTERPARTIES_PER_WORKSPACE = 10_000;

export async function createCounterparty(trx: Db | undefined, actor: WorkspaceActor, input: CounterpartyInput): Promise<CounterpartyRow> {
  return inTransaction(trx, async (t) => {
    await lockWorkspace(t, actor.workspaceId);
    if ((await repo.countCounterparties(t, actor.workspaceId)) >= COUNTERPARTIES_PER_WORKSPACE) {
      throw enterpriseErrors.counterpartyLimit(COUNTERPARTIES_PER_WORKSPACE);
    }
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

/**
 * PATCH /counterparties/:id: any subset of the fields. A verified counterparty whose name or
 * country changes is no longer verified (issue 42; decision 0019 "Issue 42: authority when
 * money moves"): what staff verified was that name in that country. Its kyb_status goes back
 * to `pending` (verification wanted again, by the operator: D10 verify, as after a change
 * request) with the event counterparty.unverified after counterparty.updated; from then on a
 * live deal's activation waits in terms_review until it is verified again (D7). Sending the
 * name or country it already has changes nothing about its verification.
 */
export async function updateCounterparty(trx: Db | undefined, actor: WorkspaceActor, id: string, input: CounterpartyPatch): Promise<CounterpartyRow> {
  if (!isUuid(id)) throw enterpriseErrors.counterpartyNotFound();
  return inTransaction(trx, async (t) => {
    // The workspace row before the counterparty's: the order KYB review and verification take.
    await lockWorkspace(t, actor.workspaceId);
    const before = await repo.counterpartyById(t, id, true);
    if (!before || before.workspace_id !== actor.workspaceId) throw enterpriseErrors.counterpartyNotFound();
    const identityChanged = (input.name !== undefined && input.name !== before.name) || (input.country_code !== undefined && input.country_code !== before.country_code);
    const unverified = identityChanged && before.kyb_status === 'verified';
    const row = await repo.updateCounterparty(t, actor.workspaceId, id, { ...input, ...(unverified ? { kyb_status: 'pending' } : {}), updated_at: clock.now() });
    if (!row) throw enterpriseErrors.counterpartyNotFound();
    await appendEvent(t, actor.workspaceId, {
      event: 'counterparty.updated',
      entityType: 'counterparty',
      entityId: row.id,
      actor: byOf(actor),
      summary: `Counterparty ${row.name} changed: ${Object.keys(input).sort().join(', ')}`,
    });
    if (unverified) {
      const what = [input.name !== undefined && input.name !== before.name ? `name (was ${before.name})` : null, input.country_code !== undefined && input.country_code !== before.country_code ? `country (was ${before.country_code})` : null].filter((x) => x !== null);
      await appendEvent(t, actor.workspaceId, {
        event: 'counterparty.unverified',
        entityType: 'counterparty',
        entityId: row.id,
        actor: byOf(actor),
        summary: `Counterparty ${row.name} is no longer verified: its ${what.join(' and ')} changed; live deals wait in terms review until it is verified again`,
      });
    }
    return row;
  });
}
