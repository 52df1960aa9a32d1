import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { asc, eq } from "drizzle-orm";
import { createApp } from "../src/app.ts";
import { ABILITIES } from "../src/platform/auth/abilities.ts";
import { hashPassword } from "../src/platform/auth/passwords.ts";
import { createSession } from "../src/platform/auth/sessions.ts";
import { issueToken } from "../src/platform/auth/tokens.ts";
import { createUser } from "../src/platform/auth/users.ts";
import { openSecretBox } from "../src/runtime/bootstrap.ts";
import { systemClock } from "../src/kernel/clock.ts";
import { loadConfig } from "../src/kernel/config.ts";
import { openDatabase } from "../src/db/client.ts";
import { migrateDatabase } from "../src/runtime/seed.ts";
import { complianceResults, configs, devices, jobs } from "../src/db/schema/index.ts";
import { indexAllPending } from "../src/modules/configs/search/search-index.ts";
import { storeConfig } from "../src/modules/configs/storage/store.ts";
import { loadBuiltinTemplates } from "../src/runtime/builtin-templates.ts";
import { generateAppKey } from "../src/platform/secrets/box.ts";
import { SESSION_COOKIE } from "../src/adapters/web/cookies.ts";
import { deviceHistory, significantText } from "./configs-data.ts";
import { seedDevices } from "./seed.ts";
import { runComplianceJob } from "../collector/compliance-job.ts";
import { claimNextJob } from "../src/platform/jobs/queue.ts";
import { silentLogger } from "../src/kernel/logger.ts";

/**
 * `npm run bench:web [-- --devices 10000 --versions 2 --bytes 8000 --runs 15] [--page reports --page compliance ...]`
 *
 * Renders each web page server-side (app.request, as the browser's request would be answered, body read whole)
 * against a fleet of `devices` devices, each with `versions` stored configurations, a failed download for one
 * device in fifty, and a task run over every device; prints each page's median and slowest time. Exits 1 when a
 * page's median misses the target. `--page` (repeatable) renders only the pages whose name or path contains it.
 */
const TARGET_MS = 100;

const { values: opts } = parseArgs({
  options: {
    devices: { type: "string", default: "10000" },
    versions: { type: "string", default: "2" },
    bytes: { type: "string", default: "8000" },
    runs: { type: "string", default: "15" },
    page: { type: "string", multiple: true },
  },
});
const whole = (name: keyof typeof opts, min: number) => {
  const n = Number(opts[name]);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`--${name} must be a whole number >= ${min}, got '${opts[name]}'`);
  return n;
};
const DEVICES = whole("devices", 10);
const VERSIONS = whole("versions", 2);
const BYTES = whole("bytes", 2000);
const RUNS = whole("runs", 3);

const dir = mkdtempSync(join(tmpdir(), "netkeep-bench-web-"));
const log = (line: string) => console.log(line);

