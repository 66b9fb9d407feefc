/** The adapter registry: provider name -> adapter. Manual transfer gateways need no adapter. */
import { midtransAdapter } from './midtrans.js';
import { sandboxAdapter } from './sandbox.js';
import { tripayAdapter } from './tripay.js';
import { xenditAdapter } from './xendit.js';
import type { GatewayAdapter, InboundDelivery } from './types.js';

/** Every adapter the code has; each is loaded only when its configuration is present. */
const ADAPTERS: readonly GatewayAdapter[] = [sandboxAdapter, midtransAdapter, xenditAdapter, tripayAdapter];

/** The loaded adapter of a provider, or undefined (503 ADAPTER_NOT_LOADED). */
export function adapterFor(provider: string): GatewayAdapter | undefined {
  const adapter = ADAPTERS.find((a) => a.name === provider);
  return adapter && adapter.loaded() ? adapter : undefined;
}

/**
 * Whether the provider's callbacks sign their status (loaded or not here); an unknown provider
 * does not, so its word is never taken alone.
 */
export function signsStatus(provider: string): boolean {
  return ADAPTERS.find((a) => a.name === provider)?.signsStatus ?? false;
}

/** Which loaded adapter an inbound delivery comes from (headers and payload shape). */
export function detectProvider(delivery: InboundDelivery): GatewayAdapter | undefined {
  return ADAPTERS.find((a) => a.loaded() && a.recognises(delivery));
}

export * from './types.js';
