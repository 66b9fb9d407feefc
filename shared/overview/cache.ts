/**
 * The overview's answer cache (enterprise spec 4.9: "cached 15 seconds per workspace and
 * user (own writes clear it)"). One Redis key per workspace, user and the role they act
 * with (a read key of an admin acts as a viewer and sees no needs_you items, so the two
 * answers are kept apart); a write by the user clears every role's key of that workspace
 * (api/middleware/overview-cache.ts). The age is judged by shared/clock.ts (the stored
 * `at`), so tests move the clock instead of sleeping; Redis expires the key after the same
 * 15 seconds so nothing piles up. Losing Redis loses only the cache.
 */
import type { Redis } from 'ioredis';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { ROLES, type Role } from '../enterprise/states.js';

export const OVERVIEW_CACHE_SECONDS = 15;

const keyOf = (workspaceId: string, userId: string, role: Role): string => `${config.queuePrefix}:ent-overview:${workspaceId}:${userId}:${role}`;

interface Stored<T> {
  at: number;
  value: T;
}

/** The cached answer when it is younger than 15 seconds by the clock, else null. */
export async function readCached<T>(redis: Redis, workspaceId: string, userId: string, role: Role): Promise<T | null> {
  const raw = await redis.get(keyOf(workspaceId, userId, role));
  if (raw === null) return null;
  const stored = JSON.parse(raw) as Stored<T>;
  const age = clock.nowMs() - stored.at;
  return age >= 0 && age < OVERVIEW_CACHE_SECONDS * 1000 ? stored.value : null;
}

export async function storeCached<T>(redis: Redis, workspaceId: string, userId: string, role: Role, value: T, at: number): Promise<void> {
  const stored: Stored<T> = { at, value };
  await redis.set(keyOf(workspaceId, userId, role), JSON.stringify(stored), 'EX', OVERVIEW_CACHE_SECONDS);
}

/** Forgets the user's overview of the workspace, whatever role it was computed for. */
export async function clearCached(redis: Redis, workspaceId: string, userId: string): Promise<void> {
  await redis.del(...ROLES.map((r) => keyOf(workspaceId, userId, r)));
}
