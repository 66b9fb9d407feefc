/**
 * Typed configuration read once from the environment. Every variable has a default
 * suitable for a local run; an invalid value stops the process at start with a
 * message naming the variable. README.md documents each one.
 */
import Joi from 'joi';
import { createHmac } from 'node:crypto';
import { resolve as resolvePath } from 'node:path';

export interface Config {
  nodeEnv: 'development' | 'test' | 'production';
  host: string;
  port: number;
  publicBaseUrl: string;
  /** Hosts a signed partner link may point at (decision D3): the service's own pay-link hosts. */
  publicLinkHosts: string[];
  databaseUrl: string;
  databasePoolMax: number;
  /**
   * Development and test: code that holds a pooled connection (inside a transaction) and
   * asks the same pool for a second one fails loudly (ARCHITECTURE rule 7).
   */
  databasePoolGuard: boolean;
  /**
   * The API process's `statement_timeout` in ms (0: none): no tenant request holds a
   * Postgres backend longer (issue 42, review R3). Set on the API's connections only
   * (api/server.ts); workers, migrations and scripts run without it.
   */
  apiStatementTimeoutMs: number;
  redisUrl: string;
  queuePrefix: string;
  logLevel: string;
  trustProxy: boolean;
  sandboxMode: boolean;
  /** Comma-separated queue names the worker process runs; empty means all. */
  workerQueues: string[];
  workerConcurrency: number;
  /**
   * BullMQ stalled-job detection (docs/reliability.md): a job's lock lasts workerLockMs and
   * is renewed every half of it; every workerStalledCheckMs a worker moves jobs whose lock
   * ran out (their worker died) back to wait. A dead worker's job is taken again within
   * about workerLockMs + workerStalledCheckMs.
   */
  workerLockMs: number;
  workerStalledCheckMs: number;
  /**
   * Where the worker process serves its own /metrics (the counters only the worker moves:
   * stalled jobs, the outbox relay's dead letters and re-enqueues); port 0 (the default)
   * serves none. The host defaults to loopback; open it to the scraper's network on purpose.
   */
  workerMetricsHost: string;
  workerMetricsPort: number;
  /** How long a payout worker's claim on a withdrawal lasts; renewed every third of it while the provider call runs. */
  payoutLeaseMs: number;
  /** How long a request for a new CSV export waits for the exports worker before answering 202 (ms; 0: never waits). */
  exportWaitMs: number;
  /** Bytes of unexpired CSV exports one workspace may hold; a new export over it is refused (decision 0026). */
  exportBytesPerWorkspace: number;
  outboxPollMs: number;
  metricsToken: string;
  /** 32-byte key for AES-256-GCM encryption of secrets that must be read back. */
  encryptionKey: Buffer;
  adminEmail: string;
  adminPassword: string;
  sessionCookieName: string;
  sessionCookieSecure: boolean;
  sessionTtlHours: number;
  /** A session unused for this long has ended (on top of its absolute lifetime). */
  sessionIdleMinutes: number;
  smtpUrl: string;
  mailFrom: string;
  turnstileSecretKey: string;
  turnstileSiteKey: string;
  turnstileVerifyUrl: string;
  argon2MemoryKib: number;
  argon2Passes: number;
  authRateLimitPerMinute: number;
  publicRateLimitPerMinute: number;
  /** Enterprise fund, evidence, dispute, release and approval decisions: each, per user per minute (spec section 8: 30). */
  enterpriseMoneyLimitPerMinute: number;
  /** Failed credentials (unknown keys or session cookies) one address may send per 15 minutes. */
  authFailureLimit: number;
  /** Payment gateways (decisions D4, D5): secrets and base URLs; an adapter without its secret is not loaded. */
  gateways: GatewayConfig;
  /** Uploads (issue 7): storage, signed links, the wait for the sanitising worker. */
  uploads: UploadConfig;
  /** OpenTelemetry tracing (issue 47, shared/tracing.ts): off unless an OTLP endpoint is set. */
  tracing: TracingConfig;
}

