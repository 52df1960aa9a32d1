import { ne } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobs } from "../../db/schema/index.ts";
import { startWorker } from "../../../collector/worker.ts";
import { startEventDispatcher } from "../../../collector/event-dispatcher.ts";
import { silentLogger } from "../../kernel/logger.ts";
import { DEFAULT_LIMITS } from "../../../collector/session.ts";
import { mailConsumer } from "./consumer.ts";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import {
  addLoopbackDevice,
  builtinTemplateId,
  IOS_CONFIG_COMMAND,
  iosScript,
} from "../../../test/helpers/collector.ts";
import { startFakeDevice, type FakeDevice } from "../../../test/helpers/fake-device.ts";
import { freePort } from "../../../test/helpers/process.ts";
import { smtpSinkAvailable, startSmtpSink, type ReceivedMail } from "../../../test/helpers/smtp.ts";
import { until } from "../../../test/helpers/until.ts";

/**
 * Mail through a real SMTP server on loopback (aiosmtpd, test/helpers/smtp-sink.py): the messages are read
 * back as that server received them and as Python's e-mail parser decodes them.
 */
const available = smtpSinkAvailable();
const why = "python3 with aiosmtpd is not installed (apt-get install python3-aiosmtpd)";
if (!available) {
  if (process.env.CI) it("has an SMTP server to test against (required in CI)", () => expect.fail(why));
  else console.warn(`\n[mail.test.ts] SKIPPED: ${why}\n`);
}

const USERNAME = "netops";
const PASSWORD = "Mail-Test-Pass-5120";
const FROM = "netkeep@noc.example.net";

let t: TestContext;
let admin: string;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;

/**
 * The collector's own loops until `done` holds and nothing is left to run: the worker runs downloads, compliance
 * checks and mail jobs; the dispatcher turns new events into mail jobs. Returns what the sink received meanwhile.
 */
/** Mail goes through the worker, the dispatcher and an SMTP session: 400 tries 50 ms apart, 20 s or more. */
const patiently = { tries: 400, everyMs: 50 };

async function collect(what: string, done: (mails: ReceivedMail[]) => boolean): Promise<ReceivedMail[]> {
  const already = sink.received().length;
  const clock = { now: () => new Date() };
  const worker = startWorker(
    {
      db: t.db,
      secrets: t.secrets,
      clock,
      logger: silentLogger,
      owner: "mail-test",
      limits: DEFAULT_LIMITS,
      connectTimeoutMs: 2000,
      consumers: [mailConsumer],
    },
    { concurrency: 4, pollIntervalMs: 20, leaseMs: 60_000, jobTimeLimitMs: 20_000 },
  );
  const dispatcher = startEventDispatcher(
    { db: t.db, clock, logger: silentLogger, consumers: [mailConsumer], dispatched: () => worker.wake() },
    { pollIntervalMs: 20, pruneIntervalMs: 3_600_000 },
  );
  try {
    await until(what, () => sink.received().slice(already), done, patiently);
    // Whatever else is on its way arrives before the queue is empty.
    await until(
      "the queue to empty",
      async () => (await t.db.select({ id: jobs.id }).from(jobs).where(ne(jobs.state, "finished"))).length,
      (n) => n === 0,
      patiently,
    );
    return sink.received().slice(already);
  } finally {
    await dispatcher.stop();
    await worker.stop();
  }
}

