/**
 * The typed client of the published contract (issue 45): `openapi.d.ts` is generated from
 * docs/openapi.yaml by openapi-typescript (`npm run client:generate`; CI regenerates it and
 * fails on any difference), and requests go through openapi-fetch, so a path, a body or a
 * field the document does not describe is a type error.
 *
 *   const api = escrowClient({ baseUrl: 'http://localhost:3000' });
 *   const { data, error } = await api.GET('/v1/auth/me');
 */
import createClient, { type ClientOptions } from 'openapi-fetch';
import type { paths } from './openapi.js';

export type { components, operations, paths } from './openapi.js';

export function escrowClient(options: ClientOptions = {}) {
  return createClient<paths>(options);
}

export type EscrowClient = ReturnType<typeof escrowClient>;
