import type { Client, TransactionMode } from "@libsql/client";
import { isBusy } from "./write-turns.ts";

/**
 * Errors after which a statement sent to a libSQL server did nothing, so sending it again is safe: the server
 * was busy (SQLITE_BUSY: another writer holds the lock), or the connection was refused (the request never left;
 * a server restarting). A connection dropped after the request was sent is not among them: a write may then
 * have committed, and sending it again would do it twice.
 */
export function isTransient(err: unknown): boolean {
  if (isBusy(err)) return true;
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === "ECONNREFUSED") return true;
  }
  return false;
}

/**
 * Runs `work`, again after a pause each time it fails transiently (isTransient), until `budgetMs` has passed:
 * pauses of 10 ms doubling to 1 s, so a lock held for a moment costs a moment and a server restarting is not
 * hammered. The last error is thrown when the budget is spent. Infinity waits as long as it takes.
 */
export async function retryTransient<T>(work: () => Promise<T>, budgetMs: number): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let pause = 10; ; pause = Math.min(pause * 2, 1000)) {
    try {
      return await work();
    } catch (err) {
      if (!isTransient(err) || Date.now() + pause > deadline) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/**
 * A libSQL server's client whose statements are sent again after transient failures (isTransient) until
 * `budgetMs`: the write discipline the embedded file has in write-turns.ts (the API: 10 s, then 503; a collector:
 * as long as it takes). A write transaction takes the server's lock with its BEGIN, sent (and retried) before the
 * transaction is handed out, so the statements inside it do not meet another writer's lock.
 */
export function retryingOnServer(client: Client, budgetMs: number): Client {
  return new Proxy(client, {
    get(target, prop) {
      if (prop === "execute" || prop === "batch" || prop === "migrate" || prop === "executeMultiple") {
        return (...args: unknown[]) =>
          retryTransient(() => (target[prop] as (...a: unknown[]) => Promise<unknown>)(...args), budgetMs);
      }
      if (prop === "transaction") {
        return (mode?: TransactionMode) =>
          retryTransient(async () => {
            const tx = await target.transaction(mode);
            if (mode === "read") return tx;
            try {
              await tx.execute("SELECT 1"); // sends BEGIN: the lock is taken, or this throws and is retried
              return tx;
            } catch (err) {
              tx.close();
              throw err;
            }
          }, budgetMs);
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
