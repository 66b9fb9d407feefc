/**
 * A typed wrapper over autocannon's programmatic API. autocannon ships no types and
 * @types/autocannon is not a dependency, so only the fields the benchmark reads are
 * declared here (autocannon 9, lib/aggregateResult.js).
 */
import { createRequire } from 'node:module';

export interface AutocannonOptions {
  url: string;
  connections: number;
  pipelining: number;
  /** Seconds. */
  duration: number;
  /** Seconds before a request counts as a timeout. */
  timeout?: number;
  headers?: Record<string, string>;
}

/** One autocannon histogram summary (latency in ms, requests and bytes per second). */
export interface HistogramSummary {
  average: number;
  mean: number;
  stddev: number;
  min: number;
  max: number;
  p50: number;
  p90: number;
  p97_5: number;
  p99: number;
}

export interface AutocannonResult {
  /** Seconds actually run. */
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  latency: HistogramSummary;
  requests: HistogramSummary & { total: number; sent: number };
  throughput: HistogramSummary & { total: number };
}

type Autocannon = (opts: AutocannonOptions) => PromiseLike<AutocannonResult>;

const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as Autocannon;

/** Runs one load test; resolves when `duration` seconds have passed. */
export async function runAutocannon(opts: AutocannonOptions): Promise<AutocannonResult> {
  return await autocannon(opts);
}
