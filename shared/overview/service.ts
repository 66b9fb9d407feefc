/**
 * GET /v1/enterprise/overview (enterprise spec 4.9; decision 0020 "Overview and
 * reconciliation"): the workspace at a glance for the caller, computed by SQL aggregates
 * (repo.ts, alerts.ts), shaped by serialize.ts and cached 15 seconds per workspace, user and
 * acting role (cache.ts; the user's own writes clear it).
 */
import type { Redis } from 'ioredis';
import { clock } from '../clock.js';
import { db } from '../db.js';
import { logger } from '../logger.js';
import type { WorkspaceActor } from '../enterprise/access.js';
import { feedPage } from '../enterprise/events-repo.js';
import type { WorkspaceRow } from '../enterprise/repo.js';
import { needsYou } from '../approvals/service.js';
import { alertsFor } from './alerts.js';
import { readCached, storeCached } from './cache.js';
import * as repo from './repo.js';
import { serializeOverview, type OverviewAnswer, type OverviewData } from './serialize.js';

export const OVERVIEW_WINDOWS = {
  /** Median approval time and mean settlement time look at this many days. */
  statsDays: 30,
  /** outcomes_90d and counterparty_performance. */
  outcomesDays: 90,
  trendDays: 7,
  counterparties: 10,
  needsYou: 10,
  recent: 8,
} as const;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The caller's overview: from the cache when it is younger than 15 seconds, else computed and
 * cached. Redis holds only the cache: when it fails, the answer is computed (and not cached).
 */
export async function overview(redis: Redis, actor: WorkspaceActor, workspace: WorkspaceRow): Promise<OverviewAnswer> {
  const hit = await readCached<OverviewAnswer>(redis, workspace.id, actor.userId, actor.role).catch((err: unknown) => {
    logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'overview cache unreadable');
    return null;
  });
  if (hit) return hit;
  const now = clock.now();
  const answer = serializeOverview(await compute(actor, workspace, now));
  await storeCached(redis, workspace.id, actor.userId, actor.role, answer, now.getTime()).catch((err: unknown) => {
    logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'overview cache not written');
  });
  return answer;
}

/** Every figure of the overview at `now` (no cache). */
export async function compute(actor: WorkspaceActor, workspace: WorkspaceRow, now: Date): Promise<OverviewData> {
  const ws = workspace.id;
  const t = now.getTime();
  const hourStart = Math.floor(t / HOUR) * HOUR;
  const seriesStart = new Date(hourStart - 23 * HOUR);
  const today = Math.floor(t / DAY) * DAY;
  const trendFrom = new Date(today - (OVERVIEW_WINDOWS.trendDays - 1) * DAY);
  const trendTo = new Date(today + DAY);
  const since24h = new Date(t - DAY);
  const outcomesSince = new Date(t - OVERVIEW_WINDOWS.outcomesDays * DAY);

  const stats = await repo.stats(db, ws, now, since24h, new Date(t - OVERVIEW_WINDOWS.statsDays * DAY));
  const hours = await repo.hourly(db, ws, seriesStart, new Date(hourStart + HOUR));
  const releases = await repo.releasesByDay(db, ws, trendFrom, trendTo);
  const revisions = await repo.revisionsByDay(db, ws, trendFrom, trendTo);
  const outcomes = await repo.outcomes(db, ws, now, outcomesSince);
  const counterparties = await repo.counterparties(db, ws, now, outcomesSince, OVERVIEW_WINDOWS.counterparties);
  const spark = await repo.releasedToByDay(
    db,
    ws,
    counterparties.map((c) => c.id),
    trendFrom,
    trendTo,
  );
  const queue = await needsYou(actor, OVERVIEW_WINDOWS.needsYou);
  const alerts = await alertsFor(db, workspace, now);
  const recent = await feedPage(db, ws, { after: 0, order: 'desc', limit: OVERVIEW_WINDOWS.recent });
  return {
    greetingName: greetingName(actor.userName, workspace.display_name),
    now,
    stats,
    seriesStart,
    hours,
    trendFrom,
    trendDays: OVERVIEW_WINDOWS.trendDays,
    releases,
    revisions,
    outcomes,
    counterparties,
    spark,
    needsYou: queue,
    alerts,
    recent,
  };
}

/** The first word of the caller's name (the workspace's name when they have none). */
export function greetingName(fullName: string, workspaceName: string): string {
  const first = fullName.trim().split(/\s+/)[0];
  return first ? first : workspaceName;
}
