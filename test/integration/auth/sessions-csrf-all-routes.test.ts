/**
 * CSRF on every write: walks every route the routers register, and for each write
 * (POST, PUT, PATCH, DELETE) that needs credentials, checks that a session without the
 * X-CSRF-Token header is refused 403 CSRF_FAILED, so a route added later is covered too.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp, routers } from '../../../api/app.js';
import { createUser, signIn } from '../../factories/users.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function writeRoutes(): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  for (const router of routers) {
    for (const layer of router.stack) {
      if (typeof layer.path !== 'string') continue;
      for (const method of layer.methods) {
        if (WRITES.has(method)) out.push({ method, path: layer.path.replace(/:\w+/g, randomUUID()) });
      }
    }
  }
  return out;
}

describe('sessions: CSRF on every registered write route', () => {
  it('refuses a session write without X-CSRF-Token on every route that needs credentials', async () => {
    const routes = writeRoutes();
    expect(routes.length).to.be.greaterThan(10);
    const anonymous = supertest(createApp().callback());
    const { user, password } = await createUser();
    const agent = supertest.agent(createApp().callback());
    await signIn(agent, user.email, password);

    let guarded = 0;
    for (const { method, path } of routes) {
      const verb = method.toLowerCase() as 'post' | 'put' | 'patch' | 'delete';
      const open = await anonymous[verb](path).send({});
      if (open.status !== 401 || open.body.error?.code !== 'UNAUTHORIZED') continue; // a public route
      guarded += 1;
      const res = await agent[verb](path).send({});
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.equal(403);
      expect(res.body.error.code, `${method} ${path}`).to.equal('CSRF_FAILED');
      const wrong = await agent[verb](path).set('X-CSRF-Token', 'not-the-token').send({});
      expect(wrong.body.error?.code, `${method} ${path} with a wrong token`).to.equal('CSRF_FAILED');
    }
    // The session routes of today: logout, PATCH me, rotate, password change, verify-email
    // (+ resend) and the two staff routes.
    expect(guarded).to.be.at.least(8);
    // Still signed in: none of the refused writes logged the session out.
    await agent.get('/v1/auth/me').expect(200);
  });
});
