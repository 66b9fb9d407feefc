import type { Knex } from 'knex';

/**
 * Four-eyes for every milestone not in rupiah (decision 0023): the threshold is in rupiah
 * and no rate is set, so a non-IDR milestone needs two approvers. Milestones that have not
 * been decided yet take the rule now; one waiting for its decision (evidence submitted, its
 * round open with one slot and no approval, or an approval would have approved it) gets its
 * second slot. Approved, released, disputed and cancelled milestones are history and stay.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    INSERT INTO milestone_approvals (milestone_id, workspace_id, round, slot, created_at)
    SELECT m.id, m.workspace_id, m.approval_round, 2, now()
      FROM deal_milestones m JOIN deals d ON d.id = m.deal_id
     WHERE d.currency <> 'IDR' AND m.approvals_required = 1 AND m.status = 'evidence_submitted'
       AND EXISTS (SELECT 1 FROM milestone_approvals a WHERE a.milestone_id = m.id AND a.round = m.approval_round)
       AND NOT EXISTS (SELECT 1 FROM milestone_approvals a WHERE a.milestone_id = m.id AND a.round = m.approval_round AND a.slot = 2);
    UPDATE deal_milestones m SET approvals_required = 2
      FROM deals d
     WHERE d.id = m.deal_id AND d.currency <> 'IDR' AND m.approvals_required = 1
       AND m.status IN ('draft', 'awaiting_funding', 'funded', 'evidence_submitted', 'revision_requested');
  `);
}

export async function down(): Promise<void> {
  // Nothing to undo: a second approver asked for is not taken back.
}
