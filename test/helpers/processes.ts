/**
 * Waiting on other processes in tests: the port an API process listens on (started with
 * PORT=0), and polling until a probe answers.
 */

/**
 * Polls `probe` every 100 ms until it answers something other than undefined; after `ms`
 * fails naming `what` (and, when given, what the processes said).
 */
export async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined> | T | undefined, said?: () => string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${said ? `; the processes said:\n${said()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The port an API process started with PORT=0 (and LOG_LEVEL info or lower) listens on, read
 * from its `api listening` log line in `output()`; after `ms` fails with what it said.
 */
export function apiPort(output: () => string, ms = 30_000, what = 'the API to listen'): Promise<number> {
  return until(
    what,
    ms,
    () => {
      for (const line of output().split('\n')) {
        // Each log line is one JSON object (pino); other output is passed over.
        if (!line.includes('"api listening"')) continue;
        const port = (JSON.parse(line.slice(line.indexOf('{'))) as { port?: unknown }).port;
        if (typeof port === 'number' && port > 0) return port;
      }
      return undefined;
    },
    output,
  );
}
