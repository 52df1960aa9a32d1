import type { Client, InStatement, Transaction, TransactionMode } from "@libsql/client";

/**
 * Why a process's writes take turns. libSQL's local driver runs SQLite on the event-loop thread over a pool of
 * connections with a busy timeout. A transaction stays open across awaits (a device write reads, checks and
 * audits inside it); if another write starts meanwhile on another pooled connection, SQLite's busy handler
 * waits for the lock *on the event-loop thread*, so the transaction holding the lock can never finish: the
 * process freezes for the whole busy timeout and the second write fails with SQLITE_BUSY. So within one
 * process a write transaction holds the turn from BEGIN to COMMIT or ROLLBACK, a write statement outside one
 * holds it for its call, and the others wait asynchronously. Reads never wait: in WAL mode readers do not
 * block on the writer. Writers in other processes meet SQLite's own busy timeout, which is fine: they do not
 * share this event loop.
 *
 * Since writes go one at a time anyway, they all go over one connection of their own (`writer`), and reads over
 * the pool: that connection is the one place to set what only writes need (openDatabase sets synchronous).
 */
class Turns {
  private held = false;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly timeoutMs: number) {}

  async take(): Promise<() => void> {
    if (this.held) {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        // A write awaited on the client inside a transaction (instead of on the transaction) would wait forever.
        const timer = setTimeout(() => {
          this.queue.splice(this.queue.indexOf(wake), 1);
          reject(new Error(`waited ${this.timeoutMs / 1000} s for this process's turn to write to the database`));
        }, this.timeoutMs);
        this.queue.push(wake);
      });
    }
    this.held = true;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      if (next) next();
      else this.held = false;
    };
  }
}

const isRead = (stmt: InStatement) => /^\s*(select|explain)\b/i.test(typeof stmt === "string" ? stmt : stmt.sql);

/**
 * One client over `reader` (a pool, for reads) and `writer` (a single connection, for writes), with this
 * process's writes taking turns (see above).
 */
export function withWriteTurns(reader: Client, writer: Client, timeoutMs = 60_000): Client {
  const turns = new Turns(timeoutMs);
  const inTurn = async <T>(work: () => Promise<T>): Promise<T> => {
    const release = await turns.take();
    try {
      return await work();
    } finally {
      release();
    }
  };
  const holdingTurn = (tx: Transaction, release: () => void): Transaction =>
    new Proxy(tx, {
      get(target, prop) {
        if (prop === "commit" || prop === "rollback") return () => target[prop]().finally(release);
        if (prop === "close") {
          return () => {
            target.close();
            release();
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  return new Proxy(reader, {
    get(target, prop) {
      if (prop === "execute") {
        return (stmt: InStatement, args?: unknown) =>
          isRead(stmt) ? target.execute(stmt as never, args as never) : inTurn(() => writer.execute(stmt as never, args as never));
      }
      if (prop === "batch" || prop === "migrate" || prop === "executeMultiple") {
        return (...args: unknown[]) => inTurn(() => (writer[prop] as (...a: unknown[]) => Promise<unknown>)(...args));
      }
      if (prop === "transaction") {
        return async (mode?: TransactionMode) => {
          if (mode === "read") return target.transaction(mode);
          const release = await turns.take();
          try {
            return holdingTurn(await writer.transaction(mode), release);
          } catch (err) {
            release();
            throw err;
          }
        };
      }
      if (prop === "close") {
        return () => {
          writer.close();
          target.close();
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
