/**
 * How long a diff of two 100,000-line configurations takes (target: under a second through the API).
 * Run: npx tsx bench/diff.ts [--lines 100000] [--skip-diff-package]
 *
 * Texts: plausible IOS running configs (bench/ios-config.ts) cut to N lines. "Edited" is the same text with
 * 1,000 scattered line changes, 200 inserted stanzas, 200 deleted lines and a moved block of 500 lines;
 * "unrelated" is another device's configuration (nearly every line differs). Measured: the line diff alone,
 * the `diff` package on the same pair (what netkeep used before), storing the new version (which writes the
 * change row's diff), and GET /configs/diff in both formats through the app, each the median of 5 runs.
 */
import { parseArgs } from "node:util";
import { structuredPatch } from "diff";
import { createTestContext } from "../test/helpers/app.ts";
import { devices } from "../src/db/schema/index.ts";
import { diffTexts, formatUnified } from "../src/modules/configs/history/config-diff.ts";
import { storeConfig } from "../src/modules/configs/storage/store.ts";
import { normalizeConfigText } from "../src/modules/configs/storage/text.ts";
import { iosRunningConfig } from "./ios-config.ts";
import { mulberry32 } from "../src/kernel/random.ts";
import { nameKey } from "../src/db/name-key.ts";

const { values: flags } = parseArgs({
  options: { lines: { type: "string", default: "100000" }, "skip-diff-package": { type: "boolean", default: false } },
});
const LINES = Number(flags.lines);
if (!Number.isInteger(LINES) || LINES < 10)
  throw new Error(`--lines must be a whole number >= 10, got '${flags.lines}'`);

function configOf(index: number): string[] {
  const lines = normalizeConfigText(iosRunningConfig(index, LINES * 45)).split("\n");
  if (lines.length < LINES) throw new Error(`generated only ${lines.length} lines`);
  return lines.slice(0, LINES);
}

function edited(lines: string[]): string[] {
  const next = mulberry32(42);
  const out = lines.slice();
  const at = () => Math.floor(next() * out.length);
  for (let i = 0; i < 1000; i++) {
    const k = at();
    out[k] = `${out[k]} ! edited ${i}`;
  }
  for (let i = 0; i < 200; i++)
    out.splice(at(), 0, `interface Loopback${i}`, ` description added ${i}`, " no shutdown", "!");
  for (let i = 0; i < 200; i++) out.splice(at(), 1);
  const block = out.splice(at(), 500);
  out.splice(at(), 0, ...block);
  return out;
}

const text = (lines: string[]) => lines.join("\n") + "\n";

async function median(runs: number, work: () => unknown | Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

const ms = (n: number) => `${n.toFixed(0).padStart(6)} ms`;

async function main() {
  const base = configOf(1);
  const pairs = { edited: text(edited(base)), unrelated: text(configOf(2)) };
  const old = text(base);
  console.log(`texts: ${LINES} lines, ${(old.length / 1e6).toFixed(1)} MB each`);

  for (const [name, now] of Object.entries(pairs)) {
    const t = await median(5, () => formatUnified(diffTexts(old, now), "a", "b"));
    const d = diffTexts(old, now);
    console.log(
      `line diff (${name}):${" ".repeat(12 - name.length)}${ms(t)}   +${d.added} -${d.removed} in ${d.hunks.length} hunks`,
    );
  }
  if (!flags["skip-diff-package"]) {
    const start = performance.now();
    const patch = structuredPatch("a", "b", old, pairs.edited, "", "", { context: 3, timeout: 60_000 });
    console.log(
      `diff package (edited):  ${ms(performance.now() - start)}   ${patch ? `${patch.hunks.length} hunks` : "gave up after 60 s"}`,
    );
  }

  const ctx = await createTestContext();
  try {
    const now = new Date();
    const [device] = await ctx.db
      .insert(devices)
      .values({
        name: "bench-diff-01",
        nameKey: nameKey("bench-diff-01"),
        ip: "192.0.2.1",
        createdAt: now,
        updatedAt: now,
      })
      .returning({ id: devices.id });
    const store = (command: string, t: string) =>
      storeConfig(ctx.db, {
        deviceId: device!.id,
        command,
        text: t,
        significant: (x) => x,
        trigger: "cli",
        jobId: null,
        now: new Date(),
      });
    const ids: Record<string, number> = {};
    ids.old = (await store("show running-config", old)).configId;
    const start = performance.now();
    ids.edited = (await store("show running-config", pairs.edited)).configId;
    console.log(`store a new version:    ${ms(performance.now() - start)}   (gzip, hash, change row with its diff)`);
    await store("show running-config", old);
    ids.unrelated = (await store("show running-config", pairs.unrelated)).configId;

    const token = await ctx.token(["configs.read"]);
    for (const name of ["edited", "unrelated"]) {
      for (const format of ["json", "unified"]) {
        const path = `/api/v1/configs/diff?from=${ids.old}&to=${ids[name]}&format=${format}`;
        let bytes = 0;
        const t = await median(5, async () => {
          const res = await ctx.request(path, { token });
          if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
          bytes = (await res.arrayBuffer()).byteLength;
        });
        console.log(
          `GET /configs/diff ${name} ${format}:${" ".repeat(18 - name.length - format.length)}${ms(t)}   ${(bytes / 1e6).toFixed(1)} MB answer`,
        );
      }
    }
  } finally {
    await ctx.close();
  }
}

await main();
