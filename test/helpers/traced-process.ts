/**
 * A real entry point (api/server.ts or workers/index.ts) as its own process with tracing on,
 * its spans kept by an in-memory exporter instead of sent over OTLP, for the tracing test
 * (test/integration/platform/tracing.test.ts). Tracing starts here exactly as the entry starts
 * it (shared/tracing.ts, before pg, ioredis, koa or http is loaded; the entry's own call then
 * finds it on), then the entry runs unchanged. When the process exits (the entry's SIGTERM
 * shutdown) every finished span is written to TRACE_SPANS_OUT, one JSON object a line.
 *
 *   tsx test/helpers/traced-process.ts api|worker
 */
import { writeFileSync } from 'node:fs';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { startTracing } from '../../shared/tracing.js';

/** A finished span as the test reads it. */
export interface SpanRecord {
  service: string;
  scope: string;
  name: string;
  /** SpanKind: 0 internal, 1 server, 2 client, 3 producer, 4 consumer. */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  links: { traceId: string; spanId: string }[];
  attributes: Record<string, unknown>;
}

const which = process.argv[2];
const out = process.env.TRACE_SPANS_OUT;
if ((which !== 'api' && which !== 'worker') || !out) {
  console.error('usage: TRACE_SPANS_OUT=<file> tsx test/helpers/traced-process.ts api|worker');
  process.exit(2);
}

const record = (s: ReadableSpan): SpanRecord => ({
  service: String(s.resource.attributes['service.name']),
  scope: s.instrumentationScope.name,
  name: s.name,
  kind: s.kind,
  traceId: s.spanContext().traceId,
  spanId: s.spanContext().spanId,
  parentSpanId: s.parentSpanContext?.spanId ?? null,
  links: s.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })),
  attributes: { ...s.attributes },
});

let written = false;
/** The spans kept so far, written once: at the tracer's shutdown (which empties the exporter) or at exit. */
function writeSpans(spans: readonly ReadableSpan[]): void {
  if (written) return;
  written = true;
  writeFileSync(out!, spans.map((s) => `${JSON.stringify(record(s))}\n`).join(''));
}

class KeptSpans extends InMemorySpanExporter {
  override shutdown(): Promise<void> {
    writeSpans(this.getFinishedSpans());
    return super.shutdown();
  }
}

const exporter = new KeptSpans();
await startTracing(which, { spanProcessors: [new SimpleSpanProcessor({ exporter })] });
process.on('exit', () => writeSpans(exporter.getFinishedSpans()));
await import(which === 'api' ? '../../api/server.js' : '../../workers/index.js');
