/** A seller's link-signing secret (decision D3): rotate returns it once; get shows a masked preview. */
import { db } from '../../shared/db.js';
import { linkSecretPreview, rotateLinkSecret } from '../../shared/escrows/links.js';
import { linkSecretRotate } from '../../shared/escrows/schemas.js';
import { ok, createRouter } from '../context.js';
import { auth } from '../middleware/auth.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { validate } from '../middleware/validate.js';

export const partnerRouter = createRouter('/v1/partner');

partnerRouter.get('/link-secret', auth(), async (ctx) => {
  const { secret, created_at } = await linkSecretPreview(db, ctx.state.principal!.userId);
  ok(ctx, { link_secret: secret, created_at: created_at?.toISOString() ?? null });
});

// Rotation invalidates every link signed with the old secret; limited like key rotation.
partnerRouter.post(
  '/link-secret/rotate',
  auth(),
  rateLimit({ name: 'link-secret-rotate', points: 5, durationSeconds: 3600, by: 'user' }),
  validate({ body: linkSecretRotate }),
  async (ctx) => {
    const { secret, created_at } = await rotateLinkSecret(db, ctx.state.principal!.userId);
    ctx.set('Cache-Control', 'no-store');
    ok(ctx, { link_secret: secret, created_at: created_at.toISOString() });
  },
);
