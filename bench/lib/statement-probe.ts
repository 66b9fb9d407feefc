/**
 * Loaded ahead of a server (`node --import tsx --import ./bench/lib/statement-probe.ts …`)
 * by bench/lib/statements.ts, only in the extra copies of the API and of a floor server a
 * money bench starts for its verify step, never in the servers it measures: every statement
 * the process sends to Postgres is recorded by the tests' own counter
 * (test/helpers/statements.ts `statementsOf`: node-postgres's `Client.query`, knex, named
 * statements and pipelined flights alike), in windows. `GET /` on 127.0.0.1:
 * BENCH_STATEMENTS_PORT closes the current window, answers what it recorded
 * (`{sent, flights}`: each statement's text, and the number of statements in each round
 * trip) and opens the next.
 */
import http from 'node:http';
import { statementsOf } from '../../test/helpers/statements.js';

interface Window {
  sent: string[];
  flights: number[];
}

const port = Number(process.env.BENCH_STATEMENTS_PORT);
if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error('statement-probe: BENCH_STATEMENTS_PORT must be a port number');

let close: () => void = () => undefined;
let current: Promise<Window> = Promise.resolve({ sent: [], flights: [] });

function open(): void {
  const gate = new Promise<void>((resolve) => {
    close = resolve;
  });
  current = statementsOf(() => gate).then(({ sent, flights }) => ({ sent, flights: flights.map((f) => f.length) }));
}
open();

const server = http.createServer((req, res) => {
  close();
  void current.then(
    (w) => {
      open();
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(w));
    },
    (err: unknown) => {
      open();
      res.statusCode = 500;
      res.end(String(err));
    },
  );
});
server.listen(port, '127.0.0.1');
server.unref();
