import type { Knex } from 'knex';

/** E-mails waiting for the mail worker. Bodies are sealed (AES-GCM) and cleared once sent. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE outbound_emails (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id uuid REFERENCES users (id) ON DELETE SET NULL,
      to_address text NOT NULL,
      template text NOT NULL,
      subject text NOT NULL,
      body_sealed text,
      created_at timestamptz NOT NULL,
      sent_at timestamptz,
      message_id text,
      CONSTRAINT outbound_emails_sent_cleared CHECK (sent_at IS NULL OR body_sealed IS NULL)
    );
    CREATE INDEX outbound_emails_user ON outbound_emails (user_id, created_at DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('outbound_emails');
}
