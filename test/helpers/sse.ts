/** A server-sent-event client for the notification stream tests: reads the stream as text and waits for a piece of it. */
import { request as httpRequest, type IncomingMessage } from 'node:http';

export interface Sse {
  status: number;
  type: string;
  text: () => string;
  ended: () => boolean;
  waitFor: (needle: string, from?: number, ms?: number) => Promise<number>;
  close: () => void;
  json: () => Promise<{ error?: { code: string } }>;
}

/** GET /v1/notifications/stream on a loopback port with a personal key. */
export function openStream(port: number, key: string): Promise<Sse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/notifications/stream', headers: { Authorization: `Bearer ${key}` } }, (res: IncomingMessage) => {
      let buf = '';
      let done = false;
      const waiters: (() => void)[] = [];
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        buf += c;
        for (const w of waiters.splice(0)) w();
      });
      res.on('end', () => {
        done = true;
        for (const w of waiters.splice(0)) w();
      });
      res.on('error', () => undefined);
      resolve({
        status: res.statusCode ?? 0,
        type: String(res.headers['content-type'] ?? ''),
        text: () => buf,
        ended: () => done,
        async waitFor(needle, from = 0, ms = 1000) {
          const deadline = Date.now() + ms;
          for (;;) {
            const at = buf.indexOf(needle, from);
            if (at >= 0) return at;
            if (done || Date.now() > deadline) throw new Error(`no ${JSON.stringify(needle)} within ${ms} ms; got ${JSON.stringify(buf)}`);
            await new Promise<void>((r) => {
              waiters.push(r);
              setTimeout(r, 20);
            });
          }
        },
        close: () => req.destroy(),
        json: async () => {
          await new Promise<void>((r) => (done ? r() : res.on('end', () => r())));
          return JSON.parse(buf) as { error?: { code: string } };
        },
      });
    });
    req.on('error', reject);
    req.end();
  });
}