export interface TracingConfig {
  /** Where spans are sent (OTLP over HTTP); empty: tracing is off and none of its code is loaded. */
  tracesUrl: string;
  /** Headers sent with every export (a hosted backend's key): OTEL_EXPORTER_OTLP_HEADERS, `key=value` pairs separated by commas. */
  headers: Record<string, string>;
  /** Share of new traces recorded (0 to 1); a span whose parent was recorded is recorded. */
  sampleRatio: number;
}

export interface UploadConfig {
  /** Root of the local file store (UPLOAD_DIR); never served as a public path. */
  dir: string;
  driver: 'local' | 's3';
  s3: { endpoint: string; region: string; bucket: string; accessKeyId: string; secretAccessKey: string; forcePathStyle: boolean };
  /** HMAC key of the signed file links. */
  linkSecret: Buffer;
  linkTtlSeconds: number;
  /** How long the API waits for the sanitising worker before answering 500 STORAGE_FAILED. */
  waitTimeoutMs: number;
  pdfMaxPages: number;
}

export interface GatewayConfig {
  /** HMAC key of the sandbox gateway's callbacks (X-Sandbox-Signature). */
  sandboxSecret: string;
  httpTimeoutMs: number;
  midtrans: { baseUrl: string; serverKey: string };
  xendit: { baseUrl: string; secretKey: string; callbackToken: string };
  tripay: { baseUrl: string; apiKey: string; privateKey: string; merchantCode: string };
}

const bool = Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off', '');

