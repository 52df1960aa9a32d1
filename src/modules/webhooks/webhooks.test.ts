import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import { createHmac, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import { asc, eq, sql } from "drizzle-orm";
import { events, jobs, webhookDeliveries, webhooks } from "../../db/schema/index.ts";
import { getJob, type Job } from "../../platform/jobs/queue.ts";
import { silentLogger } from "../../kernel/logger.ts";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { DEFAULT_WORKER_OPTIONS, startWorker } from "../../../collector/worker.ts";
import { webhooksConsumer } from "../../../collector/webhook-delivery.ts";
import { dispatchEvents } from "../events/dispatch.ts";
import { DELIVERIES_KEPT, logDelivery } from "./service.ts";
import { until } from "../../../test/helpers/until.ts";

/**
 * Standard Webhooks verification written from the specification, not with the service's signer: the key is the
 * base64 after "whsec_"; the signed content "<webhook-id>.<webhook-timestamp>.<body>"; the header a space-separated
 * list of "v1,<base64 HMAC-SHA256>".
 */
function verifyStandardWebhook(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key)
    .update(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`)
    .digest();
  return String(headers["webhook-signature"] ?? "")
    .split(" ")
    .some((part) => {
      const [version, signature] = part.split(",");
      const given = Buffer.from(signature ?? "", "base64");
      return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

type Received = { path: string; headers: IncomingHttpHeaders; body: string };
type Behaviour = (res: ServerResponse) => void;

/** A receiver on loopback that answers each request with the next behaviour given (the last one repeats). */
async function receiver(behaviours: Behaviour[]) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body });
      (behaviours.length > 1 ? behaviours.shift()! : behaviours[0]!)(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    received,
    url: `http://127.0.0.1:${port}/hook`,
    port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
const status =
  (code: number, headers: Record<string, string> = {}): Behaviour =>
  (res) =>
    res.writeHead(code, headers).end(`answer ${code}`);
const hang: Behaviour = () => {};

let t: TestContext;
let clock: ReturnType<typeof manualClock>;
let admin: string;
let worker: ReturnType<typeof startWorker> | undefined;
const closers: (() => Promise<void>)[] = [];
beforeEach(async () => {
  clock = manualClock();
  t = await createTestContext({ clock });
  admin = await t.token();
});
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  for (const close of closers.splice(0)) await close();
  await t.close();
});

const startCollector = () => {
  worker = startWorker(
    {
      db: t.db,
      secrets: t.secrets,
      clock,
      logger: silentLogger,
      owner: "test-collector",
      consumers: [webhooksConsumer],
    },
    { ...DEFAULT_WORKER_OPTIONS, concurrency: 2, pollIntervalMs: 20, leaseMs: 10 * 60_000 },
  );
};
const subscribe = async (body: Record<string, unknown>) => {
  const res = await t.call("/api/v1/webhooks", { method: "POST", token: admin, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { id: number; secret: string };
};
const addDevice = async (name: string) =>
  (
    await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { device_name: name, device_ip: "192.0.2.30", device_vendor: "Cisco" },
    })
  ).body.data.id as number;
const eventJobs = () => t.db.select().from(jobs).where(eq(jobs.type, "event")).orderBy(asc(jobs.id));
const deliveries = (id: number) =>
  t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, id)).orderBy(asc(webhookDeliveries.id));

const finished = (id: number) =>
  until(
    `job ${id} to finish`,
    () => getJob(t.db, id) as Promise<Job>,
    (j) => j.state === "finished",
  );

