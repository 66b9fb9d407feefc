/**
 * OpenTelemetry tracing (issue 47): one trace per story. A gateway's callback, its
 * reconciliation, the notice it makes and the e-mail that notice sends are one trace: the
 * HTTP server span (instrumentation-http, -koa) and every Postgres and Redis call under it
 * (-pg, -ioredis), then BullMQ's own producer and consumer spans (bullmq-otel), carried across
 * the two durable hand-offs by the W3C `traceparent` their rows keep: a stored gateway callback
 * (`payment_callbacks.trace_context`, taken up by the gateway-callbacks inbox) and an outbox
 * row (`outbox.trace_context`, taken up by the relay: shared/outbox.ts).
 *
 * On when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set
 * (shared/config.ts); spans leave in batches over OTLP/HTTP. Off otherwise, and then free:
 * nothing of OpenTelemetry is loaded (this file imports only types from it) and every helper
 * below is one null check; outbox and callback rows are written with the columns they always had.
 *
 * The instrumented libraries are patched when they are loaded, so a process starts tracing
 * before it loads any of them: its entry file (api/server.ts, workers/index.ts) awaits
 * `startTracing` and only then imports the rest. pg and http are patched on `require`
 * (require-in-the-middle); ioredis and koa, which this ESM code imports, through
 * import-in-the-middle's in-thread module hooks (Node >= 24.11.1 or 22.22.3; on an older Node
 * they stay untraced, with a warning).
 */
import type * as OtelApi from '@opentelemetry/api';
import type * as OtelCore from '@opentelemetry/core';
import type * as OtelSdk from '@opentelemetry/sdk-trace';
import type { Sampler, SpanProcessor } from '@opentelemetry/sdk-trace';
import type { Telemetry } from 'bullmq';
import { config } from './config.js';

type Api = typeof OtelApi;

interface Tracing {
  api: Api;
  core: Pick<typeof OtelCore, 'getRPCMetadata' | 'RPCType'>;
  tracer: OtelApi.Tracer;
  telemetry: Telemetry<OtelApi.Context>;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

let tracing: Tracing | null = null;

/** The modules the instrumentations patch, for import-in-the-middle's hooks (only these are wrapped). */
const HOOKED = ['http', 'https', 'koa', 'pg', 'pg-pool', 'ioredis'];
/** Requests that are not part of any story: scrapes and probes. */
const UNTRACED_PATHS = new Set(['/metrics', '/healthz', '/readyz']);
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
/** BullMQ's own housekeeping (each queue's stalled-job check every few seconds, closing): never a trace of its own. */
const HOUSEKEEPING = /^(moveStalledJobsToWait|startStalledCheckTimer|close) /;

export interface StartOptions {
  /** Where finished spans go instead of the OTLP exporter (tests: an in-memory exporter); tracing is then on whatever the configuration says. */
  spanProcessors?: SpanProcessor[];
  /** Told when the module hooks cannot be installed (an older Node). */
  warn?: (message: string) => void;
}

/**
 * Starts tracing for this process (`service`: its `service.name`) when configured; returns
 * whether it is on. Call it once, before anything imports pg, ioredis, koa or http.
 */
export async function startTracing(service: 'api' | 'worker', options: StartOptions = {}): Promise<boolean> {
  if (tracing) return true;
  const url = config.tracing.tracesUrl;
  if (!url && !options.spanProcessors) return false;

  const hooks = await import('import-in-the-middle/register-hooks.mjs');
  if (hooks.supportsSyncHooks()) hooks.register({ include: HOOKED });
  else (options.warn ?? console.error)(`tracing: Node ${process.versions.node} has no usable module hooks; ioredis and koa are not traced (Node 24 LTS is)`);

  const [api, sdk, { AsyncLocalStorageContextManager }, core, { resourceFromAttributes }, { ATTR_SERVICE_NAME }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  let spanProcessors = options.spanProcessors;
  if (!spanProcessors) {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    spanProcessors = [new sdk.BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url, headers: config.tracing.headers }) })];
  }
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: service, 'service.namespace': 'escrow' }),
    sampler: storySampler(api, sdk, new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(config.tracing.sampleRatio) })),
    spanProcessors,
  });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const w3c = new core.W3CTraceContextPropagator();
  api.propagation.setGlobalPropagator(service === 'api' ? injectOnly(w3c) : w3c);
  api.trace.setGlobalTracerProvider(provider);

  const [{ registerInstrumentations }, { HttpInstrumentation }, { KoaInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }, { BullMQOtel }] = await Promise.all([
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-koa'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('bullmq-otel'),
  ]);
  registerInstrumentations({
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0] ?? ''),
        // An outgoing call outside any story (none is expected) starts no trace of its own.
        requireParentforOutgoingSpans: true,
      }),
      new KoaInstrumentation(),
      // Statement text only, never the bound values; the relay's and the inbox's idle polls make no spans.
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  tracing = {
    api,
    core,
    tracer: api.trace.getTracer('escrow'),
    telemetry: new BullMQOtel({ tracerName: 'bullmq' }),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
  return true;
}

