import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@libsql/client";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "./client.ts";
import { eventLoopTurns, until } from "../../test/helpers/until.ts";
import { newThreadWriteLock, releaseIfHeldBy, WAIT_UNTIL_WRITTEN, withWriteTurns } from "./write-turns.ts";

const dir = mkdtempSync(join(tmpdir(), "netkeep-turns-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A write issued while another transaction of the same client is open; the transaction goes on once it is issued. */
async function overlap(client: Client) {
  await client.execute("PRAGMA journal_mode=WAL");
  await client.execute("create table if not exists t(x)");
  const started = Date.now();
  let opened!: () => void;
  const open = new Promise<void>((r) => (opened = r));
  let issued!: () => void;
  const otherIssued = new Promise<void>((r) => (issued = r));
  const holder = (async () => {
    const tx = await client.transaction("write");
    await tx.execute("insert into t values (1)");
    opened();
    await otherIssued;
    await tx.execute("insert into t values (2)");
    await tx.commit();
  })();
  const other = (async () => {
    await open;
    const write = client.execute("insert into t values (3)");
    issued();
    await write;
  })();
  const results = await Promise.allSettled([holder, other]);
  return {
    ms: Date.now() - started,
    results: results.map((r) => r.status),
    rows: (await client.execute("select count(*) as n from t")).rows[0]!.n,
  };
}

describe("writes take turns within a process", () => {
  it("a write issued while another transaction is open waits its turn instead of freezing the event loop", async () => {
    const raw = createClient({ url: `file:${dir}/raw.db`, timeout: 1000 });
    const frozen = await overlap(raw);
    // Without turns: the busy handler blocks the event loop, the holder cannot commit, the writer gives up.
    expect(frozen.ms).toBeGreaterThanOrEqual(900);
    expect(frozen.results).toContain("rejected");
    raw.close();

    const url = `file:${dir}/turns.db`;
    const turned = withWriteTurns(createClient({ url, timeout: 1000 }), async () =>
      createClient({ url, timeout: 1000, concurrency: 1 }),
    );
    const fine = await overlap(turned);
    expect(fine.results).toEqual(["fulfilled", "fulfilled"]);
    // Frozen, the holder could not commit and one write would fail: both fulfilled is the loop kept turning.
    expect(fine.rows).toBe(3);
    turned.close();
  });

  it("releases the turn on rollback and on a failed statement", async () => {
    const url = `file:${dir}/release.db`;
    const client = withWriteTurns(createClient({ url, timeout: 1000 }), async () =>
      createClient({ url, timeout: 1000, concurrency: 1 }),
    );
    await client.execute("create table t(x unique)");
    const tx = await client.transaction("write");
    await tx.execute("insert into t values (1)");
    await tx.rollback();
    await expect(client.execute("insert into t values (1)")).resolves.toBeDefined();
    await expect(client.execute("insert into t values (1)")).rejects.toThrow(/UNIQUE/);
    await expect(client.execute("insert into t values (2)")).resolves.toBeDefined();
    client.close();
  });

  it("writes go over their own connection, which commits without an fsync each time; reads go over the pool", async () => {
    const { client } = await openDatabase(`file:${dir}/split.db`);
    // A PRAGMA is not a read, so it runs on the writing connection; a select runs on a pooled one.
    expect((await client.execute("PRAGMA synchronous")).rows[0]!.synchronous).toBe(1);
    expect((await client.execute("select * from pragma_synchronous")).rows[0]!.synchronous).toBe(2);
    await client.execute("create table t(x)");
    const tx = await client.transaction("write");
    await tx.execute("insert into t values (1)");
    expect((await tx.execute("PRAGMA synchronous")).rows[0]!.synchronous).toBe(1);
    // A read while the write is open goes over the pool and sees the last commit, not the open write.
    expect((await client.execute("select count(*) as n from t")).rows[0]!.n).toBe(0);
    await tx.commit();
    expect((await client.execute("select count(*) as n from t")).rows[0]!.n).toBe(1);
    client.close();
    expect(client.closed).toBe(true);
  });

  it("a write that meets another connection's lock waits for it without stopping the event loop", async () => {
    const url = `file:${dir}/elsewhere.db`;
    const { client } = await openDatabase(url);
    await client.execute("create table t(x)");
    // Another process (the collector, or its store thread) holding the write lock until this process's write has waited a while.
    const other = createClient({ url, timeout: 1000, concurrency: 1 });
    const held = await other.transaction("write");
    await held.execute("insert into t values (1)");
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 5);
    try {
      let written = false;
      const write = client.execute("insert into t values (2)").finally(() => (written = true));
      // SQLite's busy handler would sleep on this thread: no ticks until the write had failed.
      await until("the event loop to turn while the write waits", () => ticks >= 5);
      expect(written, "written while the other connection held the lock").toBe(false);
      await held.commit();
      await write;

      const again = await other.transaction("write");
      ticks = 0;
      let began = false;
      const tx = client.transaction("write").finally(() => (began = true));
      await until("the event loop to turn while the transaction waits", () => ticks >= 3);
      expect(began, "began while the other connection held the lock").toBe(false);
      await again.commit();
      const turn = await tx;
      await turn.execute("insert into t values (3)");
      await turn.commit();
      expect((await client.execute("select count(*) as n from t")).rows[0]!.n).toBe(3);
    } finally {
      clearInterval(ticking);
      other.close();
      client.close();
    }
  });

  it("gives up with SQLITE_BUSY once the busy timeout has passed, and leaves nothing half-written", async () => {
    const url = `file:${dir}/stuck.db`;
    const client = withWriteTurns(
      createClient({ url, timeout: 1000 }),
      async () => createClient({ url, timeout: 0, concurrency: 1 }),
      { busyTimeoutMs: 200 },
    );
    await client.execute("PRAGMA journal_mode=WAL");
    await client.execute("create table t(x)");
    const other = createClient({ url, timeout: 1000, concurrency: 1 });
    const held = await other.transaction("write");
    try {
      const started = Date.now();
      await expect(client.execute("insert into t values (1)")).rejects.toMatchObject({
        code: expect.stringMatching(/^SQLITE_BUSY/),
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(180);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await held.rollback();
    }
    // libSQL leaves the failed statement holding the lock on its connection: that connection is gone, so others write.
    await other.execute("insert into t values (1)");
    // The turn was released, and the writer's next write is committed where others see it.
    await client.execute("insert into t values (2)");
    expect((await other.execute("select x from t order by x")).rows.map((r) => r.x)).toEqual([1, 2]);
    other.close();
    client.close();
  });

  it("with WAIT_UNTIL_WRITTEN (the collector's), writes queued behind one that waits out another connection's lock all land", async () => {
    const url = `file:${dir}/patient.db`;
    const client = withWriteTurns(
      createClient({ url, timeout: 1000 }),
      async () => createClient({ url, timeout: 0, concurrency: 1 }),
      WAIT_UNTIL_WRITTEN,
    );
    await client.execute("PRAGMA journal_mode=WAL");
    await client.execute("create table t(x)");
    const other = createClient({ url, timeout: 1000, concurrency: 1 });
    const held = await other.transaction("write");
    await held.execute("insert into t values (0)");
    // The first waits for the lock holding this process's turn; the others wait for the turn, with no time limit either.
    let landed = 0;
    const writes = Promise.all(
      [1, 2, 3].map((x) => client.execute({ sql: "insert into t values (?)", args: [x] }).then(() => landed++)),
    );
    await eventLoopTurns(50);
    expect(landed, "written while the other connection held the lock").toBe(0);
    await held.commit();
    await writes;
    expect((await client.execute("select x from t order by x")).rows.map((r) => r.x)).toEqual([0, 1, 2, 3]);
    other.close();
    client.close();
  });

  it("connections sharing a thread lock take turns on it, not on SQLite's lock, even with no busy timeout", async () => {
    const url = `file:${dir}/shared.db`;
    const threadLock = newThreadWriteLock();
    // As the collector's two threads open the database: one lock, a connection each.
    const open = () =>
      withWriteTurns(
        createClient({ url, timeout: 1000 }),
        async () => createClient({ url, timeout: 0, concurrency: 1 }),
        { busyTimeoutMs: 0, threadLock },
      );
    const [a, b] = [open(), open()];
    await a.execute("PRAGMA journal_mode=WAL");
    await a.execute("create table t(x)");
    const tx = await a.transaction("write");
    await tx.execute("insert into t values (1)");
    let written = false;
    const waiting = b.execute("insert into t values (2)").then(() => (written = true));
    await eventLoopTurns();
    expect(written).toBe(false);
    await tx.commit();
    await waiting;
    expect((await b.execute("select count(*) as n from t")).rows[0]!.n).toBe(2);

    // A thread that died holding the lock (its connection, and so its transaction, died with it) frees it.
    Atomics.store(threadLock, 0, 42 + 1);
    let freed = false;
    const next = a.execute("insert into t values (3)").then(() => (freed = true));
    releaseIfHeldBy(threadLock, 41);
    await eventLoopTurns();
    expect(freed, "another thread's id does not free it").toBe(false);
    releaseIfHeldBy(threadLock, 42);
    await next;
    expect((await a.execute("select count(*) as n from t")).rows[0]!.n).toBe(3);
    a.close();
    b.close();
  });
});
