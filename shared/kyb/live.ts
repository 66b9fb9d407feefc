/**
 * The switch from sandbox to live (enterprise spec 3: "On KYB approval the workspace
 * switches to live by itself; unfinished milestones of sandbox deals are then cancelled").
 * It runs inside the approval's transaction: the workspace row, whatever the registered
 * hooks change (the deals feature registers the cancelling of unfinished sandbox
 * milestones) and the event commit together or not at all.
 *
 * Issue 42: every payout instruction of the workspace goes back to pending_verification
 * (its version bumped) in the same transaction: a verification made in the sandbox never
 * pays live money; staff verify each again, now signing for live money.
 */
import type { Knex } from 'knex';
import { clock } from '../clock.js';
import { appendEvent } from '../enterprise/events.js';
import { updateWorkspace, type WorkspaceRow } from '../enterprise/repo.js';
import { closeSandboxDeals } from '../deals/lifecycle.js';
import { unverifyForLive } from '../payouts/instructions.js';

/** Work that must happen in the same transaction as a workspace going live. */
export type LiveHook = (trx: Knex.Transaction, workspaceId: string) => Promise<void>;

const hooks: LiveHook[] = [];

/** Registers a hook; answers a function that removes it again (tests). */
export function onWorkspaceLive(hook: LiveHook): () => void {
  hooks.push(hook);
  return () => {
    const i = hooks.indexOf(hook);
    if (i >= 0) hooks.splice(i, 1);
  };
}

/** Switches an approved workspace to live: verified, the assigned risk tier, the approved legal name. */
export async function goLive(trx: Knex.Transaction, workspace: WorkspaceRow, input: { riskTier: string; legalName: string | null; operatorLabel: string }): Promise<void> {
  await updateWorkspace(trx, workspace.id, {
    is_sandbox: false,
    kyb_status: 'verified',
    risk_tier: input.riskTier,
    legal_name: input.legalName ?? workspace.legal_name,
    updated_at: clock.now(),
  });
  await closeSandboxDeals(trx, workspace.id, input.operatorLabel);
  await unverifyForLive(trx, workspace.id, input.operatorLabel);
  for (const hook of [...hooks]) await hook(trx, workspace.id);
  await appendEvent(trx, workspace.id, {
    event: 'workspace.live',
    entityType: 'workspace',
    entityId: workspace.id,
    actorLabel: input.operatorLabel,
    summary: `${workspace.display_name} is live: KYB approved`,
  });
}
