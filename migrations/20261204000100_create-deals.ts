import type { Knex } from 'knex';

/**
 * Enterprise deals (enterprise spec 2 Template, Deal, Milestone, Deal fee, Fee terms; 3;
 * 4.3-4.5; D7): the workspace's fee terms (operator pricing, the default allocation),
 * templates, deals with the fee fixed at creation (frozen at activation), and milestones
 * with their fee shares. A deal's totals and status are computed from its milestones and
 * never stored (shared/deals/states.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE workspaces
      ADD COLUMN last_deal_number integer NOT NULL DEFAULT 0,
      ADD COLUMN fee_rate_bp integer,
      ADD COLUMN fee_min bigint,
      ADD COLUMN fee_tiers jsonb NOT NULL DEFAULT '[]'::jsonb,
      ADD COLUMN fee_pricing_set_by text,
      ADD COLUMN fee_default_allocation text NOT NULL DEFAULT 'buyer',
      ADD COLUMN fee_default_buyer_percent integer NOT NULL DEFAULT 100,
      ADD CONSTRAINT workspaces_fee_rate CHECK (fee_rate_bp IS NULL OR fee_rate_bp BETWEEN 0 AND 10000),
      ADD CONSTRAINT workspaces_fee_min CHECK (fee_min IS NULL OR fee_min >= 0),
      ADD CONSTRAINT workspaces_fee_allocation CHECK (fee_default_allocation IN ('buyer', 'seller', 'split')),
      ADD CONSTRAINT workspaces_fee_percent CHECK (fee_default_buyer_percent BETWEEN 0 AND 100);

    CREATE TABLE deal_templates (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      milestones jsonb NOT NULL,
      created_by uuid NOT NULL REFERENCES users (id),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT deal_templates_milestones_array CHECK (jsonb_typeof(milestones) = 'array')
    );
    CREATE INDEX deal_templates_workspace ON deal_templates (workspace_id, name);

    CREATE TABLE deals (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      reference text NOT NULL,
      title text NOT NULL,
      description text,
      external_ref text,
      currency char(3) NOT NULL,
      counterparty_id uuid NOT NULL REFERENCES counterparties (id),
      owner_id uuid NOT NULL REFERENCES users (id),
      is_test boolean NOT NULL,
      activated_at timestamptz,
      terms_review boolean NOT NULL DEFAULT false,
      cancelled_at timestamptz,
      fee_rate_bp integer NOT NULL,
      fee_min bigint NOT NULL,
      fee_tier_min_volume bigint,
      fee_volume_basis bigint NOT NULL,
      fee_allocation text NOT NULL,
      fee_buyer_percent integer NOT NULL,
      platform_fee bigint NOT NULL,
      buyer_fee bigint NOT NULL,
      seller_fee bigint NOT NULL,
      fee_frozen boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT deals_reference_unique UNIQUE (workspace_id, reference),
      CONSTRAINT deals_fee_allocation CHECK (fee_allocation IN ('buyer', 'seller', 'split')),
      CONSTRAINT deals_fee_percent CHECK (fee_buyer_percent BETWEEN 0 AND 100),
      CONSTRAINT deals_fee_sum CHECK (buyer_fee + seller_fee = platform_fee AND buyer_fee >= 0 AND seller_fee >= 0)
    );
    CREATE INDEX deals_workspace ON deals (workspace_id, created_at DESC);

    CREATE TABLE deal_milestones (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      deal_id uuid NOT NULL REFERENCES deals (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      sequence_no integer NOT NULL,
      title text NOT NULL,
      required_evidence text,
      amount bigint NOT NULL,
      status text NOT NULL DEFAULT 'draft',
      due_at timestamptz,
      funded_at timestamptz,
      funding_method text,
      funding_reference text,
      evidence_summary text,
      evidence_document_ids jsonb NOT NULL DEFAULT '[]'::jsonb,
      evidence_submitted_at timestamptz,
      evidence_submitted_by uuid REFERENCES users (id),
      approved_at timestamptz,
      released_at timestamptz,
      disputed_at timestamptz,
      dispute_reason text,
      approvals_required integer NOT NULL DEFAULT 1,
      buyer_fee bigint NOT NULL,
      seller_fee bigint NOT NULL,
      funding_amount bigint NOT NULL,
      payout_amount bigint NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT deal_milestones_status CHECK (status IN ('draft', 'awaiting_funding', 'funded', 'evidence_submitted', 'revision_requested', 'approved', 'released', 'disputed', 'cancelled')),
      CONSTRAINT deal_milestones_amount CHECK (amount BETWEEN 10000 AND 50000000000),
      CONSTRAINT deal_milestones_shares CHECK (funding_amount = amount + buyer_fee AND payout_amount = amount - seller_fee AND payout_amount >= 1),
      CONSTRAINT deal_milestones_approvals CHECK (approvals_required IN (1, 2)),
      CONSTRAINT deal_milestones_sequence UNIQUE (deal_id, sequence_no)
    );
    CREATE INDEX deal_milestones_workspace_status ON deal_milestones (workspace_id, status);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE deal_milestones;
    DROP TABLE deals;
    DROP TABLE deal_templates;
    ALTER TABLE workspaces
      DROP CONSTRAINT workspaces_fee_rate, DROP CONSTRAINT workspaces_fee_min,
      DROP CONSTRAINT workspaces_fee_allocation, DROP CONSTRAINT workspaces_fee_percent,
      DROP COLUMN last_deal_number, DROP COLUMN fee_rate_bp, DROP COLUMN fee_min, DROP COLUMN fee_tiers,
      DROP COLUMN fee_pricing_set_by, DROP COLUMN fee_default_allocation, DROP COLUMN fee_default_buyer_percent;
  `);
}