describe("webhook subscriptions", () => {
  it("shows the signing secret once, at creation and at rotation, and never stores it in clear", async () => {
    const created = await subscribe({
      url: "https://hooks.example.net/netkeep",
      event_types: ["config.changed", "backup.failed"],
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const shown = await t.call(`/api/v1/webhooks/${created.id}`, { token: admin });
    expect(shown.body.data).toMatchObject({
      url: "https://hooks.example.net/netkeep",
      event_types: ["config.changed", "backup.failed"],
      enabled: true,
    });
    expect(JSON.stringify(shown.body)).not.toContain(created.secret);
    const [row] = await t.db.select().from(webhooks);
    expect(row!.secretEnc).not.toContain(created.secret.slice(6));
    expect(await t.secrets.decrypt(row!.secretEnc)).toBe(created.secret);
    const rotated = await t.call(`/api/v1/webhooks/${created.id}/rotate-secret`, { method: "POST", token: admin });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.secret).not.toBe(created.secret);
    const catalogue = await t.call("/api/v1/webhooks/event-types", { token: admin });
    expect(catalogue.status).toBe(200);
    const changed = catalogue.body.data.find((e: any) => e.type === "config.changed");
    expect(Object.keys(changed.payload_schema.properties)).toEqual([
      "device",
      "command",
      "old_version_id",
      "new_version_id",
      "lines_added",
      "lines_removed",
      "secrets_changed",
      "job_id",
      "changed_by",
    ]);
    expect(catalogue.body.data.map((e: any) => e.type)).toContain("user.login_failed");
    const list = await t.call("/api/v1/webhooks", { token: admin });
    expect(list.body.meta.total).toBe(1);
    expect(JSON.stringify(list.body)).not.toMatch(/whsec_/);
  });

  it("a create retried with its Idempotency-Key answers the same secret, which is not stored in clear for the replay", async () => {
    const headers = { "Idempotency-Key": "6f1c2a0e-webhook-create" };
    const first = await t.call("/api/v1/webhooks", {
      method: "POST",
      token: admin,
      body: { url: "https://hooks.example.net/a" },
      headers,
    });
    const again = await t.call("/api/v1/webhooks", {
      method: "POST",
      token: admin,
      body: { url: "https://hooks.example.net/a" },
      headers,
    });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.data.secret).toBe(first.body.data.secret);
    const stored = await t.db.all<{ body: string }>(sql`select body from idempotency_keys`);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.body).not.toContain(first.body.data.secret.slice(6));
  });

  it("is for roles that see every device: a scoped user gets 403", async () => {
    await t.role({ name: "branch", tags: ["branch"] });
    const scoped = await t.token(undefined, { role: "branch" });
    expect((await t.call("/api/v1/webhooks", { token: scoped })).status).toBe(403);
    const refused = await t.call("/api/v1/webhooks", {
      method: "POST",
      token: scoped,
      body: { url: "https://hooks.example.net/b" },
    });
    expect(refused).toMatchObject({
      status: 403,
      body: { message: expect.stringMatching(/needs a role that sees all devices/) },
    });
    expect(await t.db.select().from(webhooks)).toEqual([]);
  });

  it("is not shown to a scoped reader through the activity log either: its URL (often a credential itself) and filters stay hidden", async () => {
    const sub = await subscribe({
      url: "https://hooks.example.net/services/T0/B0/Receiver-Key-4471",
      description: "NOC chat",
    });
    expect((await t.call(`/api/v1/webhooks/${sub.id}/rotate-secret`, { method: "POST", token: admin })).status).toBe(
      200,
    );
    await t.role({ name: "branch-auditors", tags: ["branch"] });
    const auditor = await t.token(["users.read"], { role: "branch-auditors" });
    const entries = (await t.call("/api/v1/activity-logs?filter[subject_type]=webhook&per_page=100", { token: admin }))
      .body.data as { id: number }[];
    expect(entries.length).toBe(2);
    const seen = await t.call("/api/v1/activity-logs?per_page=100", { token: auditor });
    expect(seen.status).toBe(200);
    expect(JSON.stringify(seen.body)).not.toContain("Receiver-Key-4471");
    expect(seen.body.data.filter((e: { subject_type: string }) => e.subject_type === "webhook")).toEqual([]);
    for (const entry of entries)
      expect((await t.call(`/api/v1/activity-logs/${entry.id}`, { token: auditor })).status).toBe(404);
  });

  it("refuses targets that are not http(s), link-local or cloud metadata, and private ones when the settings forbid them", async () => {
    const refused = async (url: string) =>
      await t.call("/api/v1/webhooks", { method: "POST", token: admin, body: { url } });
    expect((await refused("http://169.254.169.254/latest/meta-data/")).body.errors.url[0]).toMatch(
      /169\.254\.169\.254 is a link-local address/,
    );
    expect((await refused("http://[fd00:ec2::254]/")).body.errors.url[0]).toMatch(/AWS metadata/);
    expect((await refused("http://[::ffff:169.254.169.254]/")).status).toBe(422);
    // IPv4 carried in IPv6 by translation (NAT64's well-known prefix) and by 6to4 reaches the IPv4 address too.
    expect((await refused("http://[64:ff9b::169.254.169.254]/")).body.errors?.url[0]).toMatch(
      /\(IPv4 169\.254\.169\.254\) is a link-local address/,
    );
    expect((await refused("http://[2002:a9fe:a9fe::1]/")).body.errors?.url[0]).toMatch(
      /\(IPv4 169\.254\.169\.254\) is a link-local address/,
    );
    expect((await refused("http://[::ffff:0:a9fe:a9fe]/")).body.errors?.url[0]).toMatch(
      /\(IPv4 169\.254\.169\.254\) is a link-local address/,
    );
    expect((await refused("ftp://hooks.example.net/")).body.errors.url[0]).toMatch(/must use http or https/);
    expect((await refused("https://user:pw@hooks.example.net/")).status).toBe(422);
    expect(
      (
        await t.call("/api/v1/webhooks", {
          method: "POST",
          token: admin,
          body: { url: "http://hooks.example.net/", tag_ids: [999] },
        })
      ).body.errors.tag_ids,
    ).toEqual(["tag_ids 999 is not an existing tag"]);
    expect((await refused("http://10.1.2.3/hook")).status).toBe(201);
    expect(
      (
        await t.call("/api/v1/settings", {
          method: "PATCH",
          token: admin,
          body: { webhooks: { allow_private_ranges: false } },
        })
      ).status,
    ).toBe(200);
    expect((await refused("http://10.1.2.3/hook")).body.errors.url[0]).toMatch(/10\.1\.2\.3 is a private address/);
    expect((await refused("http://[64:ff9b::127.0.0.1]/hook")).body.errors?.url[0]).toMatch(
      /\(IPv4 127\.0\.0\.1\) is a loopback address/,
    );
  });
});

