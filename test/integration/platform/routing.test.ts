import { expect } from 'chai';
import { routers } from '../../../api/app.js';
import { isAdminGuard } from '../../../api/middleware/auth.js';
import { db } from '../../../shared/db.js';
import { createUser } from '../../factories/users.js';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';

/** Every other way of spelling `path` that a lenient router or proxy might treat as it. */
function spellings(path: string): string[] {
  const upper = path.toUpperCase();
  const segments = path.split('/');
  const capitalised = segments.map((s) => (s ? s[0]!.toUpperCase() + s.slice(1) : s)).join('/');
  const encodedFirst = path.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
  return [upper, capitalised, `/${path}`, `${path}/`, path.replace('/v1/', '/v1//'), encodedFirst, path.replace('/v1/', '/V1/')];
}

describe('platform: strict, case-sensitive routing and guards on every route', () => {
  it('no spelling of an admin path other than the canonical one reaches a handler (404), whoever calls', async () => {
    const app = api();
    const { user: admin } = await createUser({ role: 'admin' });
    const { user: plain } = await createUser();
    const { user: target } = await createUser();
    const adminKey = await issueKey(admin.id);
    const plainKey = await issueKey(plain.id);
    const canonical = `/v1/admin/users/${target.id}/suspend`;
    for (const path of spellings(canonical)) {
      for (const auth of [undefined, `Bearer ${plainKey}`, `Bearer ${adminKey}`]) {
        const req = app.post(path).send({ note: 'spelling' });
        if (auth) void req.set('Authorization', auth);
        const res = await req;
        expect(res.status, `${path} (${auth ? 'with a key' : 'anonymous'}): ${JSON.stringify(res.body)}`).to.equal(404);
        expect(res.body.error.code).to.equal('NOT_FOUND');
      }
    }
    expect((await db('users').where({ id: target.id }).first()).status).to.equal('active');
    // The canonical path still works for an admin and refuses the others.
    await app.post(canonical).set('Authorization', `Bearer ${plainKey}`).send({}).expect(403);
    await app.post(canonical).send({}).expect(401);
    await app.post(canonical).set('Authorization', `Bearer ${adminKey}`).send({}).expect(200);
  });

  it('other routes match one spelling only too', async () => {
    const app = api();
    const { user } = await createUser();
    const key = await issueKey(user.id);
    await app.get('/v1/auth/me').set('Authorization', `Bearer ${key}`).expect(200);
    for (const path of spellings('/v1/auth/me')) {
      const res = await app.get(path).set('Authorization', `Bearer ${key}`);
      expect(res.status, path).to.equal(404);
    }
    for (const path of ['/HEALTHZ', '/healthz/', '//healthz', '/%68ealthz']) {
      expect((await app.get(path)).status, path).to.equal(404);
    }
  });

  it('the queue dashboard answers only under its exact prefix, and only to an admin session', async () => {
    const app = api();
    for (const path of ['/ADMIN/queues', '/admin/QUEUES', '/Admin/queues/', '//admin/queues', '/%61dmin/queues']) {
      const res = await app.get(path);
      expect(res.status, path).to.equal(404);
    }
    expect((await app.get('/admin/queues')).status).to.equal(401);
  });

  it('every route under /v1/admin carries the admin guard on the route itself', () => {
    interface RouteLayer {
      path: string;
      methods: string[];
      stack: unknown[];
    }
    const layers: RouteLayer[] = routers.flatMap((r) => r.stack as unknown as RouteLayer[]);
    const adminLayers = layers.filter((layer) => layer.path.startsWith('/v1/admin'));
    expect(adminLayers.length).to.be.greaterThan(0);
    for (const layer of adminLayers) {
      expect(layer.methods.length, `${layer.path} is a route, not prefix middleware`).to.be.greaterThan(0);
      expect(layer.stack.some(isAdminGuard), `${layer.path} has requireAdmin()`).to.equal(true);
    }
  });
});
