/**
 * The courier-tracking adapter (Binderbyte-style). Never throws: an upstream that is down,
 * slow, unconfigured or answering garbage gives `found: false`.
 */
import { clock } from '../clock.js';
import { logger } from '../logger.js';
import { trackingSettings } from './settings.js';

export interface TrackingEvent {
  date: string;
  description: string;
}

export interface Snapshot {
  found: boolean;
  courier: string;
  awb: string;
  status: string | null;
  recipient: string | null;
  events: TrackingEvent[];
  checkedAt: string;
}

/** Our slugs that the upstream spells differently. */
const UPSTREAM_SLUG: Record<string, string> = { idexpress: 'ide' };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown, max = 500): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, max) : null);

export function notFound(courier: string, awb: string): Snapshot {
  return { found: false, courier, awb, status: null, recipient: null, events: [], checkedAt: clock.now().toISOString() };
}

/** Reads an upstream answer; `undefined` when it is not a found package in the expected shape. */
export function parseUpstream(courier: string, awb: string, body: unknown): Snapshot | undefined {
  if (!isRecord(body) || Number(body.status) !== 200 || !isRecord(body.data)) return undefined;
  const { summary, detail, history } = body.data;
  if (!isRecord(summary)) return undefined;
  const events = (Array.isArray(history) ? history : [])
    .flatMap((h) => {
      if (!isRecord(h)) return [];
      const date = text(h.date, 40);
      const description = text(h.desc) ?? text(h.description);
      if (!date || !description) return [];
      const at = Date.parse(date.replace(' ', 'T'));
      return [{ date, description, at: Number.isNaN(at) ? 0 : at }];
    })
    .sort((a, b) => b.at - a.at)
    .slice(0, 200)
    .map(({ date, description }) => ({ date, description }));
  return {
    found: true,
    courier,
    awb,
    status: text(summary.status, 100),
    recipient: isRecord(detail) ? text(detail.receiver, 200) : null,
    events,
    checkedAt: clock.now().toISOString(),
  };
}

export async function fetchSnapshot(courier: string, awb: string): Promise<Snapshot> {
  if (!trackingSettings.apiKey) return notFound(courier, awb);
  const url = new URL(`${trackingSettings.baseUrl}/v1/track`);
  url.searchParams.set('api_key', trackingSettings.apiKey);
  url.searchParams.set('courier', UPSTREAM_SLUG[courier] ?? courier);
  url.searchParams.set('awb', awb);
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(trackingSettings.timeoutMs), headers: { Accept: 'application/json' } });
    const raw = await res.text();
    if (raw.length > 1_000_000) return notFound(courier, awb);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return notFound(courier, awb);
    }
    return (res.ok && parseUpstream(courier, awb, body)) || notFound(courier, awb);
  } catch (err) {
    logger.warn({ err: String(err), courier }, 'courier tracking upstream unavailable');
    return notFound(courier, awb);
  }
}