const schema = Joi.object({
  NODE_ENV: Joi.string().valid('development', 'test', 'production').default('development'),
  HOST: Joi.string().default('127.0.0.1'),
  PORT: Joi.number().integer().min(0).max(65535).default(3000),
  PUBLIC_BASE_URL: Joi.string().uri({ scheme: ['http', 'https'] }),
  PUBLIC_LINK_HOSTS: Joi.string().allow('').default(''),
  DATABASE_URL: Joi.string()
    .uri({ scheme: ['postgres', 'postgresql'] })
    .default('postgres://postgres@127.0.0.1:5432/escrow'),
  DATABASE_POOL_MAX: Joi.number().integer().min(1).max(200).default(10),
  DATABASE_POOL_GUARD: bool,
  API_STATEMENT_TIMEOUT_MS: Joi.number().integer().min(0).max(600_000).default(10_000),
  REDIS_URL: Joi.string().uri({ scheme: ['redis', 'rediss'] }).default('redis://127.0.0.1:6379/0'),
  QUEUE_PREFIX: Joi.string().pattern(/^[a-z0-9_-]+$/i).default('escrow'),
  LOG_LEVEL: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  TRUST_PROXY: bool.default(false),
  SANDBOX_MODE: bool,
  WORKER_QUEUES: Joi.string().allow('').default(''),
  WORKER_CONCURRENCY: Joi.number().integer().min(1).max(100).default(5),
  WORKER_LOCK_MS: Joi.number().integer().min(500).max(600_000).default(10_000),
  WORKER_STALLED_CHECK_MS: Joi.number().integer().min(250).max(600_000).default(5_000),
  WORKER_METRICS_HOST: Joi.string().hostname().default('127.0.0.1'),
  WORKER_METRICS_PORT: Joi.number().integer().min(0).max(65_535).default(0),
  PAYOUT_LEASE_MS: Joi.number().integer().min(500).max(3_600_000).default(15_000),
  EXPORT_WAIT_MS: Joi.number().integer().min(0).max(60_000).default(10_000),
  EXPORT_BYTES_PER_WORKSPACE: Joi.number().integer().min(1_000_000).max(10_000_000_000).default(200_000_000),
  OUTBOX_POLL_MS: Joi.number().integer().min(10).max(60000).default(500),
  METRICS_TOKEN: Joi.string().allow('').default(''),
  ENCRYPTION_KEY: Joi.string().base64().allow('').default(''),
  ADMIN_EMAIL: Joi.string().email({ tlds: false }).allow('').default(''),
  ADMIN_PASSWORD: Joi.string().allow('').max(128).default(''),
  SESSION_COOKIE_NAME: Joi.string().pattern(/^[A-Za-z0-9_-]+$/).default('escrow_session'),
  SESSION_COOKIE_SECURE: bool,
  SESSION_TTL_HOURS: Joi.number().integer().min(1).max(24 * 90).default(24 * 14),
  SESSION_IDLE_MINUTES: Joi.number().integer().min(5).max(60 * 24 * 90).default(120),
  SMTP_URL: Joi.string().uri({ scheme: ['smtp', 'smtps'] }).default('smtp://127.0.0.1:1025'),
  MAIL_FROM: Joi.string().default('Escrow <no-reply@escrow.local>'),
  TURNSTILE_SECRET_KEY: Joi.string().allow('').default(''),
  TURNSTILE_SITE_KEY: Joi.string().allow('').default(''),
  TURNSTILE_VERIFY_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('https://challenges.cloudflare.com/turnstile/v0/siteverify'),
  ARGON2_MEMORY_KIB: Joi.number().integer().min(19456).default(19456),
  ARGON2_PASSES: Joi.number().integer().min(2).default(2),
  AUTH_RATE_LIMIT_PER_MINUTE: Joi.number().integer().min(1).default(300),
  PUBLIC_RATE_LIMIT_PER_MINUTE: Joi.number().integer().min(1).default(100),
  ENTERPRISE_MONEY_LIMIT_PER_MINUTE: Joi.number().integer().min(1).default(30),
  AUTH_FAILURE_LIMIT: Joi.number().integer().min(1).default(20),
  SANDBOX_GATEWAY_SECRET: Joi.string().allow('').default(''),
  GATEWAY_HTTP_TIMEOUT_MS: Joi.number().integer().min(100).max(60_000).default(8000),
  MIDTRANS_BASE_URL: Joi.string().uri({ scheme: ['http', 'https'] }).default('https://api.midtrans.com'),
  MIDTRANS_SERVER_KEY: Joi.string().allow('').default(''),
  XENDIT_BASE_URL: Joi.string().uri({ scheme: ['http', 'https'] }).default('https://api.xendit.co'),
  XENDIT_SECRET_KEY: Joi.string().allow('').default(''),
  XENDIT_CALLBACK_TOKEN: Joi.string().allow('').default(''),
  TRIPAY_BASE_URL: Joi.string().uri({ scheme: ['http', 'https'] }).default('https://tripay.co.id/api'),
  TRIPAY_API_KEY: Joi.string().allow('').default(''),
  TRIPAY_PRIVATE_KEY: Joi.string().allow('').default(''),
  TRIPAY_MERCHANT_CODE: Joi.string().allow('').default(''),
  UPLOAD_DIR: Joi.string().default('.data/uploads'),
  UPLOAD_STORAGE: Joi.string().valid('local', 's3').default('local'),
  S3_ENDPOINT: Joi.string().uri({ scheme: ['http', 'https'] }).allow('').default(''),
  S3_REGION: Joi.string().default('us-east-1'),
  S3_BUCKET: Joi.string().allow('').default(''),
  S3_ACCESS_KEY_ID: Joi.string().allow('').default(''),
  S3_SECRET_ACCESS_KEY: Joi.string().allow('').default(''),
  S3_FORCE_PATH_STYLE: bool.default(true),
  UPLOAD_LINK_SECRET: Joi.string().allow('').min(32).default(''),
  UPLOAD_LINK_TTL_SECONDS: Joi.number().integer().min(30).max(3600).default(300),
  UPLOAD_WAIT_TIMEOUT_MS: Joi.number().integer().min(1000).max(120_000).default(20_000),
  UPLOAD_PDF_MAX_PAGES: Joi.number().integer().min(1).max(10_000).default(100),
  OTEL_EXPORTER_OTLP_ENDPOINT: Joi.string().uri({ scheme: ['http', 'https'] }).allow('').default(''),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Joi.string().uri({ scheme: ['http', 'https'] }).allow('').default(''),
  OTEL_EXPORTER_OTLP_HEADERS: Joi.string()
    .allow('')
    .pattern(/^\s*[^=,\s]+\s*=[^,]*(,\s*[^=,\s]+\s*=[^,]*)*$/)
    .default(''),
  OTEL_TRACES_SAMPLER_ARG: Joi.number().min(0).max(1).default(1),
  OTEL_SDK_DISABLED: bool.default(false),
}).unknown(true);

export class ConfigError extends Error {}

