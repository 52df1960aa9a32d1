import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDetectJob } from "../../collector/detect-job.ts";
import { DEFAULT_LIMITS } from "../../collector/session.ts";
import { claimNextJob, getJob, type Job } from "../../src/platform/jobs/queue.ts";
import { silentLogger } from "../../src/kernel/logger.ts";
import { parseTemplate } from "../../src/modules/templates/template-schema.ts";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import { startFakeDevice } from "../helpers/fake-device.ts";
import {
  FAMILY_TEMPLATES,
  findOxidizedFixturesDir,
  loadSimulation,
  parseSimulation,
  recordedMode,
  simulationFiles,
  stripTerminator,
  type Simulation,
} from "../helpers/simulation.ts";

/**
 * Detection against every family's fake devices (the written sessions in test/fixtures/sessions and the Oxidized
 * recordings): a device with no template is detected through the real collector job over real SSH (on exec
 * channels for the families recorded that way, whose fake device refuses a shell), and the job must propose that
 * family's template and list no other template as a candidate. The device's credentials carry
 * the enable password the written sessions expect, so families that say little before enable are entered first.
 */

const sessionsRoot = join(import.meta.dirname, "..", "fixtures", "sessions");
const templatesDir = join(import.meta.dirname, "..", "..", "collector", "templates");
const oxidizedDir = findOxidizedFixturesDir();
if (!oxidizedDir) {
  if (process.env.CI)
    throw new Error("the Oxidized recordings are missing: ../shared/fixtures/oxidized (or OXIDIZED_FIXTURES)");
  console.warn(
    "detect-fixtures.test.ts: no Oxidized recordings in ../shared/fixtures/oxidized; only the written sessions are detected",
  );
}

type Fixture = {
  name: string;
  key: string;
  simulation: Simulation;
  login: { username: string; password: string; enable?: string };
};

const fixtures: Fixture[] = [
  ...readdirSync(sessionsRoot, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((dir) =>
      readdirSync(join(sessionsRoot, dir.name))
        .filter((f) => f.endsWith(".yaml"))
        .sort()
        .map((file) => ({
          name: `${dir.name}/${file}`,
          key: dir.name,
          simulation: parseSimulation(readFileSync(join(sessionsRoot, dir.name, file), "utf8"), file),
          login: { username: "netkeep", password: "replay-pass", enable: "enable-pass" },
        })),
    ),
  ...(oxidizedDir ? simulationFiles(oxidizedDir) : []).map((file) => {
    const name = file.slice(file.lastIndexOf("/") + 1).replace("#simulation.yaml", "");
    return {
      name,
      key: FAMILY_TEMPLATES[name.split("#")[0]!]!,
      simulation: loadSimulation(file),
      login: { username: "oxidized", password: "replay-pass" },
    };
  }),
];

const detectCommandOf = (key: string): string => {
  const parsed = parseTemplate(readFileSync(join(templatesDir, `${key}.yaml`), "utf8"));
  if (!parsed.ok || !parsed.template.detect) throw new Error(`${key} has no detect section`);
  return parsed.template.detect.command;
};

/** Why a recording cannot show detection, if it cannot: what detection asks is not in it. */
function unusable(f: Fixture): string | undefined {
  const command = detectCommandOf(f.key);
  if (!f.simulation.commands.some((c) => stripTerminator(c.line) === command))
    return `the recording never ran the detect command '${command}'`;
  return undefined;
}

let t: TestContext;
let admin: string;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(() => t.close());

async function runQueued(): Promise<Job> {
  const job = await claimNextJob(t.db, "test-collector", new Date(), 60_000);
  if (!job) throw new Error("no job to claim");
  await runDetectJob(
    {
      db: t.db,
      secrets: t.secrets,
      clock: { now: () => new Date() },
      logger: silentLogger,
      owner: "test-collector",
      limits: { ...DEFAULT_LIMITS, idleTimeoutMs: 3_000, optionalIdleTimeoutMs: 1_000 },
      connectTimeoutMs: 5_000,
    },
    job,
    new AbortController().signal,
  );
  return (await getJob(t.db, job.id))!;
}

describe("detection names each family's template, and only it, for every recorded device", () => {
  it("every built-in template can be detected", () => {
    const keys = readdirSync(templatesDir)
      .filter((n) => n.endsWith(".yaml"))
      .map((n) => n.replace(/\.yaml$/, ""));
    const undetectable = keys.filter((key) => {
      const parsed = parseTemplate(readFileSync(join(templatesDir, `${key}.yaml`), "utf8"));
      return !parsed.ok || !parsed.template.detect;
    });
    expect(undetectable).toEqual([]);
  });

  for (const f of fixtures) {
    const why = unusable(f);
    it.skipIf(why !== undefined)(
      `${f.name}: detected as ${f.key}${why ? ` (skipped: ${why})` : ""}`,
      async () => {
        const device = await startFakeDevice({
          simulation: f.simulation,
          auth: { username: f.login.username, password: f.login.password },
        });
        try {
          const created = await t.call("/api/v1/devices", {
            method: "POST",
            token: admin,
            body: {
              device_name: `detect-${f.name}`.replace(/[^A-Za-z0-9_.-]/g, "-").slice(0, 60),
              device_ip: "127.0.0.1",
              device_vendor: "Dell",
              device_port_override: device.port,
              device_username: f.login.username,
              device_password: f.login.password,
              ...(f.login.enable ? { device_enable_password: f.login.enable } : {}),
            },
          });
          expect(created.status, JSON.stringify(created.body)).toBe(201);
          expect(created.body.data.device_template_id).toBeNull();
          expect(
            (await t.call(`/api/v1/devices/${created.body.data.id}/detect`, { method: "POST", token: admin })).status,
          ).toBe(202);
          const job = await runQueued();
          const result = job.result as {
            proposal?: { template: string };
            candidates?: { template: string }[];
            commands_run?: string[];
            enabled?: boolean;
            channels?: string;
          };
          expect(job.outcome, `${job.message} ${JSON.stringify(result)}`).toBe("success");
          expect(result.proposal?.template).toBe(f.key);
          expect(
            result.candidates?.map((c) => c.template),
            "no other template claims the device",
          ).toEqual([f.key]);
          // A device that offers no interactive shell (the recordings of exec-channel families) is asked on exec channels.
          expect(result.channels).toBe(recordedMode(f.simulation));
          // A family whose recording enters enable first was entered before the version was asked for.
          const enableAt = f.simulation.commands.findIndex((c) => stripTerminator(c.line) === "enable");
          const sent = device.received.map(stripTerminator);
          if (f.login.enable && enableAt >= 0) {
            expect(result.enabled).toBe(true);
            expect(sent.indexOf("enable"), JSON.stringify(sent)).toBeGreaterThanOrEqual(0);
            expect(sent.indexOf("enable"), JSON.stringify(sent)).toBeLessThan(sent.indexOf(result.commands_run![0]!));
          }
        } finally {
          await device.close();
        }
      },
      30_000,
    );
  }
});
