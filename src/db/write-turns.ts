import { threadId } from "node:worker_threads";
import type { Client, InStatement, Transaction, TransactionMode } from "@libsql/client";

/** What the threads of one process take turns on to write to one database: 0, or the writing thread's id + 1. */
export type ThreadWriteLock = Int32Array;

export const newThreadWriteLock = (): ThreadWriteLock => new Int32Array(new SharedArrayBuffer(4));

/** Frees the lock if the thread `id` died holding it (its transaction died with its connection). */
export function releaseIfHeldBy(lock: ThreadWriteLock, id: number): void {
  if (Atomics.compareExchange(lock, 0, id + 1, 0) === id + 1) Atomics.notify(lock, 0);
}

/**
 * Why a process's writes take turns. libSQL's local driver runs SQLite on the event-loop thread over a pool of
 * connections. A transaction stays open across awaits (a device write reads, checks and audits inside it); if
 * another write starts meanwhile on another pooled connection, SQLite's busy handler waits for the lock *on the
 * event-loop thread*, so the transaction holding the lock can never finish: the process freezes for the whole
 * busy timeout and the second write fails with SQLITE_BUSY. So within one process a write transaction holds the
 * turn from BEGIN to COMMIT or ROLLBACK, a write statement outside one holds it for its call, and the others
 * wait asynchronously. Reads never wait: in WAL mode readers do not block on the writer.
 *
 * Since writes go one at a time anyway, they all go over one connection of their own (`writer`), and reads over
 * the pool: that connection is the one place to set what only writes need (openDatabase sets synchronous).
 *
 * The threads of a process (the collector's sessions and its store thread) take turns the same way, on a
 * ThreadWriteLock they share: the one waiting sleeps in Atomics.waitAsync, not in SQLite, and is woken as the
 * other's turn ends.
 *
 * The lock can also be held by another process (the API and the collector). SQLite's busy handler would sleep
 * on this thread until it is free, every session and request with it: in bench:collect, claims meeting the store
 * thread's commits stopped the collector's loop 1.4 s per 1,000 jobs, before the threads shared a lock. So the
 * writer has no busy timeout, and a write it turns away with SQLITE_BUSY, which did nothing, is tried again
 * after an asynchronous pause, keeping the turn, until `busyTimeoutMs` has passed.
 *
 * Each time, the writer connection is closed and another opened. libSQL leaves a statement that failed with
 * SQLITE_BUSY in progress (tursodatabase/libsql-client-ts#352, unfixed in libsql 0.5.29): the connection keeps
 * the write lock from then on, and nothing it writes afterwards is ever committed. Closing the connection is the
 * one way to end that statement from JavaScript. Reads keep SQLite's busy timeout: in WAL mode they meet a lock
 * only while a connection recovers the log.
 */
class Turns {
  private held = false;
  private readonly queue: (() => void)[] = [];
  private readonly me = threadId + 1;

  constructor(
    private readonly timeoutMs: number,
    private readonly lock: ThreadWriteLock,
  ) {}

  async take(): Promise<() => void> {
    const deadline = Date.now() + this.timeoutMs;
    // A write awaited on the client inside a transaction (instead of on the transaction) would wait forever.
    const tooLong = () =>
      new Error(`waited ${this.timeoutMs / 1000} s for this process's turn to write to the database`);
    if (this.held) {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        // setTimeout would take Infinity for 1 ms: a turn without a time limit sets no timer.
        const timer = Number.isFinite(this.timeoutMs)
          ? setTimeout(() => {
              this.queue.splice(this.queue.indexOf(wake), 1);
              reject(tooLong());
            }, this.timeoutMs)
          : undefined;
        this.queue.push(wake);
      });
    }
    this.held = true;
    try {
      for (let holder; (holder = Atomics.compareExchange(this.lock, 0, 0, this.me)) !== 0; ) {
        const wait = Atomics.waitAsync(this.lock, 0, holder, Math.max(0, deadline - Date.now()));
        if ((wait.async ? await wait.value : wait.value) === "timed-out") throw tooLong();
      }
    } catch (err) {
      this.passOn();
      throw err;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      Atomics.store(this.lock, 0, 0);
      Atomics.notify(this.lock, 0, 1);
      this.passOn();
    };
  }

  private passOn(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.held = false;
  }
}

/**
 * SQLITE_BUSY and its extended codes, also as the cause of another error (drizzle wraps the driver's): the
 * statement or BEGIN did nothing, so trying it again is safe.
 */
export function isBusy(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (String((e as { code?: unknown }).code ?? "").startsWith("SQLITE_BUSY")) return true;
  }
  return false;
}

const isRead = (stmt: InStatement) => /^\s*(select|explain)\b/i.test(typeof stmt === "string" ? stmt : stmt.sql);