interface RawEnv {
  NODE_ENV: Config['nodeEnv'];
  HOST: string;
  PORT: number;
  PUBLIC_BASE_URL?: string;
  PUBLIC_LINK_HOSTS: string;
  DATABASE_URL: string;
  DATABASE_POOL_MAX: number;
  DATABASE_POOL_GUARD?: boolean;
  API_STATEMENT_TIMEOUT_MS: number;
  REDIS_URL: string;
  QUEUE_PREFIX: string;
  LOG_LEVEL: string;
  TRUST_PROXY: boolean;
  SANDBOX_MODE?: boolean;
  WORKER_QUEUES: string;
  WORKER_CONCURRENCY: number;
  WORKER_LOCK_MS: number;
  WORKER_STALLED_CHECK_MS: number;
  WORKER_METRICS_HOST: string;
  WORKER_METRICS_PORT: number;
  PAYOUT_LEASE_MS: number;
  EXPORT_WAIT_MS: number;
  EXPORT_BYTES_PER_WORKSPACE: number;
  OUTBOX_POLL_MS: number;
  METRICS_TOKEN: string;
  ENCRYPTION_KEY: string;
  ADMIN_EMAIL: string;
  ADMIN_PASSWORD: string;
  SESSION_COOKIE_NAME: string;
  SESSION_COOKIE_SECURE?: boolean;
  SESSION_TTL_HOURS: number;
  SESSION_IDLE_MINUTES: number;
  SMTP_URL: string;
  MAIL_FROM: string;
  TURNSTILE_SECRET_KEY: string;
  TURNSTILE_SITE_KEY: string;
  TURNSTILE_VERIFY_URL: string;
  ARGON2_MEMORY_KIB: number;
  ARGON2_PASSES: number;
  AUTH_RATE_LIMIT_PER_MINUTE: number;
  PUBLIC_RATE_LIMIT_PER_MINUTE: number;
  ENTERPRISE_MONEY_LIMIT_PER_MINUTE: number;
  AUTH_FAILURE_LIMIT: number;
  SANDBOX_GATEWAY_SECRET: string;
  GATEWAY_HTTP_TIMEOUT_MS: number;
  MIDTRANS_BASE_URL: string;
  MIDTRANS_SERVER_KEY: string;
  XENDIT_BASE_URL: string;
  XENDIT_SECRET_KEY: string;
  XENDIT_CALLBACK_TOKEN: string;
  TRIPAY_BASE_URL: string;
  TRIPAY_API_KEY: string;
  TRIPAY_PRIVATE_KEY: string;
  TRIPAY_MERCHANT_CODE: string;
  UPLOAD_DIR: string;
  UPLOAD_STORAGE: 'local' | 's3';
  S3_ENDPOINT: string;
  S3_REGION: string;
  S3_BUCKET: string;
  S3_ACCESS_KEY_ID: string;
  S3_SECRET_ACCESS_KEY: string;
  S3_FORCE_PATH_STYLE: boolean;
  UPLOAD_LINK_SECRET: string;
  UPLOAD_LINK_TTL_SECONDS: number;
  UPLOAD_WAIT_TIMEOUT_MS: number;
  UPLOAD_PDF_MAX_PAGES: number;
  OTEL_EXPORTER_OTLP_ENDPOINT: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: string;
  OTEL_EXPORTER_OTLP_HEADERS: string;
  OTEL_TRACES_SAMPLER_ARG: number;
  OTEL_SDK_DISABLED: boolean;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { value, error } = schema.validate(env, { abortEarly: true, convert: true }) as { value: unknown; error?: Joi.ValidationError };
  if (error) {
    const name = String(error.details[0]?.path[0] ?? 'environment');
    throw new ConfigError(`Invalid configuration: ${name}: ${error.message}`);
  }
  const v = value as RawEnv;
  const production = v.NODE_ENV === 'production';
  const sandboxMode = v.SANDBOX_MODE ?? !production;
  if (production && sandboxMode) {
    throw new ConfigError('Invalid configuration: SANDBOX_MODE: must be off when NODE_ENV=production');
  }
  if (production) {
    // A production process refuses to start rather than run with a guard switched off.
    if (!v.TURNSTILE_SECRET_KEY) {
      throw new ConfigError('Invalid configuration: TURNSTILE_SECRET_KEY: required when NODE_ENV=production (the sign-in bot check)');
    }
    if (!v.METRICS_TOKEN) {
      throw new ConfigError('Invalid configuration: METRICS_TOKEN: required when NODE_ENV=production (/metrics must not be open)');
    }
  }
  if (v.ADMIN_PASSWORD && !v.ADMIN_EMAIL) {
    throw new ConfigError('Invalid configuration: ADMIN_EMAIL: required when ADMIN_PASSWORD is set');
  }
  let encryptionKey: Buffer;
  if (v.ENCRYPTION_KEY) {
    encryptionKey = Buffer.from(v.ENCRYPTION_KEY, 'base64');
    if (encryptionKey.length !== 32) {
      throw new ConfigError('Invalid configuration: ENCRYPTION_KEY: must be 32 bytes, base64-encoded');
    }
  } else if (production) {
    throw new ConfigError('Invalid configuration: ENCRYPTION_KEY: required when NODE_ENV=production');
  } else {
    // Local runs and tests only: a fixed, public development key.
    encryptionKey = Buffer.alloc(32, 'escrow-local-development-key');
  }
  if (v.UPLOAD_STORAGE === 's3' && !v.S3_BUCKET) {
    throw new ConfigError('Invalid configuration: S3_BUCKET: required when UPLOAD_STORAGE=s3');
  }
  const publicBaseUrl = (v.PUBLIC_BASE_URL ?? `http://localhost:${v.PORT}`).replace(/\/+$/, '');
  return {
    nodeEnv: v.NODE_ENV,
    host: v.HOST,
    port: v.PORT,
    publicBaseUrl,
    publicLinkHosts: linkHosts(v.PUBLIC_LINK_HOSTS, publicBaseUrl),
    databaseUrl: v.DATABASE_URL,
    databasePoolMax: v.DATABASE_POOL_MAX,
    databasePoolGuard: v.DATABASE_POOL_GUARD ?? v.NODE_ENV !== 'production',
    apiStatementTimeoutMs: v.API_STATEMENT_TIMEOUT_MS,
    redisUrl: v.REDIS_URL,
    queuePrefix: v.QUEUE_PREFIX,
    logLevel: v.LOG_LEVEL,
    trustProxy: v.TRUST_PROXY,
    sandboxMode,
    workerQueues: v.WORKER_QUEUES.split(',').map((s) => s.trim()).filter(Boolean),
    workerConcurrency: v.WORKER_CONCURRENCY,
    workerLockMs: v.WORKER_LOCK_MS,
    workerStalledCheckMs: v.WORKER_STALLED_CHECK_MS,
    workerMetricsHost: v.WORKER_METRICS_HOST,
    workerMetricsPort: v.WORKER_METRICS_PORT,
    payoutLeaseMs: v.PAYOUT_LEASE_MS,
    exportWaitMs: v.EXPORT_WAIT_MS,
    exportBytesPerWorkspace: v.EXPORT_BYTES_PER_WORKSPACE,
    outboxPollMs: v.OUTBOX_POLL_MS,
    metricsToken: v.METRICS_TOKEN,
    encryptionKey,
    adminEmail: v.ADMIN_EMAIL.toLowerCase(),
    adminPassword: v.ADMIN_PASSWORD,
    sessionCookieName: v.SESSION_COOKIE_NAME,
    sessionCookieSecure: v.SESSION_COOKIE_SECURE ?? (production || publicBaseUrl.startsWith('https:')),
    sessionTtlHours: v.SESSION_TTL_HOURS,
    sessionIdleMinutes: v.SESSION_IDLE_MINUTES,
    smtpUrl: v.SMTP_URL,
    mailFrom: v.MAIL_FROM,
    turnstileSecretKey: v.TURNSTILE_SECRET_KEY,
    turnstileSiteKey: v.TURNSTILE_SITE_KEY,
    turnstileVerifyUrl: v.TURNSTILE_VERIFY_URL,
    argon2MemoryKib: v.ARGON2_MEMORY_KIB,
    argon2Passes: v.ARGON2_PASSES,
    authRateLimitPerMinute: v.AUTH_RATE_LIMIT_PER_MINUTE,
    publicRateLimitPerMinute: v.PUBLIC_RATE_LIMIT_PER_MINUTE,
    enterpriseMoneyLimitPerMinute: v.ENTERPRISE_MONEY_LIMIT_PER_MINUTE,
    authFailureLimit: v.AUTH_FAILURE_LIMIT,
    gateways: {
      // Sandbox only (never in production): a fixed development secret unless one is set.
      sandboxSecret: v.SANDBOX_GATEWAY_SECRET || 'sandbox-gateway-local-secret',
      httpTimeoutMs: v.GATEWAY_HTTP_TIMEOUT_MS,
      midtrans: { baseUrl: v.MIDTRANS_BASE_URL.replace(/\/+$/, ''), serverKey: v.MIDTRANS_SERVER_KEY },
      xendit: { baseUrl: v.XENDIT_BASE_URL.replace(/\/+$/, ''), secretKey: v.XENDIT_SECRET_KEY, callbackToken: v.XENDIT_CALLBACK_TOKEN },
      tripay: {
        baseUrl: v.TRIPAY_BASE_URL.replace(/\/+$/, ''),
        apiKey: v.TRIPAY_API_KEY,
        privateKey: v.TRIPAY_PRIVATE_KEY,
        merchantCode: v.TRIPAY_MERCHANT_CODE,
      },
    },
    uploads: {
      dir: resolvePath(v.UPLOAD_DIR),
      driver: v.UPLOAD_STORAGE,
      s3: {
        endpoint: v.S3_ENDPOINT,
        region: v.S3_REGION,
        bucket: v.S3_BUCKET,
        accessKeyId: v.S3_ACCESS_KEY_ID,
        secretAccessKey: v.S3_SECRET_ACCESS_KEY,
        forcePathStyle: v.S3_FORCE_PATH_STYLE,
      },
      // By default a key of its own derived from ENCRYPTION_KEY (HMAC with a label): the
      // encryption key itself never signs links.
      linkSecret: v.UPLOAD_LINK_SECRET
        ? Buffer.from(v.UPLOAD_LINK_SECRET, 'utf8')
        : createHmac('sha256', encryptionKey).update('upload-links').digest(),
      linkTtlSeconds: v.UPLOAD_LINK_TTL_SECONDS,
      waitTimeoutMs: v.UPLOAD_WAIT_TIMEOUT_MS,
      pdfMaxPages: v.UPLOAD_PDF_MAX_PAGES,
    },
    tracing: {
      tracesUrl: v.OTEL_SDK_DISABLED ? '' : tracesUrl(v.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, v.OTEL_EXPORTER_OTLP_ENDPOINT),
      headers: otlpHeaders(v.OTEL_EXPORTER_OTLP_HEADERS),
      sampleRatio: v.OTEL_TRACES_SAMPLER_ARG,
    },
  };
}

