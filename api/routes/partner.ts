/** A seller's link-signing secret (decision D3): rotate returns it once; get shows a masked preview. */
import { db } from '../../shared/db.js';
import { linkSecretPreview, rotateLinkSecret } from '../../shared/escrows/links.js';
import { linkSecretRotate } from '../../shared/escrows/schemas.js';
import { serializeLinkSecret } from '../../shared/escrows/serialize.js';
import { ok, createRouter } from '../context.js';
import { auth } from '../middleware/auth.js';
import { actorOf } from '../kit.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { validate } from '../middleware/validate.js';

export const partnerRouter = createRouter('/v1/partner');

partnerRouter.get('/link-secret', auth(), async (ctx) => {
  ok(ctx, serializeLinkSecret(await linkSecretPreview(db, actorOf(ctx).userId)));
});

// Rotation invalidates every link signed with the old secret; limited like key rotation.
partnerRouter.post(
  '/link-secret/rotate',
  auth(),
  rateLimit({ name: 'link-secret-rotate', points: 5, durationSeconds: 3600, by: 'user' }),
  validate({ body: linkSecretRotate }),
  async (ctx) => {
    const rotated = await rotateLinkSecret(db, actorOf(ctx).userId);
    ctx.set('Cache-Control', 'no-store');
    ok(ctx, serializeLinkSecret(rotated));
  },
);