describe("which events a subscription gets", () => {
  it("its event types, and with a device filter only events about devices with one of its tags or categories (as they were)", async () => {
    const core = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "core" } })).body.data.id;
    const all = await subscribe({ url: "https://hooks.example.net/all" });
    const coreOnly = await subscribe({ url: "https://hooks.example.net/core", tag_ids: [core] });
    const deletes = await subscribe({ url: "https://hooks.example.net/deletes", event_types: ["device.deleted"] });
    const inCore = (
      await t.call("/api/v1/devices", {
        method: "POST",
        token: admin,
        body: { device_name: "core-1", device_ip: "192.0.2.50", device_vendor: "Cisco", device_tags: ["core"] },
      })
    ).body.data.id;
    await addDevice("edge-1");
    // Deleted, the device is gone, but its event still says it carried the tag.
    expect((await t.call(`/api/v1/devices/${inCore}`, { method: "DELETE", token: admin })).status).toBe(200);
    await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "unrelated" } });
    await dispatchEvents(t.db, [webhooksConsumer], clock.now());
    const targets = new Map<number, string[]>();
    for (const j of await eventJobs()) {
      const { event_id, target } = j.params as { event_id: number; target: string };
      const [event] = await t.db.select().from(events).where(eq(events.id, event_id));
      const name = `${event!.type} ${(event!.payload.device as { name: string }).name}`;
      targets.set(Number(target), [...(targets.get(Number(target)) ?? []), name]);
    }
    expect(targets.get(all.id)).toEqual(["device.created core-1", "device.created edge-1", "device.deleted core-1"]);
    expect(targets.get(coreOnly.id)).toEqual(["device.created core-1", "device.deleted core-1"]);
    expect(targets.get(deletes.id)).toEqual(["device.deleted core-1"]);
  });
});

