// The order of a parallel test run (scripts/test.sh): test files longest first, so the
// workers, which take the next file as they finish one, end at about the same time.
//
//   node test/helpers/test-plan.cjs [files...]   prints the files (default: .mocharc.json's
//                                                spec), one a line, longest first
//   node test/helpers/test-plan.cjs --record TSV  folds a run's "<ms>\t<file>" lines into
//                                                .data/test-times.json
//
// Times come from test/helpers/test-times.json (committed) overlaid with
// .data/test-times.json (this machine's last full run). A file with no time yet goes first.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const COMMITTED = path.join(__dirname, 'test-times.json');
const LOCAL = path.join(ROOT, '.data', 'test-times.json');

const readJson = (file) => {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return {};
  }
};

/** The files of .mocharc.json's spec, whose entries are all "<dir>/**\/*<suffix>". */
function defaultFiles() {
  const { spec } = readJson(path.join(ROOT, '.mocharc.json'));
  const files = [];
  for (const pattern of spec ?? []) {
    const m = /^(.+)\/\*\*\/\*([\w.-]+)$/.exec(pattern);
    if (!m) throw new Error(`test-plan: cannot expand spec entry ${pattern}`);
    const [, dir, suffix] = m;
    if (!fs.existsSync(path.join(ROOT, dir))) continue;
    for (const f of fs.readdirSync(path.join(ROOT, dir), { recursive: true })) {
      if (String(f).endsWith(suffix)) files.push(path.posix.join(dir, String(f).split(path.sep).join('/')));
    }
  }
  return files.sort();
}

const args = process.argv.slice(2);
if (args[0] === '--record') {
  const times = readJson(LOCAL);
  const lines = fs.existsSync(args[1]) ? fs.readFileSync(args[1], 'utf8').split('\n') : [];
  for (const line of lines) {
    const [ms, file] = line.split('\t');
    if (file && Number.isFinite(Number(ms))) times[path.relative(ROOT, path.resolve(ROOT, file))] = Number(ms);
  }
  fs.mkdirSync(path.dirname(LOCAL), { recursive: true });
  fs.writeFileSync(LOCAL, `${JSON.stringify(times, null, 1)}\n`);
} else {
  const times = { ...readJson(COMMITTED), ...readJson(LOCAL) };
  const files = args.length > 0 ? args : defaultFiles();
  const time = (f) => times[path.relative(ROOT, path.resolve(ROOT, f))] ?? Infinity;
  const ordered = files.map((f, i) => ({ f, i, t: time(f) })).sort((a, b) => b.t - a.t || a.i - b.i);
  process.stdout.write(ordered.map((o) => `${o.f}\n`).join(''));
}
