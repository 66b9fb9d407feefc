/**
 * Open notification streams of one API process (consumer spec 6). One hub per Koa app (two
 * apps in one test process are two servers). The hub holds one Redis subscriber on the
 * unread channel: a user id published there (by the worker or any API copy, after commit)
 * makes that user's open streams recount and send `event: unread` when the count changed.
 * A timer looks at the service clock every `tickMs`: `: ping` after `pingMs` of the
 * stream's life since the last ping, the end after `maxMs`.
 */
import { PassThrough } from 'node:stream';
import type { Redis } from 'ioredis';
import { clock } from '../clock.js';
import { logger } from '../logger.js';
import { notificationErrors } from './errors.js';
import { unreadChannel, unreadCount } from './service.js';
import { streamSettings } from './settings.js';

export interface OpenStream {
  userId: string;
  out: PassThrough;
  openedAt: number;
  lastPingAt: number;
  lastCount: number | null;
  closed: boolean;
}

export class StreamHub {
  private readonly streams = new Set<OpenStream>();
  private readonly byUser = new Map<string, OpenStream[]>();
  private subscriber: Redis | null = null;
  private subscribing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly redis: Redis) {}

  get openCount(): number {
    return this.streams.size;
  }

  /** Subscribes once (before the first stream opens, so no change published after it is missed). */
  async ready(): Promise<void> {
    if (!this.subscribing) {
      this.subscribing = (async () => {
        const sub = this.redis.duplicate();
        sub.on('message', (_channel: string, userId: string) => void this.changed(userId));
        sub.on('error', (err: unknown) => logger.warn({ err }, 'notification stream subscriber error'));
        await sub.subscribe(unreadChannel());
        this.subscriber = sub;
      })().catch((err: unknown) => {
        this.subscribing = null;
        throw err;
      });
    }
    return this.subscribing;
  }

  /** Registers a stream (the caller has checked the process limit); evicts the user's oldest beyond the per-user limit. */
  open(userId: string): OpenStream {
    const now = clock.nowMs();
    const s: OpenStream = { userId, out: new PassThrough(), openedAt: now, lastPingAt: now, lastCount: null, closed: false };
    this.streams.add(s);
    const list = this.byUser.get(userId) ?? [];
    list.push(s);
    this.byUser.set(userId, list);
    while (list.length > streamSettings.perUser) {
      const oldest = list[0]!;
      this.write(oldest, 'event: evicted\ndata: {}\n\n');
      this.close(oldest);
    }
    s.out.write('retry: 5000\n\n');
    this.startTimer();
    return s;
  }

  close(s: OpenStream): void {
    if (s.closed) return;
    s.closed = true;
    this.streams.delete(s);
    const list = this.byUser.get(s.userId);
    if (list) {
      const i = list.indexOf(s);
      if (i >= 0) list.splice(i, 1);
      if (list.length === 0) this.byUser.delete(s.userId);
    }
    s.out.end();
    if (this.streams.size === 0) this.stopTimer();
  }

  /** Sends `event: unread` to the user's streams whose last sent count differs. */
  async changed(userId: string): Promise<void> {
    const list = this.byUser.get(userId);
    if (!list || list.length === 0) return;
    try {
      const count = await unreadCount(userId);
      for (const s of [...list]) this.sendCount(s, count);
    } catch (err) {
      logger.warn({ err, user_id: userId }, 'notification stream recount failed');
    }
  }

  sendCount(s: OpenStream, count: number): void {
    if (s.closed || s.lastCount === count) return;
    s.lastCount = count;
    this.write(s, `event: unread\ndata: ${JSON.stringify({ count })}\n\n`);
  }

  private write(s: OpenStream, chunk: string): void {
    if (!s.closed) s.out.write(chunk);
  }

  /** One pass of the timer (exported for tests that drive it without waiting). */
  tick(): void {
    const now = clock.nowMs();
    for (const s of [...this.streams]) {
      if (now - s.openedAt >= streamSettings.maxMs) {
        this.close(s);
        continue;
      }
      if (now - s.lastPingAt >= streamSettings.pingMs) {
        s.lastPingAt = now;
        this.write(s, ': ping\n\n');
      }
    }
  }

  private startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), streamSettings.tickMs);
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Ends every stream and the subscriber (server shutdown, tests). */
  async shutdown(): Promise<void> {
    for (const s of [...this.streams]) this.close(s);
    this.stopTimer();
    const sub = this.subscriber;
    this.subscriber = null;
    this.subscribing = null;
    if (sub) await sub.quit().catch(() => sub.disconnect());
  }
}

/**
 * Opens a stream of the user on this hub, with its first count sent. Everything that can
 * fail does so before the first byte, so the route answers it as JSON: 503
 * STREAM_UNAVAILABLE when this process holds its maximum of streams.
 */
export async function openUserStream(hub: StreamHub, userId: string): Promise<OpenStream> {
  if (hub.openCount >= streamSettings.maxOpen) throw notificationErrors.streamUnavailable();
  await hub.ready();
  // Registered before the first count, so a change committed meanwhile recounts this stream too.
  const stream = hub.open(userId);
  let count: number;
  try {
    count = await unreadCount(userId);
  } catch (err) {
    hub.close(stream);
    throw err;
  }
  if (stream.lastCount === null) hub.sendCount(stream, count); // else a fresher recount was sent
  return stream;
}

const hubs = new WeakMap<object, StreamHub>();
const allHubs = new Set<StreamHub>();

/** The hub of one app (server). */
export function hubFor(app: object, redis: Redis): StreamHub {
  let hub = hubs.get(app);
  if (!hub) {
    hub = new StreamHub(redis);
    hubs.set(app, hub);
    allHubs.add(hub);
  }
  return hub;
}

/** Shuts every hub of this process (server shutdown, test teardown). */
export async function shutdownStreamHubs(): Promise<void> {
  await Promise.all([...allHubs].map((h) => h.shutdown()));
  allHubs.clear();
}
