import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { events, jobs } from "../../db/schema/index.ts";
import { getJob } from "../jobs/queue.ts";
import { silentLogger } from "../../kernel/logger.ts";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { until } from "../../../test/helpers/until.ts";
import { DEFAULT_WORKER_OPTIONS, startWorker } from "../../../collector/worker.ts";
import { recordEvent } from "./record.ts";
import { dispatchEvents } from "../../modules/events/dispatch.ts";
import { PRUNE_BATCH, pruneEvents } from "../../modules/events/retention.ts";
import type { EventConsumer } from "../../modules/events/consumer.ts";

let t: TestContext;
beforeEach(async () => {
  t = await createTestContext();
});
afterEach(() => t.close());

const login = (username: string) => ({ username, ip: "192.0.2.9", reason: "wrong password" });

describe("the outbox", () => {
  it("keeps an event written in a transaction that commits, and none of one that rolls back", async () => {
    const now = new Date();
    await t.db.transaction((tx) => recordEvent(tx, "user.login_failed", login("kept"), now));
    await t.db
      .transaction(async (tx) => {
        await recordEvent(tx, "user.login_failed", login("undone"), now);
        throw new Error("the change fails after its event was written");
      })
      .catch(() => undefined);
    const rows = await t.db.select().from(events);
    expect(rows.map((r) => [r.type, r.payload.username, r.dispatchedAt])).toEqual([
      ["user.login_failed", "kept", null],
    ]);
  });

  it("refuses a payload the catalogue does not describe, so it fails the change instead of going out", async () => {
    const bad = { username: "x", ip: null } as unknown as ReturnType<typeof login>;
    await expect(t.db.transaction((tx) => recordEvent(tx, "user.login_failed", bad, new Date()))).rejects.toThrow(
      /reason/,
    );
    expect(await t.db.select().from(events)).toEqual([]);
  });
});

describe("payloads", () => {
  it("drops a field the catalogue does not name, so nothing uncatalogued rides along", async () => {
    const leaky = { ...login("alice"), password: "typed-by-mistake" } as ReturnType<typeof login>;
    await recordEvent(t.db, "user.login_failed", leaky, new Date());
    const [row] = await t.db.select().from(events);
    expect(row!.payload).toEqual(login("alice"));
  });
});

