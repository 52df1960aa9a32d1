import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { eq } from "drizzle-orm";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId, downloadOnce, latestConfigs } from "../helpers/collector.ts";
import { startFakeDevice } from "../helpers/fake-device.ts";
import { FAMILY_TEMPLATES, parseSimulation } from "../helpers/simulation.ts";
import { parseTemplate } from "../../src/modules/templates/template-schema.ts";
import { templates } from "../../src/db/schema/index.ts";

/**
 * Every built-in template against its written sessions (test/fixtures/sessions/<template-key>/<device>.yaml, format
 * in that folder's README.md): the fake device replays the session over real SSH, the collector runs a real download
 * with the built-in template, and the stored configuration must be exactly the file's expected_config.
 */
const root = join(import.meta.dirname, "..", "fixtures", "sessions");
const templatesDir = join(import.meta.dirname, "..", "..", "collector", "templates");
// The credentials every session is written for: the enable password is what a session's enable exchange expects.
const USERNAME = "netkeep";
const PASSWORD = "replay-pass";
const ENABLE_PASSWORD = "enable-pass";

type SessionFile = { expected_config?: unknown; secrets_absent?: unknown; masked_lines?: unknown };

const keys = readdirSync(root, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const sessionsOf = (key: string) =>
  readdirSync(join(root, key))
    .filter((name) => name.endsWith(".yaml"))
    .sort();
const strings = (value: unknown, what: string): string[] => {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string"))
    throw new Error(`${what} must be a list of strings`);
  return value as string[];
};

let t: TestContext;
let token: string;
beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
});
afterAll(() => t.close());

describe("built-in templates against their written sessions, over real SSH", () => {
  it("every built-in template has a session here or an Oxidized recording (test/collector/fixtures.test.ts)", () => {
    const builtins = readdirSync(templatesDir)
      .filter((n) => n.endsWith(".yaml"))
      .map((n) => n.replace(/\.yaml$/, ""));
    const recorded = new Set(Object.values(FAMILY_TEMPLATES));
    // linux-generic is covered by the real sshd and telnetd tests (test/collector/sshd.test.ts, telnet.test.ts).
    // NETCONF templates have no shell session: their fixture is a configuration in XML (test/collector/netconf.test.ts).
    const netconf = new Set(readdirSync(join(root, "..", "netconf")).map((n) => n.replace(/\.xml$/, "")));
    const untested = builtins.filter(
      (key) => key !== "linux-generic" && !recorded.has(key) && !keys.includes(key) && !netconf.has(key),
    );
    expect(untested).toEqual([]);
  });

  for (const key of keys) {
    for (const file of sessionsOf(key)) {
      it(`${key}/${file}: logs in, stores exactly the expected configuration, secrets masked`, async () => {
        const text = readFileSync(join(root, key, file), "utf8");
        expect(
          text.startsWith("# source:"),
          "the file starts with a '# source:' comment naming where its facts come from",
        ).toBe(true);
        const doc = parse(text) as SessionFile;
        expect(typeof doc.expected_config, "expected_config is text").toBe("string");
        const simulation = parseSimulation(text, `${key}/${file}`);

        const templateId = await builtinTemplateId(t, key);
        const [row] = await t.db.select().from(templates).where(eq(templates.id, templateId));
        const parsed = parseTemplate(row!.code);
        if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
        const template = parsed.template;
        // The fake device speaks SSH only; a Telnet family would need a Telnet replayer first.
        expect(template.protocol, "sessions replay over SSH").toBe("ssh");

        const device = await startFakeDevice({ simulation, auth: { username: USERNAME, password: PASSWORD } });
        try {
          const id = await addLoopbackDevice(t, token, {
            port: device.port,
            templateId,
            username: USERNAME,
            password: PASSWORD,
            device_enable_password: ENABLE_PASSWORD,
            device_vendor: template.vendor,
            name: `${key}-${file}`.replace(/[^A-Za-z0-9_.-]/g, "-").slice(0, 60),
          });
          const job = await downloadOnce(t, id, { limits: { idleTimeoutMs: 3000 }, jobTimeLimitMs: 20_000 });
          expect(
            device.unexpected,
            `lines the session lacks; the client sent ${JSON.stringify(device.received)}`,
          ).toEqual([]);
          expect(job.outcome, `${job.message} ${JSON.stringify(job.result)}`).toBe("success");

          const outputs = await latestConfigs(t, id);
          const stored = outputs.get(template.config_command);
          expect(stored, `nothing stored for ${template.config_command}`).toBeDefined();
          const expected = (doc.expected_config as string).replace(/\n$/, "");
          expect(stored!.replace(/\n$/, "").split("\n")).toEqual(expected.split("\n"));
          // In no stored output: a secret a version or status command prints is as stored as the configuration's.
          for (const secret of strings(doc.secrets_absent, "secrets_absent")) {
            for (const [command, output] of outputs)
              expect(output, `a secret was stored in the output of ${command}`).not.toContain(secret);
          }
          const storedLines = stored!.split("\n");
          for (const line of strings(doc.masked_lines, "masked_lines"))
            expect(storedLines, "a masked (or kept) line is missing").toContain(line);
        } finally {
          await device.close();
        }
      }, 30_000);
    }
  }
});