describe("webhook delivery", () => {
  it("signs each delivery the Standard Webhooks way, retries after 500s and a timeout with growing pauses, then delivers", async () => {
    expect(
      (await t.call("/api/v1/settings", { method: "PATCH", token: admin, body: { webhooks: { timeout_seconds: 1 } } }))
        .status,
    ).toBe(200);
    const hook = await receiver([status(500), status(503), hang, status(204)]);
    closers.push(hook.close);
    const sub = await subscribe({ url: hook.url, event_types: ["device.created"] });
    const deviceId = await addDevice("hooked-01");
    expect(await dispatchEvents(t.db, [webhooksConsumer], clock.now())).toBe(1);
    const [job] = await eventJobs();
    startCollector();

    // Attempts 1-3 fail (500, 503, no answer within 1 s); each waits its pause on the injected clock.
    for (const [attempt, pause] of [
      [1, 5_000],
      [2, 5 * 60_000],
      [3, 30 * 60_000],
    ] as const) {
      const waiting = await until(
        `attempt ${attempt} to be waiting`,
        () => getJob(t.db, job!.id) as Promise<Job>,
        (j) => j.state === "queued" && j.attempts === attempt,
      );
      expect(waiting.runAfter.getTime() - clock.now().getTime()).toBe(pause);
      clock.advance(pause);
    }
    const done = await until(
      "the delivery job to finish",
      () => getJob(t.db, job!.id) as Promise<Job>,
      (j) => j.state === "finished",
    );
    expect(done).toMatchObject({ outcome: "success", attempts: 4 });

    expect(hook.received).toHaveLength(4);
    for (const r of hook.received) {
      expect(verifyStandardWebhook(sub.secret, r.headers, r.body)).toBe(true);
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.headers["webhook-id"]).toBe(hook.received[0]!.headers["webhook-id"]);
    }
    expect(verifyStandardWebhook(sub.secret, hook.received[0]!.headers, hook.received[0]!.body + " ")).toBe(false);
    const body = JSON.parse(hook.received[3]!.body);
    expect(body).toMatchObject({
      id: hook.received[0]!.headers["webhook-id"],
      type: "device.created",
      data: { device: { id: deviceId, name: "hooked-01" } },
    });
    expect(Number(hook.received[3]!.headers["webhook-timestamp"])).toBe(Math.floor(clock.now().getTime() / 1000));

    const log = await t.call(`/api/v1/webhooks/${sub.id}/deliveries?sort=id`, { token: admin });
    expect(log.body.data.map((d: any) => [d.attempt, d.outcome, d.status_code])).toEqual([
      [1, "retrying", 500],
      [2, "retrying", 503],
      [3, "retrying", null],
      [4, "delivered", 204],
    ]);
    // The receiver is on loopback: its answers are not kept in the log, unless the settings say so.
    expect(log.body.data.map((d: any) => d.response_excerpt)).toEqual([null, null, null, null]);
    expect(log.body.data[2].message).toMatch(/no answer within 1 s/);
  });

  it("keeps a private receiver's answer excerpt in the log only when the settings allow it", async () => {
    expect(
      (
        await t.call("/api/v1/settings", {
          method: "PATCH",
          token: admin,
          body: { webhooks: { private_response_excerpts: true } },
        })
      ).status,
    ).toBe(200);
    const hook = await receiver([status(500), status(200)]);
    closers.push(hook.close);
    const sub = await subscribe({ url: hook.url, event_types: ["device.created"] });
    await addDevice("hooked-excerpt");
    expect(await dispatchEvents(t.db, [webhooksConsumer], clock.now())).toBe(1);
    const [job] = await eventJobs();
    startCollector();
    await until(
      "the first attempt to fail",
      () => getJob(t.db, job!.id) as Promise<Job>,
      (j) => j.state === "queued" && j.attempts === 1,
    );
    const log = await t.call(`/api/v1/webhooks/${sub.id}/deliveries?sort=id`, { token: admin });
    expect(log.body.data[0]).toMatchObject({ status_code: 500, response_excerpt: "answer 500" });
  });

  it("sends an event again, with the same webhook-id and body, when the collector delivering it died before recording the answer", async () => {
    expect(
      (
        await t.call("/api/v1/settings", {
          method: "PATCH",
          token: admin,
          body: { webhooks: { timeout_seconds: 120 } },
        })
      ).status,
    ).toBe(200);
    // The first request gets no answer: its collector is gone before one comes.
    const hook = await receiver([hang, status(200)]);
    closers.push(hook.close);
    const sub = await subscribe({ url: hook.url, event_types: ["device.created"] });
    await addDevice("hooked-twice");
    expect(await dispatchEvents(t.db, [webhooksConsumer], clock.now())).toBe(1);
    const [job] = await eventJobs();
    startCollector();
    await until(
      "the first delivery to arrive",
      async () => hook.received.length,
      (n) => n === 1,
    );
    // Its lease (10 min here) runs out; another collector puts the job back and delivers it.
    clock.advance(10 * 60_000 + 1_000);
    const other = startWorker(
      {
        db: t.db,
        secrets: t.secrets,
        clock,
        logger: silentLogger,
        owner: "other-collector",
        consumers: [webhooksConsumer],
      },
      { ...DEFAULT_WORKER_OPTIONS, concurrency: 1, pollIntervalMs: 20, leaseMs: 10 * 60_000 },
    );
    closers.push(() => other.stop(Date.now()).then(() => undefined));
    expect(await finished(job!.id)).toMatchObject({ outcome: "success" });
    expect(hook.received).toHaveLength(2);
    expect(hook.received[1]!.headers["webhook-id"]).toBe(hook.received[0]!.headers["webhook-id"]);
    expect(hook.received[1]!.body).toBe(hook.received[0]!.body);
    expect(verifyStandardWebhook(sub.secret, hook.received[1]!.headers, hook.received[1]!.body)).toBe(true);
    // The first collector, still waiting on its receiver, is stopped without waiting for it.
    await worker!.stop(Date.now());
    worker = undefined;
  });

  it("a 410 disables the subscription, and health warns about it until it is enabled again", async () => {
    const hook = await receiver([status(410)]);
    closers.push(hook.close);
    const sub = await subscribe({ url: hook.url });
    await addDevice("gone-01");
    await dispatchEvents(t.db, [webhooksConsumer], clock.now());
    startCollector();
    const [job] = await eventJobs();
    expect(await finished(job!.id)).toMatchObject({ state: "finished", outcome: "error", attempts: 1 });
    const shown = (await t.call(`/api/v1/webhooks/${sub.id}`, { token: admin })).body.data;
    expect(shown).toMatchObject({ enabled: false, disabled_reason: expect.stringMatching(/410 Gone/) });
    const health = await t.call("/api/v1/system/health", { token: admin });
    const warning = health.body.data.checks.find((c: any) => c.name === "webhooks");
    expect(warning).toMatchObject({ status: "warning", message: expect.stringMatching(/410 Gone/) });
    // Health is read by every role with system.read, scoped ones too: the subscription is named by id, never by its
    // URL (often a credential of the receiver, and webhooks are for roles that see every device).
    expect(warning.message).toContain(`webhook ${sub.id}`);
    expect(warning.message).not.toContain(hook.url);
    // Another event no longer goes to it.
    await addDevice("gone-02");
    await dispatchEvents(t.db, [webhooksConsumer], clock.now());
    expect(await eventJobs()).toHaveLength(1);
    expect(
      (await t.call(`/api/v1/webhooks/${sub.id}`, { method: "PATCH", token: admin, body: { enabled: true } })).body
        .data,
    ).toMatchObject({ enabled: true, disabled_reason: null, consecutive_failures: 0 });
  });

  it("disables a subscription whose events keep failing, with a warning in health; a success before that starts the count over", async () => {
    const hook = await receiver([status(400), status(400), status(200), status(400)]);
    closers.push(hook.close);
    const sub = await subscribe({ url: hook.url, event_types: ["device.created"] });
    startCollector();
    const deliverOne = async (name: string) => {
      await addDevice(name);
      await dispatchEvents(t.db, [webhooksConsumer], clock.now());
      for (const j of await eventJobs()) await finished(j.id);
    };
    for (let i = 0; i < 3; i++) await deliverOne(`failing-${i}`);
    expect((await t.call(`/api/v1/webhooks/${sub.id}`, { token: admin })).body.data).toMatchObject({
      enabled: true,
      consecutive_failures: 0,
    });
    for (let i = 3; i < 7; i++) await deliverOne(`failing-${i}`);
    expect((await t.call(`/api/v1/webhooks/${sub.id}`, { token: admin })).body.data).toMatchObject({
      enabled: true,
      consecutive_failures: 4,
    });
    await deliverOne("failing-7");
    const shown = (await t.call(`/api/v1/webhooks/${sub.id}`, { token: admin })).body.data;
    expect(shown).toMatchObject({
      enabled: false,
      consecutive_failures: 5,
      disabled_reason: "the last 5 events failed to be delivered after every retry",
    });
    const health = await t.call("/api/v1/system/health", { token: admin });
    expect(health.body.data.checks.find((c: any) => c.name === "webhooks")).toMatchObject({
      status: "warning",
      value: 1,
    });
  });

  it("does not follow a redirect", async () => {
    const elsewhere = await receiver([status(200)]);
    closers.push(elsewhere.close);
    const hook = await receiver([status(302, { location: elsewhere.url })]);
    closers.push(hook.close);
    const sub = await subscribe({ url: hook.url });
    await addDevice("redirected-01");
    await dispatchEvents(t.db, [webhooksConsumer], clock.now());
    startCollector();
    const [job] = await eventJobs();
    expect(await finished(job!.id)).toMatchObject({ state: "finished", outcome: "error", attempts: 1 });
    expect(hook.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
    const [logged] = await deliveries(sub.id);
    expect(logged).toMatchObject({
      outcome: "failed",
      statusCode: 302,
      message: expect.stringMatching(/redirect, not followed/),
    });
  });

  it("refuses 169.254.169.254 at delivery too, and a name that resolves to a forbidden address, sending nothing", async () => {
    const sub = await subscribe({ url: "http://localhost:9/hook" });
    // A row that bypassed the API's check (written before the check existed, or by hand) is refused all the same.
    await t.db.update(webhooks).set({ url: "http://169.254.169.254/latest/meta-data/" }).where(eq(webhooks.id, sub.id));
    expect(
      (
        await t.call("/api/v1/settings", {
          method: "PATCH",
          token: admin,
          body: { webhooks: { allow_private_ranges: false } },
        })
      ).status,
    ).toBe(200);
    // A name passes the API's check (it is judged as it resolves, when delivering): localhost is loopback, forbidden now.
    const named = await subscribe({ url: "http://localhost:9/hook" });
    await addDevice("metadata-01");
    await dispatchEvents(t.db, [webhooksConsumer], clock.now());
    startCollector();
    for (const j of await eventJobs()) await finished(j.id);
    const [metadata] = await deliveries(sub.id);
    expect(metadata).toMatchObject({
      outcome: "refused",
      statusCode: null,
      attempt: 1,
      message: expect.stringMatching(/169\.254\.169\.254 is a link-local address/),
    });
    const [resolved] = await deliveries(named.id);
    expect(resolved).toMatchObject({
      outcome: "refused",
      statusCode: null,
      message: expect.stringMatching(/localhost resolves to .*loopback address/),
    });
  });

  it("a test ping and a redelivery go to the one subscription, through a collector", async () => {
    const hook = await receiver([status(200)]);
    closers.push(hook.close);
    const sub = await subscribe({ url: hook.url, event_types: ["device.deleted"] });
    startCollector();
    const ping = await t.call(`/api/v1/webhooks/${sub.id}/ping?wait=10`, { method: "POST", token: admin });
    expect(ping.status).toBe(200);
    expect(ping.body.data).toMatchObject({ type: "event", state: "finished", outcome: "success" });
    expect(JSON.parse(hook.received[0]!.body)).toMatchObject({ type: "webhook.ping", data: { webhook_id: sub.id } });
    const [first] = await deliveries(sub.id);
    const again = await t.call(`/api/v1/webhooks/${sub.id}/deliveries/${first!.id}/redeliver?wait=10`, {
      method: "POST",
      token: admin,
    });
    expect(again.status).toBe(200);
    expect(hook.received).toHaveLength(2);
    expect(hook.received[1]!.headers["webhook-id"]).toBe(hook.received[0]!.headers["webhook-id"]);
    expect(verifyStandardWebhook(sub.secret, hook.received[1]!.headers, hook.received[1]!.body)).toBe(true);
    expect(
      (await t.call(`/api/v1/webhooks/${sub.id}/deliveries/99999/redeliver`, { method: "POST", token: admin })).status,
    ).toBe(404);
  });

  it("keeps each subscription's log near its bound however deliveries to several subscriptions interleave", async () => {
    // Two subscriptions whose attempts alternate, as when both take every event: one of them only ever gets odd
    // row ids. Logged through logDelivery, as the collector's webhooks consumer logs each attempt.
    const a = await subscribe({ url: "http://192.0.2.10/a" });
    const b = await subscribe({ url: "http://192.0.2.10/b" });
    const perSubscription = DELIVERIES_KEPT + 200;
    for (let i = 0; i < perSubscription; i++) {
      for (const id of [a.id, b.id]) {
        await logDelivery(t.db, {
          webhookId: id,
          eventId: i + 1,
          eventType: "device.created",
          attempt: 1,
          outcome: "delivered",
          statusCode: 200,
          latencyMs: 1,
          responseExcerpt: "",
          message: "ok",
          createdAt: clock.now(),
        });
      }
    }
    for (const id of [a.id, b.id]) {
      const log = await t.call(`/api/v1/webhooks/${id}/deliveries?per_page=1`, { token: admin });
      expect(log.status).toBe(200);
      // The bound, give or take the rows logged between two prunes; never the whole history.
      expect(log.body.meta.total, `webhook ${id}`).toBeGreaterThanOrEqual(DELIVERIES_KEPT);
      expect(log.body.meta.total, `webhook ${id}`).toBeLessThan(perSubscription);
      // The newest are the ones kept.
      expect((await deliveries(id)).at(-1)!.eventId).toBe(perSubscription);
    }
  }, 60_000);
});
