/**
 * Every statement the code sends to Postgres while `work` runs, by its text, in order
 * (pg's Client.query, under knex, named statements and folded transactions alike): for
 * tests of how many round trips a route takes and what travels in each. `rows[i]` is how
 * many rows the i-th statement answered (all its results together for several statements
 * in one query; undefined until it answered, or when it failed): for tests that a route
 * reads no more rows as a table grows. `flights`: the round trips, each the texts of the
 * statements sent in it (pipelined: sent before any answer came back on that connection).
 */
import pg from 'pg';

type Answer = { rows?: unknown[] } | { rows?: unknown[] }[] | undefined;

const rowCount = (answer: Answer): number =>
  (Array.isArray(answer) ? answer : [answer]).reduce((n, r) => n + (Array.isArray(r?.rows) ? r.rows.length : 0), 0);

export interface Statements<T> {
  sent: string[];
  rows: (number | undefined)[];
  flights: string[][];
  /** For each flight, which connection sent it (1, 2, ... in the order connections were first seen). */
  connections: number[];
  result: T;
}

export async function statementsOf<T>(work: () => PromiseLike<T>): Promise<Statements<T>> {
  const sent: string[] = [];
  const rows: (number | undefined)[] = [];
  // Round trips (issue 43: connections are pipelined): statements sent on one connection
  // before any answer came back on it since the first of them travel in one flight.
  const flights: string[][] = [];
  const connections: number[] = [];
  const ids = new WeakMap<object, number>();
  let nextId = 0;
  const open = new WeakMap<object, string[]>();
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: object, ...args: unknown[]) {
    const config = args[0];
    const text = typeof config === 'string' ? config : ((config as { text?: string } | undefined)?.text ?? '');
    const at = sent.push(text) - 1;
    rows.push(undefined);
    let flight = open.get(this);
    if (!flight) {
      flight = [];
      flights.push(flight);
      let id = ids.get(this);
      if (id === undefined) ids.set(this, (id = ++nextId));
      connections.push(id);
      open.set(this, flight);
    }
    flight.push(text);
    const answered = () => open.delete(this);
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      // knex's form: the answer comes to the callback.
      args[last] = (err: unknown, answer: Answer) => {
        answered();
        if (!err) rows[at] = rowCount(answer);
        return (callback as (e: unknown, a: Answer) => unknown)(err, answer);
      };
      return original.apply(this, args);
    }
    const out = original.apply(this, args);
    // The promise form (no callback): the answer is the promise's.
    if (out && typeof (out as PromiseLike<Answer>).then === 'function') {
      (out as PromiseLike<Answer>).then(
        (answer) => {
          answered();
          rows[at] = rowCount(answer);
        },
        () => answered(),
      );
    }
    return out;
  };
  let result: T;
  try {
    result = await work();
  } finally {
    proto.query = original;
  }
  return { sent, rows, flights, connections, result };
}

/**
 * A keyed request's flights on its transaction's connection: `opening`, the one that carried
 * the key's statement (`idempotency_open`), and `after`, each later flight on that connection.
 */
export function keyedFlights(s: Pick<Statements<unknown>, 'flights' | 'connections'>): { opening: string[]; after: string[][] } {
  const at = s.flights.findIndex((f) => f.some((t) => t.includes('idempotency_open')));
  if (at < 0) throw new Error(`no flight carried the key's statement:\n${s.flights.map((f) => f.join(' | ')).join('\n')}`);
  const connection = s.connections[at];
  return { opening: s.flights[at]!, after: s.flights.slice(at + 1).filter((_, i) => s.connections[at + 1 + i] === connection) };
}
