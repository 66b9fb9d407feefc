/**
 * A floor is at least as lean as the route it bounds (issue 43, "Benches that cannot
 * flatter"). Each money bench's verify step starts one more copy of the API and of its
 * floor server, each with bench/lib/statement-probe.ts loaded ahead of it (the tests' own
 * counter, test/helpers/statements.ts: every `Client.query` of node-postgres, knex's and
 * named statements and pipelined flights alike), runs one flow through each, and counts per
 * flow on both sides:
 *
 * - **statements**: the SQL statements sent (a simple-protocol text of several statements,
 *   `BEGIN; …; COMMIT`, counts each);
 * - **round trips**: the flights, statements sent on one connection before any answer came
 *   back on it counting once.
 *
 * `checkLeanFloor` prints them and throws (the bench stops before any load: it reports no
 * ratio) when the floor sends more statements or more round trips per flow than the API: a
 * ratio against a heavier floor flatters the API. The measured servers never carry the
 * probe.
 */
import { fmtInt, mdTable } from './format.js';
import { freePort, HOST, startChild, stopChild, waitFor, type Child } from './procs.js';

/** What one side sent for one step (one request) or one flow. */
export interface Sent {
  statements: number;
  roundTrips: number;
  /** Each statement's text, in order (for the error message). */
  texts: string[];
}

/** A server with the probe loaded: its base URL and its window of statements. */
export interface CountedServer {
  name: string;
  base: string;
  child: Child;
  /** Closes the probe's window: what the process sent since the last call. */
  take: () => Promise<Sent>;
}

/**
 * The SQL statements in one text sent to Postgres: its top-level `;`-separated parts that
 * are not empty, outside quotes, dollar quotes and comments.
 */
export function countStatements(text: string): number {
  let n = 0;
  let content = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      i = end < 0 ? text.length : end;
      content = true;
    } else if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(text.slice(i))?.[0];
      if (tag) {
        const end = text.indexOf(tag, i + tag.length);
        i = end < 0 ? text.length : end + tag.length - 1;
      }
      content = true;
    } else if (c === ';') {
      if (content) n++;
      content = false;
    } else if (!/\s/.test(c)) content = true;
  }
  return n + (content ? 1 : 0);
}

/**
 * Starts `node --import tsx --import ./bench/lib/statement-probe.ts <args>` (a server with
 * the probe), waits for its `/readyz`.
 */