/**
 * How long a write waits: for this process's turn (turnTimeoutMs), then for other processes' locks
 * (busyTimeoutMs). Infinity waits as long as it takes.
 */
export type WriteWait = { turnTimeoutMs?: number; busyTimeoutMs?: number };

/**
 * For a process no one waits on for an answer (the collector): a write waits for other processes' locks as long
 * as they are held, however long an import or maintenance takes, since giving up would fail a job that did its
 * work (or leave it `running` until its lease ran out). Its own turns wait as long too, as they queue behind such
 * a write. The API keeps the default: a request answers 503 after 10 s rather than hang.
 */
export const WAIT_UNTIL_WRITTEN = { turnTimeoutMs: Infinity, busyTimeoutMs: Infinity } as const satisfies WriteWait;

/**
 * One client over `reader` (a pool, for reads) and a single connection from `openWriter` (no busy timeout, for
 * writes), with this process's writes taking turns and waiting for other connections' asynchronously (see above).
 */
export function withWriteTurns(
  reader: Client,
  openWriter: () => Promise<Client>,
  options: WriteWait & { threadLock?: ThreadWriteLock } = {},
): Client {
  const turns = new Turns(options.turnTimeoutMs ?? 60_000, options.threadLock ?? newThreadWriteLock());
  const busyTimeoutMs = options.busyTimeoutMs ?? 10_000;
  let writer: Promise<Client> | undefined;
  /** The writer connection; called only while holding the turn. */
  const currentWriter = (): Promise<Client> => {
    if (!writer) {
      const opening = (writer = openWriter());
      opening.catch(() => writer === opening && (writer = undefined));
    }
    return writer;
  };
  /** Closes the writer after it answered SQLITE_BUSY (see above), before the turn passes on. */
  const discardWriter = async () => {
    const old = writer;
    writer = undefined;
    (await old?.catch(() => undefined))?.close();
  };
  /** Runs `work` on the writer, again after a pause each time another connection holds the lock, until busyTimeoutMs. */
  const untilNotBusy = async <T>(work: (writer: Client) => Promise<T>): Promise<T> => {
    const deadline = Date.now() + busyTimeoutMs;
    // Commits elsewhere take a few ms (a stored download: 2-3): look again soon, then less often.
    for (let pause = 1; ; pause = Math.min(pause * 2, 16)) {
      try {
        return await work(await currentWriter());
      } catch (err) {
        if (!isBusy(err)) throw err;
        await discardWriter();
        if (Date.now() + pause > deadline) throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  };
  const inTurn = async <T>(work: (writer: Client) => Promise<T>): Promise<T> => {
    const release = await turns.take();
    try {
      return await untilNotBusy(work);
    } finally {
      release();
    }
  };
  /** The transaction holds the turn until it ends; a lock error inside it (never expected) retires the writer too. */
  const holdingTurn = (tx: Transaction, release: () => void): Transaction => {
    let busy = false;
    const noteBusy = (err: unknown): never => {
      busy ||= isBusy(err);
      throw err;
    };
    const end = async () => {
      if (busy) await discardWriter();
      release();
    };
    return new Proxy(tx, {
      get(target, prop) {
        // SQLite rolls a transaction back itself on some errors (SQLITE_FULL, SQLITE_IOERR): rolling it back
        // again would throw TRANSACTION_CLOSED over the error that ended it, and the caller would see that instead.
        if (prop === "rollback" && target.closed) return () => end();
        if (prop === "commit" || prop === "rollback") return () => target[prop]().catch(noteBusy).finally(end);
        if (prop === "close") {
          return () => {
            target.close();
            void end();
          };
        }
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const result = value.apply(target, args);
          return result instanceof Promise ? result.catch(noteBusy) : result;
        };
      },
    });
  };
  return new Proxy(reader, {
    get(target, prop) {
      if (prop === "execute") {
        return (stmt: InStatement, args?: unknown) =>
          isRead(stmt)
            ? target.execute(stmt as never, args as never)
            : inTurn((writer) => writer.execute(stmt as never, args as never));
      }
      if (prop === "batch" || prop === "migrate" || prop === "executeMultiple") {
        return (...args: unknown[]) =>
          inTurn((writer) => (writer[prop] as (...a: unknown[]) => Promise<unknown>)(...args));
      }
      if (prop === "transaction") {
        return async (mode?: TransactionMode) => {
          if (mode === "read") return target.transaction(mode);
          const release = await turns.take();
          try {
            return holdingTurn(await untilNotBusy((writer) => writer.transaction(mode)), release);
          } catch (err) {
            release();
            throw err;
          }
        };
      }
      if (prop === "close") {
        return () => {
          void discardWriter();
          target.close();
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