async function main() {
  const config = loadConfig({
    STORAGE_DIR: join(dir, "storage"),
    DATABASE_URL: "",
    APP_KEY: generateAppKey(),
    COLLECTOR: "off",
  });
  mkdirSync(config.storageDir, { recursive: true });
  const database = await openDatabase(config.databaseUrl);
  const { db } = database;
  await migrateDatabase(database.location, db, systemClock, loadBuiltinTemplates());
  const secrets = await openSecretBox(config.appKey!);
  const app = createApp({ db, config, secrets, clock: systemClock });

  const started = performance.now();
  log(`Seeding ${DEVICES} devices, ${VERSIONS} versions of ~${BYTES / 1000} KB each, in ${dir}`);
  await seedDevices(db, secrets, DEVICES);
  const ids = (await db.select({ id: devices.id }).from(devices).orderBy(asc(devices.id))).map((r) => r.id);
  const day = 86_400_000;
  const base = Date.now() - VERSIONS * day;
  for (let i = 0; i < ids.length; i++) {
    const history = deviceHistory(i, VERSIONS, BYTES);
    for (let v = 0; v < VERSIONS; v++) {
      await storeConfig(db, {
        deviceId: ids[i]!,
        command: "show running-config",
        text: history[v]!,
        significant: significantText,
        trigger: "schedule",
        jobId: null,
        now: new Date(base + v * day + i),
      });
    }
  }
  const failedAt = new Date();
  await db.insert(jobs).values(
    ids
      .filter((_, i) => i % 50 === 0)
      .map((deviceId) => ({
        type: "download" as const,
        deviceId,
        state: "finished" as const,
        outcome: "timeout" as const,
        message: "no prompt within 30 s",
        trigger: "schedule" as const,
        runAfter: failedAt,
        createdAt: failedAt,
        startedAt: failedAt,
        finishedAt: failedAt,
      })),
  );
  await indexAllPending(db);

  const now = new Date();
  const { id: userId } = await createUser(
    db,
    {
      username: "bench",
      email: "bench@example.test",
      roleName: "admin",
      passwordHash: await hashPassword("bench-password-1"),
    },
    now,
  );
  // A task and a run over every device, made as an API client makes them.
  const { value: token } = await issueToken(
    db,
    { userId, name: "bench", abilities: [...ABILITIES], expiresAt: null },
    now,
  );
  const api = async (path: string, body: unknown) => {
    const res = await app.request(path, {
      method: "POST",
      headers: { apitoken: token, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`POST ${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()).data;
  };
  const task = await api("/api/v1/tasks", {
    task_name: "Nightly backup of everything",
    task_type: "download_all",
    task_cron: "0 2 * * *",
  });
  await api(`/api/v1/tasks/${task.id}/run`, {});
  // Compliance: a policy judging every device, evaluated once (a result per device, one rule in two failing on some).
  const policy = await api("/api/v1/policies", {
    name: "bench baseline",
    definition: [
      "// Description: remote logging",
      "#[must_match_regex]",
      "^logging host 10\\.255",
      "",
      "// Description: no Telnet",
      "#[must_not_match_regex]",
      "^ transport input .*telnet",
    ].join("\n"),
  });
  await api("/api/v1/policy-assignments", { policy_id: policy.id, scope: "all" });
  await api(`/api/v1/policies/${policy.id}/run`, {});
  for (let job; (job = await claimNextJob(db, "bench", new Date(), 600_000)); ) {
    if (job.type === "compliance")
      await runComplianceJob({ db, secrets, clock: systemClock, logger: silentLogger, owner: "bench" }, job);
  }
  const [result] = await db.select({ id: complianceResults.id }).from(complianceResults).limit(1);
  // Snippets: one deployed to every device (its pushes stay queued: no collector runs here).
  const snippet = await api("/api/v1/snippets", { name: "ntp", content: "ntp server {ntp}" });
  const deployment = await api(`/api/v1/snippets/${snippet.id}/deploy`, {
    devices: ids,
    dynamic_vars: { ntp: "192.0.2.5" },
    confirm_device_count: ids.length,
  });
  const cookie = `${SESSION_COOKIE}=${await createSession(db, { userId, ip: "127.0.0.1", userAgent: "bench", lifetimeMs: config.sessionLifetimeMs }, now)}`;
  log(`  seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const [oldest] = await db
    .select({ id: configs.id, deviceId: configs.deviceId })
    .from(configs)
    .orderBy(asc(configs.id))
    .limit(1);
  const [next] = await db
    .select({ id: configs.id })
    .from(configs)
    .where(eq(configs.deviceId, oldest!.deviceId))
    .orderBy(asc(configs.version))
    .limit(1)
    .offset(1);
  const middle = ids[Math.floor(ids.length / 2)]!;
  const pages: [string, string][] = [
    ["dashboard", "/dashboard"],
    ["devices", "/devices"],
    ["devices, searched and sorted", "/devices?search=ams&sort=-last_backup_at"],
    ["devices, last page", `/devices?page=${Math.ceil(DEVICES / 50)}`],
    ["device", `/devices/${middle}`],
    ["config", `/configs/${oldest!.id}`],
    ["diff", `/configs/diff?from=${oldest!.id}&to=${next!.id}`],
    ["changes", "/changes"],
    ["configuration retention", "/configs/retention"],
    ["changes, filtered by tag", "/changes?filter[device_tags]=fra"],
    ["search", "/search?q=logging%20host%2010.255"],
    ["tasks", "/tasks"],
    ["task with its run", `/tasks/${task.id}`],
    ["users", "/admin/users"],
    ["compliance", "/compliance"],
    ["compliance, not compliant only", "/compliance?filter[status]=not_compliant&filter[latest]=true"],
    ["compliance result", `/compliance/results/${result?.id}`],
    ["snippets", "/snippets"],
    ["snippet with its deploy form", `/snippets/${snippet.id}`],
    ["deployments", "/snippets/deployments"],
    ["deployment to every device", `/snippets/deployments/${deployment.id}`],
    ["deployment progress (htmx)", `/snippets/deployments/${deployment.id}/progress`],
    ["activity log", "/activity"],
    ["activity log, one action", "/activity?filter[action]=device.create"],
    ["reports", "/reports"],
    ["reports, devices by tag", "/reports?group_by=tag"],
  ];

  const chosen = opts.page?.length
    ? pages.filter(([name, path]) => opts.page!.some((p) => name.includes(p) || path.includes(p)))
    : pages;
  if (!chosen.length) throw new Error(`--page ${opts.page!.join(", ")} matches no page`);

  const render = async (path: string) => {
    const res = await app.request(path, { headers: { cookie, accept: "text/html" } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${body.slice(0, 300)}`);
    return body.length;
  };
  log(
    `\nServer-side render time per page (${RUNS} runs after 2 warm-up runs; target: median < ${TARGET_MS} ms at ${DEVICES} devices)`,
  );
  log(`${"page".padEnd(32)} ${"median".padStart(9)} ${"slowest".padStart(9)} ${"HTML".padStart(9)}`);
  let missed = 0;
  for (const [name, path] of chosen) {
    await render(path);
    await render(path);
    const times: number[] = [];
    let bytes = 0;
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      bytes = await render(path);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)]!;
    if (median >= TARGET_MS) missed++;
    log(
      `${name.padEnd(32)} ${`${median.toFixed(1)} ms`.padStart(9)} ${`${times.at(-1)!.toFixed(1)} ms`.padStart(9)} ${`${(bytes / 1024).toFixed(0)} KiB`.padStart(9)}${median >= TARGET_MS ? "  MISSED" : ""}`,
    );
  }
  database.client.close();
  return missed;
}

main()
  .then((missed) => {
    rmSync(dir, { recursive: true, force: true });
    if (missed) {
      console.error(`\n${missed} page(s) missed the ${TARGET_MS} ms target`);
      process.exit(1);
    }
  })
  .catch((e) => {
    rmSync(dir, { recursive: true, force: true });
    console.error(e);
    process.exit(1);
  });
