import { expect } from 'chai';
import type { Response } from 'supertest';
import { db } from '../../../shared/db.js';
import { AppError } from '../../../shared/errors.js';
import { suspendUser } from '../../../shared/users/service.js';
import { createUser } from '../../factories/users.js';
import { bearer, newAgent } from '../../helpers/auth-account-support.js';
import { issueKey } from '../../helpers/auth-signin-util.js';

/** An admin and the admin's personal key (stored the way rotation stores it). */
async function adminWithKey() {
  const { user } = await createUser({ role: 'admin' });
  return { admin: user, key: await issueKey(user.id) };
}

const suspendByKey = (key: string, userId: string) =>
  newAgent().post(`/v1/admin/users/${userId}/suspend`).set(...bearer(key)).send({ note: 'race' });

const summary = (r: Response) => `${r.status} ${r.body.error?.code ?? ''}`.trim();

async function activeAdmins(): Promise<number> {
  const row = await db('users').where({ role: 'admin', status: 'active' }).count<{ n: string }[]>({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

describe('accounts: the last active admin cannot be suspended (409 LAST_ADMIN)', function () {
  this.timeout(60_000);

  it('two admins suspending each other at the same moment: exactly one succeeds, one admin stays active', async () => {
    const ROUNDS = 10;
    const outcomes: string[][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts with exactly two active admins: earlier rounds' admins step down.
      await db('users').where({ role: 'admin' }).update({ role: 'user' });
      const a = await adminWithKey();
      const b = await adminWithKey();
      const answers = await Promise.all([suspendByKey(a.key, b.admin.id), suspendByKey(b.key, a.admin.id)]);
      const got = answers.map(summary).sort();
      outcomes.push(got);
      expect(await activeAdmins(), `round ${round}: ${got.join(', ')}`).to.equal(1);
      // One wins; the other hears LAST_ADMIN (or SUSPENDED when its own suspension landed
      // before its credentials were checked).
      expect(got[0], `round ${round}`).to.equal('200');
      expect(['403 SUSPENDED', '409 LAST_ADMIN'], `round ${round}: ${got.join(', ')}`).to.include(got[1]);
      for (const r of answers) {
        if (r.status === 409) expect(r.body.error.message).to.match(/active staff account/i);
      }
      // Only the real move is audited.
      expect(await db('staff_audit').whereIn('target_id', [a.admin.id, b.admin.id]).count({ n: '*' }).first()).to.deep.equal({ n: 1 });
    }
    // The race really happened: the loser passed its own credential check at least once.
    expect(outcomes.some((o) => o.includes('409 LAST_ADMIN')), JSON.stringify(outcomes)).to.equal(true);
  });

  it('refuses to suspend the only active admin (the check does not trust the caller to be one)', async () => {
    const { admin } = await adminWithKey();
    // A staff context whose actor is no longer an active admin (e.g. suspended meanwhile).
    const { user: former } = await createUser({ role: 'admin', status: 'suspended' });
    let caught: unknown;
    try {
      await suspendUser({ actorId: former.id, ip: '127.0.0.1' }, admin.id);
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(AppError);
    expect(caught).to.include({ status: 409, code: 'LAST_ADMIN' });
    expect((await db('users').where({ id: admin.id }).first()).status).to.equal('active');
    expect(await db('staff_audit').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
  });

  it('an admin may still suspend another admin while one stays active, and normal users as before', async () => {
    const a = await adminWithKey();
    const b = await adminWithKey();
    const { user } = await createUser();
    expect(summary(await suspendByKey(a.key, user.id))).to.equal('200');
    expect(summary(await suspendByKey(a.key, b.admin.id))).to.equal('200');
    expect(await activeAdmins()).to.equal(1);
    // A suspended admin is not counted: reactivating it works, and then it may be suspended again.
    await newAgent().post(`/v1/admin/users/${b.admin.id}/reactivate`).set(...bearer(a.key)).send({}).expect(200);
    expect(await activeAdmins()).to.equal(2);
  });
});
