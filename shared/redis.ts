import { Redis, type RedisOptions } from 'ioredis';
import { config } from './config.js';

/**
 * Redis connections. BullMQ workers need `maxRetriesPerRequest: null` (blocking
 * commands); everything else uses the shared client.
 */
export function createRedis(options: RedisOptions = {}): Redis {
  return new Redis(config.redisUrl, { lazyConnect: false, enableOfflineQueue: true, ...options });
}

/** Shared client for rate limits, caches and queue producers. */
export const redis: Redis = createRedis({ maxRetriesPerRequest: 3 });

/** A connection suitable for BullMQ (queues, workers, events). */
export function createQueueConnection(): Redis {
  return createRedis({ maxRetriesPerRequest: null });
}
