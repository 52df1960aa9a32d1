/**
 * What the generic masking layer (src/modules/templates/secret-grammar.ts) costs and finds.
 * Run: npm run bench:mask [-- --runs 50]
 *
 * Cost: milliseconds per 100 KB configuration of the layer alone, on a plausible Cisco IOS running configuration
 * (bench/ios-config.ts) and on each family's real configurations of ../shared/fixtures/configs repeated to
 * 100 KB, against the template's own rules on the same text (what storing cost before the layer); the median
 * of --runs runs after warm-up.
 * Findings: per family, the secrets an independent reading finds in those configurations (a list read by hand,
 * test/fixtures/config-secrets.ts, which test/helpers/secret-oracle.ts agrees with), how many both layers leave in
 * clear, and how many other words they mask (false masks), as stored through each family's template.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseTemplate, type ConnectionTemplate } from "../src/modules/templates/template-schema.ts";
import { findGenericSecrets, maskGenericSecrets } from "../src/modules/templates/secret-grammar.ts";
import { maskSecrets, removeSecrets } from "../src/modules/templates/template-text.ts";
import { BUILTIN_TEMPLATES_DIR } from "../src/runtime/builtin-templates.ts";
import { configFixtures, findConfigFixturesDir } from "../test/helpers/config-fixtures.ts";
import { KNOWN_SECRETS } from "../test/fixtures/config-secrets.ts";
import { normalizeConfigText } from "../src/modules/configs/storage/text.ts";
import { iosRunningConfig } from "./ios-config.ts";

const { values: flags } = parseArgs({ options: { runs: { type: "string", default: "50" } } });
const RUNS = Number(flags.runs);

const template = (key: string): ConnectionTemplate => {
  const parsed = parseTemplate(readFileSync(join(BUILTIN_TEMPLATES_DIR, `${key}.yaml`), "utf8"));
  if (!parsed.ok) throw new Error(`${key}: ${JSON.stringify(parsed.errors)}`);
  return parsed.template;
};

const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
function timeMs(f: () => unknown): number {
  for (let i = 0; i < 5; i++) f();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    f();
    times.push(performance.now() - t0);
  }
  return median(times);
}

const to100k = (text: string) => {
  let out = "";
  while (out.length < 100_000) out += text.endsWith("\n") ? text : `${text}\n`;
  return out.slice(0, out.lastIndexOf("\n", 100_000) + 1);
};

console.log("Cost per 100 KB configuration (median ms of %d runs)", RUNS);
console.log("| text | template rules | generic layer | both |");
console.log("|---|---:|---:|---:|");
const ios = normalizeConfigText(iosRunningConfig(0, 100_000)).slice(0, 100_000);
const rows: [string, string, string][] = [["cisco-ios (bench/ios-config.ts)", "cisco-ios", ios]];
const dir = findConfigFixturesDir();
const fixtures = dir ? configFixtures(dir) : [];
for (const family of [...new Set(fixtures.map((f) => f.family))]) {
  rows.push([
    `${family} (real configurations)`,
    family,
    to100k(
      fixtures
        .filter((f) => f.family === family)
        .map((f) => f.text)
        .join("\n"),
    ),
  ]);
}
for (const [name, key, text] of rows) {
  const t = template(key);
  const rules = timeMs(() => removeSecrets(text, t.secrets));
  const generic = timeMs(() => maskGenericSecrets(text));
  const both = timeMs(() => maskSecrets(text, t.secrets));
  console.log(`| ${name} | ${rules.toFixed(2)} | ${generic.toFixed(2)} | ${both.toFixed(2)} |`);
}

if (!dir) {
  console.log("\nno ../shared/fixtures/configs (or CONFIG_FIXTURES): findings skipped");
  process.exit(0);
}

/** Stored lines against their originals, as test/collector/secret-masking.test.ts compares them (one marker per value). */
const MARKER = /<(?:secret hidden|secret removed|hidden|removed|value removed|configuration removed)>/;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
function masked(original: string, stored: string): string[] {
  if (original === stored) return [];
  const m = new RegExp(`^${stored.split(MARKER).map(escape).join("(.+?)")}$`).exec(original);
  return m ? m.slice(1).map((v) => v.replace(/^"(.*)"$/, "$1")) : ["<line changed>"];
}

console.log("\nFindings in ../shared/fixtures/configs, files as kept (both layers, each family's template)");
console.log("| family | files | secrets | left in clear | false masks | found by the generic layer alone |");
console.log("|---|---:|---:|---:|---:|---:|");
for (const family of [...new Set(fixtures.map((f) => f.family))]) {
  const files = fixtures.filter((f) => f.family === family && f.form === "as kept");
  const t = template(family);
  let secrets = 0,
    clear = 0,
    falseMasks = 0,
    genericAlone = 0;
  for (const f of files) {
    const known = KNOWN_SECRETS[family]?.[f.file] ?? [];
    secrets += known.length;
    const before = f.text.split("\n");
    const after = maskSecrets(f.text, t.secrets).split("\n");
    const generic = maskGenericSecrets(f.text).split("\n");
    before.forEach((line, i) => {
      const here = known.filter(([n]) => n === i + 1).map(([, v]) => v);
      const got = masked(line, after[i]!);
      clear += here.filter((v) => !got.includes(v)).length;
      falseMasks += got.filter((v) => !here.includes(v)).length;
      genericAlone += here.filter((v) => masked(line, generic[i]!).includes(v)).length;
    });
    void findGenericSecrets;
  }
  console.log(`| ${family} | ${files.length} | ${secrets} | ${clear} | ${falseMasks} | ${genericAlone} |`);
}
