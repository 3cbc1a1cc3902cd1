/** The product stored a write but its read side lags behind (503 `unavailable`): the write counts. */
export class StoredButLagging extends Error {}

/** A tiny JSON client for seeding benchmark data over the public API. */
export async function call<T = any>(baseUrl: string, method: string, path: string, token?: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status === 503 && method !== 'GET') throw new StoredButLagging(`${method} ${path} → 503: ${text}`);
  if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` in flight. */
export async function inParallel(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await task(next++);
    }),
  );
}