describe.skipIf(!available)("mail", () => {
  let coreDevice: number;
  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await createTestContext();
    admin = await t.token();
  });
  afterAll(async () => {
    await sink?.close();
    await t?.close();
  });

  const configureSmtp = (port: number) =>
    t.call("/api/v1/settings", {
      method: "PATCH",
      token: admin,
      body: { smtp: { host: "127.0.0.1", port, encryption: "none", from_address: FROM } },
    });

  it("test-send: 422 until SMTP is set up, 502 with the reason when the server is not there, 200 when it took the message", async () => {
    const unset = await t.call("/api/v1/settings/smtp/test", {
      method: "POST",
      token: admin,
      body: { to: "noc@example.net" },
    });
    expect(unset.status).toBe(422);
    expect(unset.body.message).toMatch(/smtp\.host/);

    expect((await configureSmtp(await freePort())).status).toBe(200);
    const down = await t.call("/api/v1/settings/smtp/test", {
      method: "POST",
      token: admin,
      body: { to: "noc@example.net" },
    });
    expect(down.status).toBe(502);
    expect(down.body.message).toMatch(/^The SMTP server 127\.0\.0\.1:\d+ did not take the message: .*ECONNREFUSED/);

    expect((await configureSmtp(sink.port)).status).toBe(200);
    const bad = await t.call("/api/v1/settings/smtp/test", {
      method: "POST",
      token: admin,
      body: { to: "not an address" },
    });
    expect(bad.status).toBe(422);
    const sent = await t.call("/api/v1/settings/smtp/test", {
      method: "POST",
      token: admin,
      body: { to: "noc@example.net" },
    });
    expect(sent.status).toBe(200);
    const [mail] = sink.received();
    expect(mail).toMatchObject({
      mail_from: FROM,
      rcpt_tos: ["noc@example.net"],
      subject: "[netkeep] Test message",
      content_type: "multipart/alternative",
    });
    expect(mail!.text).toContain("If you read this, mail works.");
    expect(mail!.html).toContain("If you read this, mail works.");
  });

  it("test-send logs in with the stored (encrypted) SMTP password, and a wrong one is refused with the server's reason", async () => {
    const guarded = await startSmtpSink({ username: "relay-user", password: "Relay-Secret-8812" });
    try {
      const set = (password: string) =>
        t.call("/api/v1/settings", {
          method: "PATCH",
          token: admin,
          body: {
            smtp: {
              host: "127.0.0.1",
              port: guarded.port,
              encryption: "none",
              from_address: FROM,
              username: "relay-user",
              password,
            },
          },
        });
      expect((await set("Wrong-Secret-0000")).body.data.smtp).toMatchObject({ has_password: true });
      const refused = await t.call("/api/v1/settings/smtp/test", {
        method: "POST",
        token: admin,
        body: { to: "noc@example.net" },
      });
      expect(refused.status).toBe(502);
      expect(refused.body.message).toMatch(/Invalid login|535/);
      expect(JSON.stringify(refused.body)).not.toContain("Wrong-Secret-0000");

      expect((await set("Relay-Secret-8812")).status).toBe(200);
      expect(
        (await t.call("/api/v1/settings/smtp/test", { method: "POST", token: admin, body: { to: "noc@example.net" } }))
          .status,
      ).toBe(200);
      expect(guarded.received().map((m) => m.rcpt_tos)).toEqual([["noc@example.net"]]);
    } finally {
      await guarded.close();
      await t.call("/api/v1/settings", {
        method: "PATCH",
        token: admin,
        body: { smtp: { username: null, password: null } },
      });
    }
  });

  it("a failed task run with notify_on_failure: one mail per subscriber listing each failed device and why; config changes to those who asked", async () => {
    await configureSmtp(sink.port);
    // No retries: an unreachable device fails at once, so the run finishes within the test.
    expect(
      (await t.call("/api/v1/settings", { method: "PATCH", token: admin, body: { collector: { retries: 0 } } })).status,
    ).toBe(200);

    const { prompt, script } = iosScript("core-1", ["hostname core-1", "!", "end"]);
    const fake: FakeDevice = await startFakeDevice({
      script,
      initPrompt: prompt,
      configCommand: IOS_CONFIG_COMMAND,
      auth: { username: USERNAME, password: PASSWORD },
    });
    try {
      const templateId = await builtinTemplateId(t, "cisco-ios");
      const tag = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "core" } })).body.data;
      const other = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "branch" } })).body
        .data;
      const good = await addLoopbackDevice(t, admin, {
        port: fake.port,
        templateId,
        username: USERNAME,
        password: PASSWORD,
        name: "core-1",
        device_tags: ["core"],
      });
      const dead = await addLoopbackDevice(t, admin, {
        port: await freePort(),
        templateId,
        username: USERNAME,
        password: PASSWORD,
        name: "branch-dead",
      });
      const locked = await addLoopbackDevice(t, admin, {
        port: fake.port,
        templateId,
        username: USERNAME,
        password: "Wrong-Pass-0000",
        name: "branch-locked",
      });

      const users: Record<string, number> = {};
      for (const name of ["oncall", "bystander", "core-watcher", "branch-watcher"])
        users[name] = await t.user({ username: name });
      const subscribe = (name: string, body: Record<string, unknown>) =>
        t.call(`/api/v1/users/${users[name]}/mail-subscriptions`, { method: "PUT", token: admin, body });
      expect((await subscribe("oncall", { task_failures: true })).body.data).toMatchObject({
        task_failures: true,
        config_changes: false,
      });
      expect((await subscribe("core-watcher", { config_changes: true, config_change_tag_ids: [tag.id] })).status).toBe(
        200,
      );
      expect(
        (await subscribe("branch-watcher", { config_changes: true, config_change_tag_ids: [other.id] })).status,
      ).toBe(200);
      expect((await subscribe("bystander", { config_change_tag_ids: [99999] })).status).toBe(422);

      const task = await t.call("/api/v1/tasks", {
        method: "POST",
        token: admin,
        body: {
          task_name: "Nightly core",
          task_type: "download_devices",
          devices: [good, dead, locked],
          task_cron: "0 2 * * *",
          notify_on_failure: true,
        },
      });
      expect(task.status).toBe(201);
      expect((await t.call(`/api/v1/tasks/${task.body.data.id}/run`, { method: "POST", token: admin })).status).toBe(
        202,
      );

      const mails = await collect("the task failure mail", (m) => m.some((x) => x.subject.includes("Task")));
      coreDevice = good;

      const failures = mails.filter((m) => m.subject.includes("Task"));
      expect(failures).toHaveLength(1);
      const [mail] = failures;
      expect(mail!.rcpt_tos).toEqual(["oncall@example.test"]);
      expect(mail!.subject).toMatch(/^\[netkeep\] Task "Nightly core": 2 devices failed \(run \d+\)$/);
      expect(mail!.text).toMatch(/- branch-dead; Outcome: unreachable; Reason: .+/);
      expect(mail!.text).toMatch(/- branch-locked; Outcome: auth_failed; Reason: .+/);
      expect(mail!.text).not.toContain("core-1");
      expect(mail!.html).toMatch(/<td>branch-dead<\/td><td>unreachable<\/td>/);
      expect(mail!.html).toMatch(/<td>branch-locked<\/td><td>auth_failed<\/td>/);
      expect(mail!.text).not.toContain(PASSWORD);

      // Config changes: only the watcher of the device's tag, one mail per changed command, none to anyone else.
      const changes = mails.filter((m) => m.subject.includes("configuration changed"));
      expect(changes.length).toBeGreaterThan(0);
      for (const m of changes) {
        expect(m.rcpt_tos).toEqual(["core-watcher@example.test"]);
        expect(m.subject).toMatch(/^\[netkeep\] core-1: configuration changed \(.+\)$/);
      }
      expect(changes.map((m) => m.subject)).toContain(
        `[netkeep] core-1: configuration changed (${IOS_CONFIG_COMMAND})`,
      );
      expect(mails.every((m) => m === mail || changes.includes(m))).toBe(true);
    } finally {
      await fake.close();
    }
  }, 60_000);

  it("a compliance failure: mailed to the subscribers whose role sees the device", async () => {
    await t.role({ name: "branch-ops", tags: ["branch"] });
    const users: Record<string, number> = {};
    for (const [name, role] of [
      ["auditor", "admin"],
      ["branch-auditor", "branch-ops"],
    ] as const)
      users[name] = await t.user({ username: name, role });
    for (const name of Object.keys(users)) {
      expect(
        (
          await t.call(`/api/v1/users/${users[name]}/mail-subscriptions`, {
            method: "PUT",
            token: admin,
            body: { compliance_failures: true },
          })
        ).status,
      ).toBe(200);
    }
    const definition = [
      "// Description: no device is called core-1",
      "#[must_not_match_single_string]",
      "hostname core-1",
      "",
    ].join("\n");
    const policy = (
      await t.call("/api/v1/policies", { method: "POST", token: admin, body: { name: "no-hostname", definition } })
    ).body.data;
    expect(
      (
        await t.call("/api/v1/policy-assignments", {
          method: "POST",
          token: admin,
          body: { policy_id: policy.id, scope: "devices", devices: [coreDevice] },
        })
      ).status,
    ).toBe(201);
    expect((await t.call(`/api/v1/policies/${policy.id}/run`, { method: "POST", token: admin })).status).toBe(202);

    const mails = await collect("the compliance mail", (m) => m.some((x) => x.subject.includes("fails policy")));
    const failures = mails.filter((m) => m.subject.includes("fails policy"));
    expect(failures.map((m) => m.rcpt_tos)).toEqual([["auditor@example.test"]]);
    expect(failures[0]!.subject).toBe('[netkeep] core-1: fails policy "no-hostname"');
    expect(failures[0]!.text).toContain("1 rule failed.");
  }, 60_000);
});
