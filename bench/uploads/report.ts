/**
 * The upload bench's report: peak and current memory of the API and the worker after each
 * step, the goal's verdict, and the cleaning throughput.
 */
import sharp from 'sharp';
import { fmtNum, mdTable, percentile, statusList } from '../lib/format.js';
import { measuredLine, type Headline } from '../lib/report.js';
import { machine } from '../lib/sample.js';
import { settings, type Memory, type MemoryPhase, type Throughput } from './load.js';
import { MB, type Corpus } from './seed.js';
import { PEAK_LIMIT_MB, type Verdict } from './verify.js';

export function report(at: Date, loads: string, corpus: Corpus, mem: MemoryPhase, m3: Memory, t: Throughput, verdict: Verdict, workerConcurrency: string): { markdown: string; headlines: Headline[] } {
  const memRow = (label: string, m: Memory) => [label, fmtNum(m.api.peak), fmtNum(m.api.now), fmtNum(m.worker.peak), fmtNum(m.worker.now)];
  const ok = t.latencies.length;
  const { bomb, pdf } = mem;
  const peak = Math.max(mem.m2.api.peak, mem.m2.worker.peak);
  const headlines: Headline[] = [
    {
      id: 'uploads/memory',
      figure: 'Uploads: a 400-megapixel PNG bomb refused from its header, and the API and worker peaks through it and a 10 MB PDF',
      goal: `refused, peaks < ${PEAK_LIMIT_MB} MB`,
      measured: `${bomb.code ?? bomb.status}, ${fmtNum(peak)} MB`,
      met: verdict.goalMet,
    },
    { id: 'uploads/throughput', figure: `Uploads: 2 MB JPEGs cleaned and stored, ${settings.connections} at a time`, goal: '—', measured: `${fmtNum(ok / t.seconds)} files/s` },
  ];
  const lines = [
    `${measuredLine(at)} Sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}); worker concurrency ${workerConcurrency}; local storage; ` +
      `${machine('nothing pinned: the API, the worker, Postgres and Redis share the cores')}. Load average (1, 5, 15 min) before / after: ${loads}.`,
    '',
    `**Memory** (peak = VmHWM since the process started; current = VmRSS). Bomb: ${fmtNum(corpus.bomb.length / 1024)} KB PNG of 20,000 x 20,000 px -> ` +
      `${bomb.status} ${bomb.code} in ${fmtNum(bomb.ms)} ms. PDF: ${fmtNum(corpus.pdf.length / MB)} MB, ` +
      `${pdf.status === 200 ? `stored ${fmtNum((pdf.size ?? 0) / MB)} MB` : `${pdf.status} ${pdf.code}`} in ${fmtNum(pdf.ms)} ms.`,
    '',
    ...mdTable(['after', 'API peak MB', 'API now MB', 'worker peak MB', 'worker now MB'], 'lrrrr', [
      memRow('start + one small upload', mem.m0),
      memRow('the bomb', mem.m1),
      memRow('the 10 MB PDF', mem.m2),
      memRow(`${settings.jpegs} JPEGs of ${fmtNum(corpus.jpegMB)} MB`, m3),
    ]),
    '',
    `Goal (bomb refused from its header, both peaks under ${PEAK_LIMIT_MB} MB through the bomb and the PDF): **${verdict.goalMet ? 'met' : 'not met'}**.`,
    '',
    `**Throughput**: ${ok} of ${settings.jpegs} JPEGs (${fmtNum(corpus.jpegMB)} MB, 1600 x 1600 px, with EXIF/GPS) cleaned and stored in ${fmtNum(t.seconds)} s ` +
      `with ${settings.connections} at a time: **${fmtNum(ok / t.seconds)} files/s, ${fmtNum(t.bytesIn / MB / t.seconds)} MB/s**; latency per upload ` +
      `p50 ${fmtNum(percentile(t.latencies, 0.5))} ms, p95 ${fmtNum(percentile(t.latencies, 0.95))} ms, max ${fmtNum(t.latencies[ok - 1] ?? Number.NaN)} ms` +
      (t.failures.size > 0 ? `; failures: ${statusList(t.failures)}` : '') +
      '.',
    ...(verdict.problems.length ? ['', `**Problems:** ${verdict.problems.join('; ')}.`] : []),
  ];
  return { markdown: lines.join('\n'), headlines };
}
