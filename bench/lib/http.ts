/** One HTTP request and its JSON answer, for the checks a bench makes before it measures. */

export interface JsonAnswer {
  status: number;
  text: string;
  headers: Headers;
  /** The parsed body, or undefined when it is not JSON. */
  body: unknown;
}

export async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<JsonAnswer> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, text, headers: res.headers, body };
}

/** `data` of a `{ success: true, data }` answer; undefined otherwise. */
export function dataOf<T = unknown>(a: JsonAnswer): T | undefined {
  const b = a.body as { success?: unknown; data?: unknown } | undefined;
  return b?.success === true ? (b.data as T) : undefined;
}

/** Throws `check failed: <what>` with the answer when `ok` is false. */
export function expect(ok: boolean, what: string, a: JsonAnswer): void {
  if (!ok) throw new Error(`check failed: ${what}; answered ${a.status} ${a.text.slice(0, 400)}`);
}