describe("dispatching", () => {
  const seen: [string, number, string | null][] = [];
  const consumer = (name: string, types: EventConsumer["types"], targets?: string[]): EventConsumer => ({
    name,
    types,
    ...(targets ? { targets: () => async () => targets } : {}),
    async handle(_ctx, event, target) {
      seen.push([name, event.id, target]);
      return { outcome: "done", message: `${name} handled ${event.type}` };
    },
  });

  it("queues one job per consumer that takes the type and per target, once however many dispatchers race", async () => {
    const now = new Date();
    for (let i = 0; i < 30; i++) await recordEvent(t.db, "user.login_failed", login(`u${i}`), now);
    await recordEvent(t.db, "token.revoked", { token_id: 1, token_name: "ci", user_id: 1, username: "admin" }, now);
    const consumers = [consumer("mail", ["user.login_failed"]), consumer("hooks", "all", ["1", "2"])];
    // Four dispatchers at once, each taking a few events a pass, until none is left.
    const race = async () => {
      let n = 0;
      for (let got; (got = await dispatchEvents(t.db, consumers, now, 4)); ) n += got;
      return n;
    };
    const taken = await Promise.all([race(), race(), race(), race()]);
    expect(taken.reduce((a, b) => a + b, 0)).toBe(31);
    const queued = await t.db.select({ params: jobs.params }).from(jobs).where(eq(jobs.type, "event"));
    // 30 login failures: mail + two hook targets each; the revocation: the two hook targets only.
    expect(queued.length).toBe(30 * 3 + 2);
    const keys = queued.map((j) => JSON.stringify(j.params));
    expect(new Set(keys).size).toBe(keys.length);
    expect(await dispatchEvents(t.db, consumers, now)).toBe(0);
  });

  it("keeps an event some consumer took (for redelivery) and drops at once one no consumer took, racing dispatchers included", async () => {
    const now = new Date();
    for (let i = 0; i < 10; i++) await recordEvent(t.db, "user.login_failed", login(`u${i}`), now);
    for (let i = 0; i < 10; i++)
      await recordEvent(t.db, "token.revoked", { token_id: i, token_name: "ci", user_id: 1, username: "admin" }, now);
    // Mail takes login failures only; the hooks consumer takes everything but has no subscription (no target).
    const consumers = [consumer("mail", ["user.login_failed"]), consumer("hooks", "all", [])];
    const race = async () => {
      let n = 0;
      for (let got; (got = await dispatchEvents(t.db, consumers, now, 3)); ) n += got;
      return n;
    };
    expect((await Promise.all([race(), race()])).reduce((a, b) => a + b, 0)).toBe(20);
    const left = await t.db.select({ type: events.type, dispatchedAt: events.dispatchedAt }).from(events);
    expect(left.map((e) => e.type)).toEqual(Array(10).fill("user.login_failed"));
    expect(left.every((e) => e.dispatchedAt !== null)).toBe(true);
    expect((await t.db.select({ id: jobs.id }).from(jobs).where(eq(jobs.type, "event"))).length).toBe(10);
  });

  it("asks consumers for their targets without holding the write lock, so the process's other writes go on meanwhile", async () => {
    const now = new Date();
    await recordEvent(t.db, "user.login_failed", login("a"), now);
    let written: string | undefined;
    const writing: EventConsumer = {
      name: "writing",
      types: "all",
      targets: () => async () => {
        // Another write of this process (a claim, a stored download) while the targets are read.
        const write = t.db
          .insert(events)
          .values({ type: "user.login_failed", payload: login("b"), occurredAt: now })
          .then(() => "written");
        written = await Promise.race([
          write,
          new Promise<string>((r) => setTimeout(() => r("still waiting after 2 s"), 2_000)),
        ]);
        return ["1"];
      },
      handle: async () => ({ outcome: "done", message: "ok" }),
    };
    expect(await dispatchEvents(t.db, [writing], now)).toBe(1);
    expect(written).toBe("written");
    expect(await t.db.select({ params: jobs.params }).from(jobs)).toEqual([
      { params: { event_id: 1, consumer: "writing", target: "1" } },
    ]);
  });

  it("reads a consumer's subscriptions once per pass, not once per event", async () => {
    const now = new Date();
    for (let i = 0; i < 25; i++) await recordEvent(t.db, "user.login_failed", login(`u${i}`), now);
    let passes = 0;
    const asked: number[] = [];
    const counting: EventConsumer = {
      name: "counting",
      types: "all",
      targets: () => {
        passes++;
        return async (event) => (asked.push(event.id), [String(event.id % 2)]);
      },
      handle: async () => ({ outcome: "done", message: "ok" }),
    };
    expect(await dispatchEvents(t.db, [counting], now, 10)).toBe(10);
    expect(await dispatchEvents(t.db, [counting], now, 10)).toBe(10);
    expect(await dispatchEvents(t.db, [counting], now, 10)).toBe(5);
    expect(passes).toBe(3);
    expect(asked).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    const targets = (await t.db.select({ params: jobs.params }).from(jobs)).map(
      (j) => (j.params as { target: string }).target,
    );
    expect(targets).toEqual(Array.from({ length: 25 }, (_, i) => String((i + 1) % 2)));
  });

  it("a collector runs each event job with its consumer, and a retry waits for the time the consumer chose", async () => {
    const clock = manualClock();
    let calls = 0;
    const flaky: EventConsumer = {
      name: "flaky",
      types: ["token.revoked"],
      async handle(ctx) {
        calls++;
        return calls === 1
          ? { outcome: "retry", at: new Date(ctx.clock.now().getTime() + 60_000), message: "receiver down" }
          : { outcome: "done", message: "delivered" };
      },
    };
    await recordEvent(
      t.db,
      "token.revoked",
      { token_id: 1, token_name: "ci", user_id: 1, username: "admin" },
      clock.now(),
    );
    expect(await dispatchEvents(t.db, [flaky], clock.now())).toBe(1);
    const [queued] = await t.db.select().from(jobs).where(eq(jobs.type, "event"));
    // Every claim the worker tries reads the clock: so the test can wait for tries instead of for time.
    let clockReads = 0;
    const countedClock = {
      now: () => {
        clockReads++;
        return clock.now();
      },
    };
    const worker = startWorker(
      { db: t.db, secrets: t.secrets, clock: countedClock, logger: silentLogger, owner: "c1", consumers: [flaky] },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 20 },
    );
    const job = async () => (await getJob(t.db, queued!.id))!;
    try {
      const waiting = await until("the first attempt to fail", job, (j) => j.state === "queued" && j.attempts === 1);
      expect(waiting).toMatchObject({ message: "receiver down", runAfter: new Date(clock.now().getTime() + 60_000) });
      // Ten more polls of the queue (each reads the clock at least once) while the retry is not due: no second call.
      const readsBefore = clockReads;
      await until(
        "ten more polls",
        () => clockReads,
        (reads) => reads >= readsBefore + 10,
        { tries: 1000, everyMs: 5 },
      );
      expect(calls).toBe(1);
      clock.advance(60_000);
      expect(await until("the retry to finish", job, (j) => j.state === "finished")).toMatchObject({
        outcome: "success",
        message: "delivered",
        attempts: 2,
      });
    } finally {
      await worker.stop();
    }
  });
});