export async function startCounted(name: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<CountedServer> {
  const [port, probePort] = [await freePort(), await freePort()];
  const base = `http://${HOST}:${port}`;
  const child = startChild(`${name}, counting statements`, ['--import', 'tsx', '--import', './bench/lib/statement-probe.ts', ...args], {
    ...env,
    PORT: String(port),
    PUBLIC_BASE_URL: env.PUBLIC_BASE_URL ?? base,
    BENCH_STATEMENTS_PORT: String(probePort),
  });
  await waitFor(`${base}/readyz`, child, 30_000);
  const take = async (): Promise<Sent> => {
    const res = await fetch(`http://${HOST}:${probePort}/`, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`${name}: the statement probe answered ${res.status} ${await res.text()}`);
    const w = (await res.json()) as { sent: string[]; flights: number[] };
    return { statements: w.sent.reduce((s, t) => s + countStatements(t), 0), roundTrips: w.flights.length, texts: w.sent };
  };
  await take(); // what starting and /readyz sent
  return { name, base, child, take };
}

/** One step of a flow: `run` sends its request to `base` (and checks its answer). */
export interface CountedStep {
  step: string;
  run: (base: string) => Promise<void>;
}

/** Runs `steps` against `server` one after another, answering what each sent. */
export async function countSteps(server: CountedServer, steps: readonly CountedStep[]): Promise<{ step: string; sent: Sent }[]> {
  await server.take();
  const out: { step: string; sent: Sent }[] = [];
  for (const s of steps) {
    await s.run(server.base);
    out.push({ step: s.step, sent: await server.take() });
  }
  return out;
}

export interface LeanCheck {
  api: Sent;
  floor: Sent;
  /** Per step: API and floor. */
  steps: { step: string; api: Sent; floor: Sent }[];
  /** A line for the page: `per flow, API 9 round trips (14 statements), floor 7 (12)…`. */
  line: string;
  /** A table for the page. */
  table: string[];
}

const total = (xs: readonly { sent: Sent }[]): Sent => ({
  statements: xs.reduce((s, x) => s + x.sent.statements, 0),
  roundTrips: xs.reduce((s, x) => s + x.sent.roundTrips, 0),
  texts: xs.flatMap((x) => x.sent.texts),
});

/**
 * Compares what the API and the floor sent for one flow each (see the header): prints it,
 * throws when the floor sent more statements or round trips than the API.
 */
export function checkLeanFloor(tag: string, api: readonly { step: string; sent: Sent }[], floor: readonly { step: string; sent: Sent }[]): LeanCheck {
  const a = total(api);
  const f = total(floor);
  const steps = api.map((x, i) => ({ step: x.step, api: x.sent, floor: floor[i]!.sent }));
  const table = mdTable(
    ['Per flow', 'API round trips', 'API statements', 'Floor round trips', 'Floor statements'],
    'lrrrr',
    [
      ...steps.map((s) => [s.step, fmtInt(s.api.roundTrips), fmtInt(s.api.statements), fmtInt(s.floor.roundTrips), fmtInt(s.floor.statements)]),
      ['**the flow**', `**${fmtInt(a.roundTrips)}**`, `**${fmtInt(a.statements)}**`, `**${fmtInt(f.roundTrips)}**`, `**${fmtInt(f.statements)}**`],
    ],
  );
  const line =
    `Sent to Postgres per flow (counted in the verify step by test/helpers/statements.ts in a copy of each server): ` +
    `API ${fmtInt(a.roundTrips)} round trips, ${fmtInt(a.statements)} statements; floor ${fmtInt(f.roundTrips)} round trips, ${fmtInt(f.statements)} statements ` +
    `(${steps.map((s) => `${s.step} ${s.api.roundTrips}/${s.api.statements} against ${s.floor.roundTrips}/${s.floor.statements}`).join(', ')}; round trips/statements)` +
    // Under BENCH_AGAINST the rounds' other side is other service code, which is not counted here.
    (process.env.BENCH_AGAINST ? `; the floor's counts, not those of the other code these rounds run (BENCH_AGAINST=${process.env.BENCH_AGAINST})` : '');
  console.log(`${tag}: ${line}`);
  if (f.statements > a.statements || f.roundTrips > a.roundTrips) {
    const list = (s: Sent) => s.texts.map((t, i) => `  ${i + 1}. ${t.replace(/\s+/g, ' ').slice(0, 160)}`).join('\n');
    throw new Error(
      `the floor sends more than the API per flow (round trips ${f.roundTrips} against ${a.roundTrips}, statements ${f.statements} against ${a.statements}): ` +
        `a floor must be at least as lean as its route, so no ratio is reported. Make the floor leaner.\nAPI:\n${list(a)}\nfloor:\n${list(f)}`,
    );
  }
  return { api: a, floor: f, steps, line, table };
}

/**
 * Starts a counting copy of the API (`dist/api/server.js`) and of the floor server, runs
 * the flows of `api` and `floor` (each flow its own item) through each, stops them and
 * checks the floor is at least as lean (`checkLeanFloor`) on the **last** flow of each: the
 * ones before warm the servers (their connections opened, their named statements
 * prepared), as the load's warm-up does.
 */
export async function countFlows(opts: { tag: string; env: NodeJS.ProcessEnv; api: readonly (readonly CountedStep[])[]; floor: readonly (readonly CountedStep[])[] }): Promise<LeanCheck> {
  const api = await startCounted('API (node dist/api/server.js)', ['dist/api/server.js'], opts.env);
  let floor: CountedServer | undefined;
  try {
    floor = await startCounted('floor server (bench/auth-read/floor-server.ts)', ['bench/auth-read/floor-server.ts'], opts.env);
    const last = async (server: CountedServer, flows: readonly (readonly CountedStep[])[]) => {
      let out: { step: string; sent: Sent }[] = [];
      for (const flow of flows) out = await countSteps(server, flow);
      return out;
    };
    return checkLeanFloor(opts.tag, await last(api, opts.api), await last(floor, opts.floor));
  } catch (err) {
    for (const c of [api.child, floor?.child]) if (c?.stderrTail()) console.error(`${opts.tag}: ${c.name}, last stderr:\n${c.stderrTail()}`);
    throw err;
  } finally {
    await stopChild(api.child);
    if (floor) await stopChild(floor.child);
  }
}
