import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId, downloadOnce, latestConfigs } from "../helpers/collector.ts";
import { configFixtures, findConfigFixturesDir, type ConfigFixture } from "../helpers/config-fixtures.ts";
import { startFamilyDevice } from "../helpers/family-device.ts";
import { oracleSecrets } from "../helpers/secret-oracle.ts";
import { KNOWN_SECRETS } from "../fixtures/config-secrets.ts";
import { templates } from "../../src/db/schema/index.ts";
import { parseTemplate, type ConnectionTemplate } from "../../src/modules/templates/template-schema.ts";
import { removeLines } from "../../src/modules/templates/template-text.ts";

/**
 * Real configurations of every family in ../shared/fixtures/configs, each backed up through a fake device of its
 * family (its prompt, its template's configuration command, over real SSH) and read back from the database:
 * stored with no secret in clear, no other word masked, no line lost. Which words are secrets is known from two
 * sources that share nothing with the masking code: a list read by hand from the files (config-secrets.ts) and
 * an independent reading of vendor syntax (secret-oracle.ts).
 */
const dir = findConfigFixturesDir();
if (!dir) {
  if (process.env.CI)
    throw new Error("the configurations are missing: ../shared/fixtures/configs (or CONFIG_FIXTURES)");
  console.warn(
    "SKIPPED test/collector/secret-masking.test.ts: no configurations in ../shared/fixtures/configs; set CONFIG_FIXTURES",
  );
}
const fixtures = dir ? configFixtures(dir) : [];

/** Any marker a template or the generic layer writes in place of a value. */
const MARKER = /<(?:secret hidden|secret removed|hidden|removed|value removed|configuration removed)>/;
const unquote = (v: string) => v.replace(/^"(.*)"$/, "$1");
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * What a stored line masked of its original: the original must be the stored line with each marker standing for
 * one value, every other character the same. Undefined when the two differ anywhere else.
 */
function maskedValues(original: string, stored: string): string[] | undefined {
  if (original === stored) return [];
  const parts = stored.split(new RegExp(MARKER.source));
  if (parts.length === 1) return undefined;
  const m = new RegExp(`^${parts.map(escape).join("(.+?)")}$`).exec(original);
  return m ? m.slice(1).map(unquote) : undefined;
}

let t: TestContext;
let token: string;
const templateIds = new Map<string, { id: number; template: ConnectionTemplate }>();

beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
});
afterAll(() => t.close());

/** The family's built-in template, copied without config_marker and min_bytes: a parser test's excerpt is no whole configuration. */
async function familyTemplate(family: string) {
  const known = templateIds.get(family);
  if (known) return known;
  const [row] = await t.db
    .select()
    .from(templates)
    .where(eq(templates.id, await builtinTemplateId(t, family)));
  const code = row!.code.replace(/^(?:config_marker|min_bytes):.*\n/gm, "");
  const copy = await t.call("/api/v1/templates", { method: "POST", token, body: { name: `${family} excerpts`, code } });
  expect(copy.status, JSON.stringify(copy.body)).toBe(201);
  const parsed = parseTemplate(code);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const entry = { id: copy.body.data.id as number, template: parsed.template };
  templateIds.set(family, entry);
  return entry;
}

/** The fixture's lines a device prints and the template keeps: blanks and trailing blanks aside, drop filters applied. */
function expectedLines(fixture: ConfigFixture, template: ConnectionTemplate): { number: number; text: string }[] {
  return fixture.text
    .split("\n")
    .map((text, i) => ({ number: i + 1, text: text.replace(/\s+$/, "") }))
    .filter((l) => l.text.trim() !== "" && removeLines(l.text, template.filters.drop) !== "");
}

describe.skipIf(!dir)("real configurations backed up through each family's template: what is stored", () => {
  it("has configurations of every family", () => {
    expect(new Set(fixtures.map((f) => f.family)).size).toBeGreaterThanOrEqual(12);
  });

  for (const fixture of fixtures) {
    it(`${fixture.family}/${fixture.file} (${fixture.form}): no secret in clear, nothing else masked, no line lost`, async () => {
      const { id: templateId, template } = await familyTemplate(fixture.family);
      const device = await startFamilyDevice({
        family: fixture.family,
        configCommand: template.config_command,
        config: fixture.text,
        auth: { username: "netkeep", password: "fixture-pass" },
      });
      let stored: string | undefined;
      try {
        const deviceId = await addLoopbackDevice(t, token, {
          port: device.port,
          templateId,
          username: "netkeep",
          password: "fixture-pass",
        });
        const job = await downloadOnce(t, deviceId, { limits: { idleTimeoutMs: 5000 } });
        expect(job.outcome, `${job.message} ${JSON.stringify(job.result)}`).toBe("success");
        stored = (await latestConfigs(t, deviceId)).get(template.config_command);
      } finally {
        await device.close();
      }
      expect(stored, "nothing stored for the configuration command").toBeDefined();

      const expected = expectedLines(fixture, template);
      const storedLines = stored!.split("\n").filter((l) => l.trim() !== "");
      expect(storedLines.length, "stored lines").toBe(expected.length);

      // By hand: exact lines for the file as kept; for a form made from it, the values (each once per leaf).
      const known = KNOWN_SECRETS[fixture.family]?.[fixture.file] ?? [];
      const knownValues = new Set(known.map(([, v]) => v));
      const oracle = oracleSecrets(fixture.text);
      if (fixture.form === "as kept")
        expect(oracle.map((o) => `${o.line}:${o.value}`).sort(), "the two oracles agree").toEqual(
          known.map(([l, v]) => `${l}:${v}`).sort(),
        );
      else for (const o of oracle) expect(knownValues, `oracle value not in the list: ${o.value}`).toContain(o.value);

      const problems: string[] = [];
      let masks = 0;
      expected.forEach((line, i) => {
        const storedLine = storedLines[i]!;
        const masked = maskedValues(line.text, storedLine);
        if (masked === undefined)
          return void problems.push(`line ${line.number} changed beyond masking:\n  ${line.text}\n  ${storedLine}`);
        masks += masked.length;
        const secretsHere =
          fixture.form === "as kept"
            ? known.filter(([n]) => n === line.number).map(([, v]) => v)
            : oracle.filter((o) => o.line === line.number).map((o) => o.value);
        for (const value of secretsHere)
          if (!masked.includes(value))
            problems.push(`line ${line.number}: secret '${value}' stored in clear: ${storedLine}`);
        for (const value of masked) {
          const secret = fixture.form === "as kept" ? secretsHere.includes(value) : knownValues.has(value);
          if (!secret) problems.push(`line ${line.number}: '${value}' masked, but it is no secret: ${storedLine}`);
        }
      });
      expect(problems).toEqual([]);
      expect(masks, "values masked").toBe(known.length);
    });
  }
});
