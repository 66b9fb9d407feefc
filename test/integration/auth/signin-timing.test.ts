import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createUser } from '../../factories/users.js';
import { botCheckOff, freshIp, median, postLogin, proxiedApi, type Client } from '../../helpers/auth-signin-util.js';

const WRONG = 'Wrong1Horse';
const ROUNDS = 8;

/** Wall time of one sign-in attempt in milliseconds, with its answer checked. */
async function timedFailure(app: Client, email: string): Promise<number> {
  const started = process.hrtime.bigint();
  const res = await postLogin(app, { email, password: WRONG }, freshIp());
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  expect(res.status, JSON.stringify(res.body)).to.equal(401);
  expect(res.body.error.code).to.equal('INVALID_CREDENTIALS');
  return ms;
}

describe('sign-in: timing of unknown e-mail vs wrong password', function () {
  this.timeout(120_000);
  botCheckOff();

  it('takes about the same time for both, and hashes for the unknown e-mail too', async () => {
    // Each e-mail is tried at most twice and each attempt comes from a new address, so the
    // lockout ladder and the per-address limit never cut an attempt short.
    const accounts = await Promise.all(Array.from({ length: ROUNDS / 2 }, () => createUser()));
    const app = proxiedApi();

    // Warm-up (the dummy hash is computed on first use; JIT, pools).
    await timedFailure(app, `warm-${randomUUID()}@example.com`);
    await timedFailure(app, `warm-${randomUUID()}@example.com`);
    // Warm-up of the wrong-password path on a throwaway account.
    const { user: warm } = await createUser();
    await timedFailure(app, warm.email);

    const unknown: number[] = [];
    const wrong: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const account = accounts[i % accounts.length]!.user;
      // Alternate which goes first so drift in machine load hits both alike.
      if (i % 2 === 0) {
        unknown.push(await timedFailure(app, `nobody-${randomUUID()}@example.com`));
        wrong.push(await timedFailure(app, account.email));
      } else {
        wrong.push(await timedFailure(app, account.email));
        unknown.push(await timedFailure(app, `nobody-${randomUUID()}@example.com`));
      }
    }
    const mUnknown = median(unknown);
    const mWrong = median(wrong);
    const detail = `unknown ${unknown.map((n) => n.toFixed(1)).join(',')} (median ${mUnknown.toFixed(1)}); wrong ${wrong
      .map((n) => n.toFixed(1))
      .join(',')} (median ${mWrong.toFixed(1)})`;

    // The same work: medians within 50% of the larger one.
    expect(Math.abs(mUnknown - mWrong), detail).to.be.lessThan(0.5 * Math.max(mUnknown, mWrong));
    // The same code path: an argon2 verify runs for the unknown e-mail (a skipped hash is ~1 ms).
    expect(mUnknown, detail).to.be.at.least(5);
  });
});
