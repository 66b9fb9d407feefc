/** Shared helpers of the accounts-and-access tests (account-*, keys-*, password-*, admin-*, secrets-*). */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import supertest, { type Response } from 'supertest';
import { createApp } from '../../api/app.js';
import { config } from '../../shared/config.js';
import * as loggerModule from '../../shared/logger.js';

export type TestAgent = ReturnType<typeof supertest.agent>;

/** A cookie-keeping client over a fresh app instance. */
export function newAgent(): TestAgent {
  return supertest.agent(createApp().callback());
}

let seq = 0;

/** A fresh, valid sign-up body (unique e-mail and username). */
export function signUpBody(overrides: Partial<Record<'email' | 'password' | 'username' | 'full_name', string>> = {}) {
  seq += 1;
  const tag = `${seq}${randomUUID().slice(0, 6)}`;
  return {
    email: `new${tag}@example.com`,
    password: 'Sturdy9Password',
    username: `new_${tag}`,
    full_name: `New Person ${seq}`,
    ...overrides,
  };
}

/** The session token from a response's Set-Cookie header, or null. */
export function sessionTokenOf(res: Response): string | null {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  for (const c of cookies) {
    const m = new RegExp(`^${config.sessionCookieName}=([^;]*)`).exec(c);
    if (m && m[1]) return m[1];
  }
  return null;
}

export function bearer(key: string): [string, string] {
  return ['Authorization', `Bearer ${key}`];
}

interface PinoLike {
  level: string;
  [key: symbol]: unknown;
}

/** Every pino logger exported by shared/logger.ts (the app logger, the access log, any later one). */
function appLoggers(): PinoLike[] {
  const values: unknown[] = Object.values(loggerModule);
  return values.filter((v): v is PinoLike => typeof v === 'object' && v !== null && pino.symbols.streamSym in v);
}

/**
 * Captures every log line the app writes while `fn` runs, at level trace. The loggers are
 * pino instances writing through their destination streams (not process.stdout.write), so
 * each stream's write is swapped for the duration; process.stdout / stderr writes are
 * captured as well.
 */
export async function captureLogs<T>(fn: () => Promise<T>): Promise<{ result: T; text: string; lines: number }> {
  const chunks: string[] = [];
  const grab = (chunk: unknown): boolean => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
    return true;
  };
  const restore: (() => void)[] = [];
  for (const log of appLoggers()) {
    const stream = log[pino.symbols.streamSym] as { write: (s: string) => unknown };
    const savedLevel = log.level;
    const savedWrite = stream.write;
    log.level = 'trace';
    stream.write = grab;
    restore.push(() => {
      stream.write = savedWrite;
      log.level = savedLevel;
    });
  }
  // The access log writes its own lines straight to its buffered stream.
  const access = loggerModule.accessStream as unknown as { write: (s: string) => unknown };
  const savedAccessWrite = access.write;
  access.write = grab;
  restore.push(() => {
    access.write = savedAccessWrite;
  });
  const savedStdout = process.stdout.write.bind(process.stdout);
  const savedStderr = process.stderr.write.bind(process.stderr);
  process.stdout.write = grab;
  process.stderr.write = grab;
  restore.push(() => {
    process.stdout.write = savedStdout;
    process.stderr.write = savedStderr;
  });
  try {
    const result = await fn();
    // Access lines wait up to 100 ms for their batch: hand them over while still captured.
    loggerModule.flushAccessLines();
    const text = chunks.join('');
    return { result, text, lines: text.split('\n').filter((line) => line.trim() !== '').length };
  } finally {
    for (const undo of restore.reverse()) undo();
  }
}
