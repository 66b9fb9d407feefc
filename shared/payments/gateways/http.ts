/**
 * One JSON call to a gateway under GATEWAY_HTTP_TIMEOUT_MS, shared by the adapters: a
 * non-2xx answer, a timeout, an unreachable host or a body that is not JSON is a
 * GatewayError (502 GATEWAY_ERROR to the buyer). Each adapter adds its own auth header and
 * checks the parsed body's shape.
 */
import { config } from '../../config.js';
import { GatewayError } from './types.js';

export interface GatewayCall {
  /** For messages: "Midtrans", "Xendit", "Tripay". */
  gateway: string;
  url: string;
  method: 'GET' | 'POST';
  authorization: string;
  body?: unknown;
}

export async function gatewayJson(c: GatewayCall): Promise<unknown> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(c.url, {
      method: c.method,
      headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: c.authorization },
      body: c.body === undefined ? undefined : JSON.stringify(c.body),
      redirect: 'error',
      signal: AbortSignal.timeout(config.gateways.httpTimeoutMs),
    });
    text = await res.text();
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    throw new GatewayError(timedOut ? `${c.gateway} did not answer in time` : `${c.gateway} could not be reached`);
  }
  if (res.status < 200 || res.status > 299) throw new GatewayError(`${c.gateway} answered HTTP ${res.status}`, { status: res.status });
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new GatewayError(`${c.gateway} answered with something other than JSON`);
  }
}