describe("retention", () => {
  it("prunes events dispatched and event jobs finished over 30 days ago, and keeps newer ones", async () => {
    const consumer: EventConsumer = {
      name: "keep",
      types: "all",
      handle: async () => ({ outcome: "done", message: "ok" }),
    };
    const old = new Date("2026-01-01T00:00:00Z");
    await recordEvent(t.db, "user.login_failed", login("old"), old);
    await dispatchEvents(t.db, [consumer], old);
    await t.db.update(jobs).set({ state: "finished", outcome: "success", finishedAt: old });
    const recent = new Date(old.getTime() + 20 * 24 * 3_600_000);
    await recordEvent(t.db, "user.login_failed", login("recent"), recent);
    await dispatchEvents(t.db, [consumer], recent);
    expect(await pruneEvents(t.db, new Date(old.getTime() + 31 * 24 * 3_600_000))).toEqual({ events: 1, jobs: 1 });
    expect((await t.db.select().from(events)).map((e) => e.payload.username)).toEqual(["recent"]);
    expect(await t.db.select().from(jobs)).toHaveLength(1);
  });

  it("prunes a backlog longer than one batch (a first prune after a long outage) in batches, to the last row", async () => {
    const old = new Date("2026-01-01T00:00:00Z");
    const n = PRUNE_BATCH * 2 + 7;
    const rows = Array.from({ length: n }, (_, i) => ({
      type: "user.login_failed",
      payload: login(`u${i}`),
      occurredAt: old,
      dispatchedAt: old,
    }));
    for (let i = 0; i < n; i += 500) await t.db.insert(events).values(rows.slice(i, i + 500));
    const jobRows = Array.from({ length: n }, (_, i) => ({
      type: "event",
      trigger: "event",
      priority: 0,
      maxAttempts: 1,
      params: { event_id: i + 1, consumer: "keep", target: null },
      runAfter: old,
      createdAt: old,
      state: "finished",
      outcome: "success",
      finishedAt: old,
    }));
    for (let i = 0; i < n; i += 500)
      await t.db.insert(jobs).values(jobRows.slice(i, i + 500) as (typeof jobs.$inferInsert)[]);
    await recordEvent(t.db, "user.login_failed", login("recent"), new Date(old.getTime() + 20 * 24 * 3_600_000));
    expect(await pruneEvents(t.db, new Date(old.getTime() + 31 * 24 * 3_600_000))).toEqual({ events: n, jobs: n });
    expect((await t.db.select().from(events)).map((e) => e.payload.username)).toEqual(["recent"]);
    expect(await t.db.select().from(jobs)).toHaveLength(0);
  });
});
