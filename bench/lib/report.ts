/**
 * Writing a bench's figures: the "Measured <time> on commit <sha>" header, the section of
 * the bench's own page (bench/<bench>/README.md, between markers), and its headline rows in
 * the table that opens bench/README.md.
 *
 * A figure is a reference only if the build it measured is a commit: when the tree has
 * uncommitted changes (at the start of the run or at the end, or HEAD moved meanwhile;
 * the bench pages themselves, every README.md of bench/, do not count) the
 * figures are printed and **not written**; BENCH_ALLOW_DIRTY=1 writes them anyway, marked
 * "WITH UNCOMMITTED CHANGES" in the header and the table. BENCH_README=0 never writes
 * (smoke runs with short settings).
 */
import { execFileSync } from 'node:child_process';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isoSecond } from './format.js';
import { ROOT } from './procs.js';

interface Revision {
  sha: string;
  dirty: boolean;
}

function revisionNow(): Revision {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    // The benches' own pages are their output, not part of what is measured: one bench's
    // figures written do not make the next bench's build "uncommitted".
    const status = execFileSync('git', ['status', '--porcelain', '--', '.', ':(exclude)bench/README.md', ':(exclude)bench/*/README.md'], { cwd: ROOT, encoding: 'utf8' });
    const dirty = status.trim() !== '';
    return { sha, dirty };
  } catch {
    return { sha: 'unknown', dirty: true };
  }
}

/** The tree when this bench started (bench/run.sh built dist/ from it just before). */
const AT_START = revisionNow();

/** The commit measured, and whether the tree differed from it at the start or now. */
export function measuredRevision(): Revision {
  const now = revisionNow();
  return { sha: AT_START.sha, dirty: AT_START.dirty || now.dirty || now.sha !== AT_START.sha };
}

const DIRTY_MARK = 'WITH UNCOMMITTED CHANGES';

/** `abc1234`, or `abc1234 **WITH UNCOMMITTED CHANGES**`. */
const commitLabel = (r: Revision): string => (r.dirty ? `${r.sha} **${DIRTY_MARK}**` : r.sha);

/** `Measured 2026-11-23T12:24:08Z on commit abc1234.` (loudly marked when the tree was dirty). */
export function measuredLine(at: Date, verb = 'Measured'): string {
  const r = measuredRevision();
  const mark = r.dirty ? ` **${DIRTY_MARK}: not a reference figure; re-measure at a commit**` : '';
  return `${verb} ${isoSecond(at)} on commit ${r.sha}${mark}.`;
}

/** Said at the start of a run, so nobody waits minutes to learn the figures will not be written. */
export function warnIfDirty(tag: string): void {
  if (AT_START.dirty && process.env.BENCH_README !== '0') {
    console.log(
      `${tag}: the tree has uncommitted changes: the figures will be printed, not written ` +
        `(commit first, or BENCH_ALLOW_DIRTY=1 to write them marked as such)`,
    );
  }
}

/** A figure for the table that opens bench/README.md. */
export interface Headline {
  /** Unique and stable, e.g. `escrows/get`: the row's key in the table. */
  id: string;
  figure: string;
  goal: string;
  measured: string;
  /** Undefined when the figure has no goal. */
  met?: boolean;
  /** The rounds spread more than 2× (bench/lib/verdict.ts): written "noisy", whatever `met` says. */
  noisy?: boolean;
}

const SUMMARY = path.join(ROOT, 'bench', 'README.md');
const SUMMARY_END = '<!-- summary:end -->';

function summaryRow(h: Headline, page: string, at: Date, commit: string): string {
  const verdict = h.noisy ? ' **noisy**' : h.met === undefined ? '' : h.met ? ' met' : ' **not met**';
  const when = `${at.toISOString().slice(0, 10)} ${at.toISOString().slice(11, 16)} UTC`;
  return `| <!-- ${h.id} --> [${h.figure}](${page}/README.md) | ${h.goal} | **${h.measured}**${verdict} | ${commit} | ${when} |`;
}

/** Replaces (or adds, before the table's end marker) the rows of `headlines` in bench/README.md. */
async function updateSummary(headlines: readonly Headline[], page: string, at: Date, commit: string): Promise<void> {
  const lines = (await readFile(SUMMARY, 'utf8')).split('\n');
  for (const h of headlines) {
    const row = summaryRow(h, page, at, commit);
    const index = lines.findIndex((l) => l.includes(`<!-- ${h.id} -->`));
    if (index >= 0) lines[index] = row;
    else {
      const end = lines.indexOf(SUMMARY_END);
      if (end < 0) throw new Error(`${SUMMARY} has no ${SUMMARY_END} marker`);
      lines.splice(end, 0, row);
    }
  }
  await writeAtomically(SUMMARY, lines.join('\n'));
}

async function writeAtomically(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

/** Replaces the text between `<!-- marker:start -->` and `<!-- marker:end -->` of `file` (appending them when missing). */
export async function replaceBetweenMarkers(file: string, marker: string, section: string): Promise<void> {
  const start = `<!-- ${marker}:start -->`;
  const end = `<!-- ${marker}:end -->`;
  const text = await readFile(file, 'utf8');
  const block = `${start}\n${section}\n${end}`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  await writeAtomically(file, from >= 0 && to > from ? text.slice(0, from) + block + text.slice(to + end.length) : `${text.replace(/\s*$/, '\n\n')}${block}\n`);
}

/**
 * Writes a run's section to bench/<page>/README.md (between the `marker` markers) and its
 * headlines to the table of bench/README.md — unless BENCH_README=0, or the tree was dirty
 * (see the header). Returns whether it wrote.
 */
export async function publish(opts: { page: string; marker: string; markdown: string; headlines: readonly Headline[]; at: Date; tag: string }): Promise<boolean> {
  const file = path.join(ROOT, 'bench', opts.page, 'README.md');
  const rel = path.relative(ROOT, file);
  if (process.env.BENCH_README === '0') {
    console.log(`${opts.tag}: ${rel} left as it was (BENCH_README=0)`);
    return false;
  }
  if (process.env.BENCH_AGAINST) {
    console.log(`${opts.tag}: ${rel} left as it was: the "floor" columns above are other service code (BENCH_AGAINST=${process.env.BENCH_AGAINST}), not the floor`);
    return false;
  }
  const r = measuredRevision();
  if (r.dirty && process.env.BENCH_ALLOW_DIRTY !== '1') {
    console.log(
      `${opts.tag}: NOT written to ${rel}: the tree had uncommitted changes (or HEAD moved) during the run, ` +
        `so these figures belong to no commit. Commit, then run again (or BENCH_ALLOW_DIRTY=1 to write them marked as such).`,
    );
    return false;
  }
  await replaceBetweenMarkers(file, opts.marker, opts.markdown);
  await updateSummary(opts.headlines, opts.page, opts.at, commitLabel(r));
  console.log(`${opts.tag}: results written to ${rel} and bench/README.md`);
  return true;
}
