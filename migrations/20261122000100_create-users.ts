import type { Knex } from 'knex';

/**
 * Users. `two_factor_method` also admits 'totp' for accounts carried over from the old
 * system: sign-in answers them 501 TWO_FACTOR_METHOD_UNSUPPORTED until they choose
 * e-mail (only 'none' and 'email' can be chosen through the API).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pgcrypto');
  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('email').notNullable();
    t.text('username').notNullable();
    t.text('full_name').notNullable();
    t.text('phone');
    t.text('password_hash');
    t.text('role').notNullable().defaultTo('user');
    t.text('status').notNullable().defaultTo('active');
    t.text('kyc_status').notNullable().defaultTo('unverified');
    t.timestamp('email_verified_at', { useTz: true });
    t.text('two_factor_method').notNullable().defaultTo('none');
    t.timestamp('dashboard_tour_completed_at', { useTz: true });
    t.text('social_instagram');
    t.text('social_shopee');
    t.text('social_tiktokshop');
    t.bigInteger('balance').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
  });
  await knex.raw(`
    ALTER TABLE users
      ADD CONSTRAINT users_balance_non_negative CHECK (balance >= 0),
      ADD CONSTRAINT users_role_valid CHECK (role IN ('user', 'admin')),
      ADD CONSTRAINT users_status_valid CHECK (status IN ('active', 'suspended', 'closed', 'deleting')),
      ADD CONSTRAINT users_two_factor_method_valid CHECK (two_factor_method IN ('none', 'email', 'totp')),
      ADD CONSTRAINT users_username_format CHECK (username ~ '^[a-z0-9_.]{3,30}$'),
      ADD CONSTRAINT users_email_lower CHECK (email = lower(email))
  `);
  await knex.raw('CREATE UNIQUE INDEX users_email_unique ON users (email)');
  await knex.raw('CREATE UNIQUE INDEX users_username_unique ON users (username)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('users');
}
