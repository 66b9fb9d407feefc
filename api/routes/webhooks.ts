/**
 * Inbound gateway callbacks (consumer spec section 6): four addresses, one pipeline. The
 * provider is detected from headers and payload, the signature is checked on the raw body
 * (403, nothing stored, when it fails), the delivery is stored and queued for the
 * gateway-callbacks worker, and the answer is immediate.
 */
import { paymentErrors } from '../../shared/payments/errors.js';
import { ingestCallback } from '../../shared/payments/service.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { rawBodyOf } from '../middleware/body.js';

export const webhooksRouter = createRouter('/api/webhooks');

async function receive(ctx: Ctx): Promise<void> {
  const rawBody = rawBodyOf(ctx);
  if (rawBody === undefined) throw paymentErrors.callbackNotJson();
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(ctx.headers)) headers[name.toLowerCase()] = Array.isArray(value) ? value[0] : value;
  const result = await ingestCallback({ headers, rawBody, json: ctx.request.body });
  ok(ctx, { received: true, provider: result.provider, duplicate: result.duplicate });
}

for (const path of ['/inbound', '/ipn', '/payment', '/universal']) webhooksRouter.post(path, receive);
