/**
 * Issue 7's goal, checked on the answers and the memory read: the bomb refused from its
 * header (IMAGE_TOO_LARGE, before any decoding), the PDF stored, both processes'
 * peaks under 300 MB through the bomb and the PDF, and every JPEG cleaned and stored.
 */
import { statusList } from '../lib/format.js';
import type { MemoryPhase, Throughput } from './load.js';
import { settings } from './load.js';

export const PEAK_LIMIT_MB = 300;

export interface Verdict {
  goalMet: boolean;
  /** What else went wrong (a PDF not stored, JPEGs refused): reported, and the exit code 1. */
  problems: string[];
}

export function verify(mem: MemoryPhase, t: Throughput): Verdict {
  const goalMet = mem.bomb.code === 'IMAGE_TOO_LARGE' && Math.max(mem.m2.api.peak, mem.m2.worker.peak) < PEAK_LIMIT_MB;
  const problems: string[] = [];
  if (mem.bomb.code !== 'IMAGE_TOO_LARGE') problems.push(`the bomb answered ${mem.bomb.status} ${mem.bomb.code}, expected 400 IMAGE_TOO_LARGE`);
  if (mem.pdf.status !== 200 || !mem.pdf.size) problems.push(`the PDF answered ${mem.pdf.status} ${mem.pdf.code ?? ''}, expected 200 and a stored size`);
  if (t.latencies.length !== settings.jpegs) problems.push(`${t.latencies.length} of ${settings.jpegs} JPEGs stored; failures ${statusList(t.failures)}`);
  return { goalMet, problems };
}
