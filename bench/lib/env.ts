/**
 * Tunables from the environment, the same way in every bench: integers within bounds,
 * scenario subsets, and the stores bench/run.sh provides.
 */

/** `name` as an integer in min..max, `fallback` when unset or empty. */
export function intFromEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer in ${min}..${max}`);
  return n;
}

/** `name` as an integer in min..max, or null when unset (the default is someone else's). */
export function optionalIntFromEnv(name: string, min: number, max: number): number | null {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? null : intFromEnv(name, min, min, max);
}

/**
 * The scenarios named in `name` (comma-separated), in the order of `all`; every one of
 * `all` when unset. An unknown name is an error, not a silent skip.
 */
export function scenariosFromEnv<T extends string>(name: string, all: readonly T[]): T[] {
  const raw = process.env[name]?.trim();
  if (!raw) return [...all];
  const picked = raw.split(',').map((s) => s.trim());
  const unknown = picked.filter((s) => !(all as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`${name}: unknown ${unknown.join(', ')} (known: ${all.join(', ')})`);
  return all.filter((s) => picked.includes(s));
}

/** Throws unless bench/run.sh (or the caller) has set DATABASE_URL and REDIS_URL. */
export function requireStores(command: string): void {
  if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
    throw new Error(`DATABASE_URL and REDIS_URL must be set; run \`${command}\` (bench/run.sh) instead`);
  }
}

/**
 * The service's settings in every performance bench (the chaos run keeps the guard, as a
 * detector). Development, because production refuses to start without secrets a bench has
 * no use for (ENCRYPTION_KEY, TURNSTILE_SECRET_KEY, METRICS_TOKEN) and refuses the sandbox
 * gateway; but the pool guard off, as production has it: the guard (DATABASE_POOL_GUARD, a
 * development and test check) tracks every promise through an AsyncLocalStorage, which
 * made 4.5% of the bytes the API allocated on the keyed creation, work a deployed service
 * never does and the floors never did.
 */
export const SERVICE_ENV = { NODE_ENV: 'development', DATABASE_POOL_GUARD: '0' } as const;
/** `SERVICE_ENV` as the pages name it. */
export const SERVICE_ENV_NOTE = '`NODE_ENV=development`, `DATABASE_POOL_GUARD=0` (as in production)';

/** The API's LOG_LEVEL in the benches (`warn` turns the access log off, to see what it costs). */
export const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
