import type { Knex } from 'knex';

/**
 * Double-entry ledger. Postings are append-only; every entry's lines sum to zero (checked
 * by a deferred constraint trigger at commit); account balances are a projection kept in
 * the same transaction and may not go negative unless the account allows it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE ledger_accounts (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      code text NOT NULL,
      kind text NOT NULL,
      user_id uuid REFERENCES users (id) ON DELETE RESTRICT,
      balance bigint NOT NULL DEFAULT 0,
      allow_negative boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      CONSTRAINT ledger_accounts_code_unique UNIQUE (code),
      CONSTRAINT ledger_accounts_kind_valid CHECK (kind IN ('user', 'escrow', 'platform_fee', 'gateway_clearing', 'payout_in_flight', 'system')),
      CONSTRAINT ledger_accounts_user_kind CHECK ((kind = 'user') = (user_id IS NOT NULL)),
      CONSTRAINT ledger_accounts_balance_non_negative CHECK (allow_negative OR balance >= 0)
    );
    CREATE UNIQUE INDEX ledger_accounts_user_unique ON ledger_accounts (user_id) WHERE user_id IS NOT NULL;

    CREATE TABLE journal_entries (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      kind text NOT NULL,
      ref_type text,
      ref_id text,
      posting_key text,
      memo text,
      created_at timestamptz NOT NULL,
      CONSTRAINT journal_entries_posting_key_unique UNIQUE (posting_key)
    );
    CREATE INDEX journal_entries_ref ON journal_entries (ref_type, ref_id);

    CREATE TABLE journal_lines (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      entry_id bigint NOT NULL REFERENCES journal_entries (id) ON DELETE RESTRICT,
      account_id bigint NOT NULL REFERENCES ledger_accounts (id) ON DELETE RESTRICT,
      amount bigint NOT NULL,
      CONSTRAINT journal_lines_amount_non_zero CHECK (amount <> 0)
    );
    CREATE INDEX journal_lines_entry ON journal_lines (entry_id);
    CREATE INDEX journal_lines_account ON journal_lines (account_id);

    CREATE FUNCTION journal_entry_must_balance() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      eid bigint;
      total numeric;
      n integer;
    BEGIN
      IF TG_TABLE_NAME = 'journal_entries' THEN eid := NEW.id; ELSE eid := NEW.entry_id; END IF;
      SELECT COALESCE(SUM(amount), 0), COUNT(*) INTO total, n FROM journal_lines WHERE entry_id = eid;
      IF n < 2 THEN
        RAISE EXCEPTION 'journal entry % has % line(s); at least 2 are required', eid, n
          USING ERRCODE = '23514', CONSTRAINT = 'journal_entries_balanced';
      END IF;
      IF total <> 0 THEN
        RAISE EXCEPTION 'journal entry % does not balance (sum %)', eid, total
          USING ERRCODE = '23514', CONSTRAINT = 'journal_entries_balanced';
      END IF;
      RETURN NULL;
    END $$;

    CREATE CONSTRAINT TRIGGER journal_lines_balanced AFTER INSERT ON journal_lines
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION journal_entry_must_balance();
    CREATE CONSTRAINT TRIGGER journal_entries_balanced AFTER INSERT ON journal_entries
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION journal_entry_must_balance();

    CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION '% is append-only; post a reversing entry instead', TG_TABLE_NAME
        USING ERRCODE = '42501';
    END $$;
    CREATE TRIGGER journal_lines_append_only BEFORE UPDATE OR DELETE ON journal_lines
      FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
    CREATE TRIGGER journal_entries_append_only BEFORE UPDATE OR DELETE ON journal_entries
      FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE journal_lines;
    DROP TABLE journal_entries;
    DROP TABLE ledger_accounts;
    DROP FUNCTION journal_entry_must_balance();
    DROP FUNCTION ledger_append_only();
  `);
}
