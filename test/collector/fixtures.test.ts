import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId, downloadOnce, latestConfigs } from "../helpers/collector.ts";
import { startFakeDevice } from "../helpers/fake-device.ts";
import {
  EXCERPT_RECORDINGS,
  FAMILY_TEMPLATES,
  findOxidizedFixturesDir,
  loadSimulation,
  simulationFiles,
} from "../helpers/simulation.ts";
import { parseTemplate } from "../../src/modules/templates/template-schema.ts";
import { storedText } from "../../src/modules/templates/template-text.ts";
import { templates } from "../../src/db/schema/index.ts";
import { eq } from "drizzle-orm";

const fixtureDir = findOxidizedFixturesDir();
if (!fixtureDir) {
  if (process.env.CI)
    throw new Error("the Oxidized recordings are missing: ../shared/fixtures/oxidized (or OXIDIZED_FIXTURES)");
  console.warn(
    "SKIPPED test/collector/fixtures.test.ts: no recordings in ../shared/fixtures/oxidized; set OXIDIZED_FIXTURES",
  );
}
const recordings = fixtureDir ? simulationFiles(fixtureDir) : [];

let t: TestContext;
let token: string;
beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
});
afterAll(() => t.close());

const SEPARATOR = /^[!#]$/;
const lines = (text: string) =>
  text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((l) => l.replace(/\s+$/, ""));

/**
 * Oxidized stores the other commands' output as comment lines ("! ..." or "# ...") around the configuration.
 * The configuration netkeep stored must appear in that file, in order, and every line of the file it does
 * not account for must be such a comment (or blank): nothing of the configuration may be lost or invented.
 */
function compareWithOxidized(stored: string, oxidized: string) {
  // A lone "#" or "!" separates blocks (TP-Link, IOS): Oxidized's models drop some of them, netkeep keeps the text.
  const ours = lines(stored).filter((l) => l !== "" && !SEPARATOR.test(l));
  // Oxidized appends its own marker to OPNsense's last line: "</opnsense><!-- OPNsense 23.7 -->".
  const theirs = lines(oxidized).map((l) => l.replace(/<!-- OPNsense [^>]*-->$/, ""));
  const comment = /^(?:[!#]|!!)/;
  let j = 0;
  const missing: string[] = [];
  const unexplained: string[] = [];
  for (const line of ours) {
    const k = theirs.indexOf(line, j);
    if (k === -1) {
      missing.push(line);
      continue;
    }
    for (const skipped of theirs.slice(j, k)) if (skipped !== "" && !comment.test(skipped)) unexplained.push(skipped);
    j = k + 1;
  }
  for (const rest of theirs.slice(j)) if (rest !== "" && !comment.test(rest)) unexplained.push(rest);
  return { missing, unexplained };
}

describe.skipIf(!fixtureDir)("the collector against every recorded device session, over real SSH", () => {
  it("has recordings for every family", () => {
    expect(recordings.length).toBeGreaterThanOrEqual(15);
  });

  for (const file of recordings) {
    const name = file.slice(file.lastIndexOf("/") + 1).replace("#simulation.yaml", "");
    const family = name.split("#")[0]!;

    it(`${name}: logs in, runs the template, stores the configuration with secrets removed`, async () => {
      const key = FAMILY_TEMPLATES[family];
      expect(key, `no template for family ${family}`).toBeDefined();
      let templateId = await builtinTemplateId(t, key!);
      const [row] = await t.db.select().from(templates).where(eq(templates.id, templateId));
      if (EXCERPT_RECORDINGS.has(name)) {
        // An excerpt is no whole configuration: a copy of the template without its config_marker stores it.
        const code = row!.code.replace(/^config_marker:.*\n/m, "");
        const copy = await t.call("/api/v1/templates", {
          method: "POST",
          token,
          body: { name: `${name} excerpt`, code },
        });
        expect(copy.status, JSON.stringify(copy.body)).toBe(201);
        templateId = copy.body.data.id;
      }
      const parsed = parseTemplate(row!.code);
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
      const template = parsed.template;

      const device = await startFakeDevice({
        simulation: loadSimulation(file),
        auth: { username: "oxidized", password: "replay-pass" },
      });
      try {
        const id = await addLoopbackDevice(t, token, {
          port: device.port,
          templateId,
          username: "oxidized",
          password: "replay-pass",
          name: name.replace(/[^A-Za-z0-9_.-]/g, "-").slice(0, 60),
        });
        const job = await downloadOnce(t, id, { limits: { idleTimeoutMs: 5000 } });
        expect(device.unexpected, "lines the recording lacks").toEqual([]);
        expect(job.outcome, `${job.message} ${JSON.stringify(job.result)}`).toBe("success");

        const stored = (await latestConfigs(t, id)).get(template.config_command);
        expect(stored, `nothing stored for ${template.config_command}`).toBeDefined();
        expect(stored!.length).toBeGreaterThan(0);
        expect(stored!.startsWith("\n"), "stored text starts with a blank line").toBe(false);

        const outputFile = file.replace("#simulation.yaml", "#output.txt");
        const oxidized = storedText(readFileSync(outputFile, "utf8").replace(/\r\n?/g, "\n"), template);
        const { missing, unexplained } = compareWithOxidized(stored!, oxidized);
        expect(missing, "stored lines Oxidized did not store").toEqual([]);
        expect(unexplained, "configuration lines netkeep did not store").toEqual([]);

        const secretFile = file.replace("#simulation.yaml", "#secret.yaml");
        let rules: { pass?: string[]; fail?: string[] } | undefined;
        try {
          rules = parse(readFileSync(secretFile, "utf8"));
        } catch {
          rules = undefined;
        }
        for (const pattern of rules?.fail ?? []) {
          expect(
            new RegExp(pattern, "m").test(stored!) || stored!.includes(pattern),
            `secret still present: ${pattern}`,
          ).toBe(false);
        }
        for (const pattern of rules?.pass ?? []) {
          expect(
            new RegExp(pattern, "m").test(stored!) || stored!.includes(pattern),
            `expected text gone: ${pattern}`,
          ).toBe(true);
        }
      } finally {
        await device.close();
      }
    });
  }
});
