/** Waiting on other processes in tests: a free loopback port, and polling until a probe answers. */
import { createServer, type AddressInfo } from 'node:net';

/** A loopback port free at the time of asking (for a child process to listen on). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

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
