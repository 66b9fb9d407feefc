/**
 * Worker entry. Tracing, when configured, starts before anything it traces is loaded (pg,
 * ioredis and http are patched as they load: shared/tracing.ts); then the workers themselves
 * (workers/run.ts).
 */
import { startTracing } from '../shared/tracing.js';

await startTracing('worker');
await import('./run.js');
