/**
 * API entry. Tracing, when configured, starts before anything it traces is loaded (pg,
 * ioredis, koa and http are patched as they load: shared/tracing.ts); then the API itself
 * (api/serve.ts).
 */
import { startTracing } from '../shared/tracing.js';

await startTracing('api');
await import('./serve.js');