/** OTEL_EXPORTER_OTLP_HEADERS (`key=value,...`, values percent-encoded as the OTLP exporter specification says) as headers. */
function otlpHeaders(raw: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of raw.split(',').filter((p) => p.trim() !== '')) {
    const at = pair.indexOf('=');
    let value = pair.slice(at + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      throw new ConfigError('Invalid configuration: OTEL_EXPORTER_OTLP_HEADERS: a value is not percent-encoded correctly');
    }
    headers[pair.slice(0, at).trim()] = value;
  }
  return headers;
}

/** The OTLP traces URL: the signal's own endpoint as given, else `<base>/v1/traces` (the OTLP exporter specification); empty when neither is set. */
function tracesUrl(traces: string, base: string): string {
  if (traces) return traces;
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : '';
}

/** PUBLIC_LINK_HOSTS, lower-cased; by default the host of PUBLIC_BASE_URL alone. */
function linkHosts(raw: string, publicBaseUrl: string): string[] {
  const hosts = raw.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
  return hosts.length > 0 ? hosts : [new URL(publicBaseUrl).host.toLowerCase()];
}

function loadOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(78);
    }
    throw err;
  }
}

/** The process-wide configuration. Tests may replace fields on it (see test/helpers). */
export const config: Config = loadOrExit();