/**
 * The API's propagator: it writes our context into what we send (BullMQ's jobs, outgoing
 * calls) but reads none from what we receive. Everyone who calls the API is outside (buyers,
 * partners, gateways), and a `traceparent` they send would choose the trace id and the
 * sampling flag of our spans: with a sampling ratio below 1, any caller could have its
 * requests recorded, and could pile unrelated requests into one trace. Each request the API
 * serves is therefore the root of a trace of its own (instrumentation-http extracts only
 * through the global propagator; it has no option of its own for this). The worker keeps
 * the full W3C propagator: BullMQ's consumer spans continue the producer's through it.
 */
function injectOnly(w3c: OtelApi.TextMapPropagator): OtelApi.TextMapPropagator {
  return {
    inject: (context, carrier, setter) => w3c.inject(context, carrier, setter),
    extract: (context) => context,
    fields: () => w3c.fields(),
  };
}

/** `base`, except that a span of BullMQ's housekeeping that would start a trace is not recorded (nor, then, anything under it). */
function storySampler(api: Api, sdk: typeof OtelSdk, base: Sampler): Sampler {
  return {
    shouldSample(context, traceId, name, kind, attributes, links) {
      if (HOUSEKEEPING.test(name) && !api.trace.getSpanContext(context)) return { decision: sdk.SamplingDecision.NOT_RECORD };
      return base.shouldSample(context, traceId, name, kind, attributes, links);
    },
    toString: () => `Story{${base.toString()}}`,
  };
}

export function tracingOn(): boolean {
  return tracing !== null;
}

/** BullMQ's telemetry option for a Queue or a Worker: empty when tracing is off (the options they always had). */
export function queueTelemetry(): { telemetry?: Telemetry<OtelApi.Context> } {
  return tracing ? { telemetry: tracing.telemetry } : {};
}

/** Sends the spans still buffered (at shutdown); nothing when tracing is off. */
export async function flushTracing(): Promise<void> {
  await tracing?.flush();
}

/** Ends tracing: buffered spans are sent, no more are recorded. */
export async function stopTracing(): Promise<void> {
  await tracing?.shutdown();
}

/**
 * Names the HTTP request being served after the route that took it (`http.route`, and the
 * server span's name `POST /api/escrows/:id/pay`); nothing when tracing is off. Called by the
 * one dispatch (api/middleware/dispatch.ts), which matches routes itself, so koa's
 * instrumentation never sees a router's layer.
 */
export function routeMatched(route: string): void {
  if (!tracing) return;
  const request = tracing.core.getRPCMetadata(tracing.api.context.active());
  if (request?.type === tracing.core.RPCType.HTTP) request.route = route;
}

/**
 * The active span as a W3C `traceparent` (what an outbox or callback row keeps), or null when
 * tracing is off or no span is active.
 */
export function currentTraceparent(): string | null {
  if (!tracing) return null;
  const span = tracing.api.trace.getActiveSpan();
  if (!span) return null;
  const sc = span.spanContext();
  if (!tracing.api.isSpanContextValid(sc)) return null;
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The remote span context a stored `traceparent` names; undefined for none or a malformed one. */
function spanContextOf(api: Api, traceparent: string | null | undefined): OtelApi.SpanContext | undefined {
  const m = TRACEPARENT.exec(traceparent ?? '');
  if (!m) return undefined;
  const sc = { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true };
  return api.isSpanContextValid(sc) ? sc : undefined;
}

/**
 * Runs `fn` as a child of the span a stored `traceparent` names (a row written by another
 * request or job), so the spans it makes join that trace. Without tracing, or without a
 * usable traceparent, runs `fn` as it is.
 */
export function withTraceparent<T>(traceparent: string | null | undefined, fn: () => T): T {
  if (!tracing) return fn();
  const sc = spanContextOf(tracing.api, traceparent);
  if (!sc) return fn();
  const { api } = tracing;
  return api.context.with(api.trace.setSpanContext(api.ROOT_CONTEXT, sc), fn);
}

export interface SpanOptions {
  kind?: 'internal' | 'client' | 'consumer';
  /** The stored `traceparent` to continue (a consumer of a stored row); the active span otherwise. */
  parent?: string | null;
  /** Further stored `traceparent`s this work also continues (a batch of rows from several traces). */
  links?: readonly (string | null | undefined)[];
  attributes?: Record<string, string | number | boolean>;
}

/**
 * Runs `fn` in a span of its own (ended when `fn` settles; an error is recorded on it). Without
 * tracing, runs `fn` and nothing else.
 */
export function traced<T>(name: string, fn: () => Promise<T>, options: SpanOptions = {}): Promise<T> {
  if (!tracing) return fn();
  const { api, tracer } = tracing;
  const kind = { internal: api.SpanKind.INTERNAL, client: api.SpanKind.CLIENT, consumer: api.SpanKind.CONSUMER }[options.kind ?? 'internal'];
  const remote = options.parent !== undefined ? spanContextOf(api, options.parent) : undefined;
  const parent = remote ? api.trace.setSpanContext(api.ROOT_CONTEXT, remote) : api.context.active();
  const links = (options.links ?? []).flatMap((tp) => {
    const sc = spanContextOf(api, tp);
    return sc && sc.spanId !== remote?.spanId ? [{ context: sc }] : [];
  });
  return tracer.startActiveSpan(name, { kind, links, attributes: options.attributes }, parent, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}
