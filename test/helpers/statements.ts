/**
 * Every statement the code sends to Postgres while `work` runs, by its text, in order
 * (pg's Client.query, under knex, named statements and folded transactions alike): for
 * tests of how many round trips a route takes and what travels in each.
 */
import pg from 'pg';

export async function statementsOf<T>(work: () => PromiseLike<T>): Promise<{ sent: string[]; result: T }> {
  const sent: string[] = [];
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const config = args[0];
    sent.push(typeof config === 'string' ? config : ((config as { text?: string } | undefined)?.text ?? ''));
    return original.apply(this, args);
  };
  let result: T;
  try {
    result = await work();
  } finally {
    proto.query = original;
  }
  return { sent, result };
}
