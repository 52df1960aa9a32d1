/**
 * A database from the release before policy_revisions (migrations up to 0028), whose results store every rule's
 * description and method in each result as the engine's RuleResult: the upgrade moves those to one row per policy
 * revision, and the API shows the results as it did.
 */
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { databaseAtRelease } from "../../../test/helpers/migrations.ts";
import { sha256Hex } from "../../kernel/hashing.ts";
import { evaluatePolicy, parsePolicy, type RuleResult } from "./engine/index.ts";
import { BUILTIN_POLICIES } from "./engine/builtins/index.ts";

const IOS = BUILTIN_POLICIES.find((p) => p.key === "cisco-ios")!;
// The built-in IOS rules (sections, evidence, offending sections) plus one whose fix is known (remediation).
const DEFINITION = `${IOS.definition}\n\n// Description: NTP from the site's server\n#[must_match_single_string]\nntp server 192.0.2.1\n`;
const CONFIGS = [
  ["hostname r1", "service password-encryption", "aaa new-model", "line vty 0 4", " transport input telnet", "end"],
  ["hostname r1", "ntp server 192.0.2.1", "line vty 0 4", " access-class 10 in", " exec-timeout 5 0", "end"],
].map((lines) => lines.join("\n"));
/** What the release before stored per result: the engine's evaluation as it is. */
const evaluated = CONFIGS.map((text) => evaluatePolicy(parsePolicy(DEFINITION).policy, text, { family: "indent" }));

/** A RuleResult as the API shows it (snake_case). */
const shown = ({ sectionsChecked, ...rest }: RuleResult) =>
  sectionsChecked === undefined ? rest : { ...rest, sections_checked: sectionsChecked };

let t: TestContext;
let admin: string;
let hash: string;
beforeAll(async () => {
  const { dir, url } = await databaseAtRelease("0028_task_run_counts_backfill");
  const client = createClient({ url });
  const now = Date.parse("2026-05-20T10:00:00Z");
  hash = await sha256Hex(DEFINITION);
  await client.execute({
    sql: "insert into devices (name, name_key, ip, created_at, updated_at) values ('r1', 'r1', '192.0.2.1', ?, ?)",
    args: [now, now],
  });
  await client.execute({
    sql: `insert into policies (name, name_key, definition, definition_hash, created_at, updated_at)
      values ('site baseline', 'site baseline', ?, ?, ?, ?)`,
    args: [DEFINITION, hash, now, now],
  });
  await client.execute({
    sql: "insert into policy_assignments (policy_id, scope, created_at, updated_at) values (1, 'all', ?, ?)",
    args: [now, now],
  });
  for (const [k, e] of evaluated.entries()) {
    const passed = e.rules.filter((r) => r.passed).length;
    await client.execute({
      sql: `insert into compliance_results (assignment_id, policy_id, device_id, command, config_id, config_version,
        policy_hash, status, score, passed_rules, total_rules, rules, evaluated_at)
        values (1, 1, 1, 'show running-config', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      args: [
        k + 1,
        k + 1,
        hash,
        e.compliant ? "compliant" : "not_compliant",
        Math.round(e.score),
        passed,
        e.rules.length,
        JSON.stringify(e.rules),
        now + k * 86_400_000,
      ],
    });
  }
  client.close();
  t = await createTestContext({ storageDir: dir });
  admin = await t.token();
});
afterAll(() => t?.close());

describe("upgrading results stored with every rule's description", () => {
  it("keeps what the API shows of each result, and stores the descriptions once for the revision", async () => {
    // The fixture covers what the compact form stores apart: evidence in sections, offending sections, a fix.
    const all = evaluated.flatMap((e) => e.rules);
    expect(all.some((r) => r.evidence.some((e) => e.section !== undefined))).toBe(true);
    expect(all.some((r) => r.sections?.length)).toBe(true);
    expect(all.some((r) => r.remediation !== null)).toBe(true);
    expect(all.some((r) => r.evidence.some((e) => e.line === null))).toBe(true);

    const res = await t.call("/api/v1/policy-compliance?sort=id", { token: admin });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.map((r: { rules: unknown }) => r.rules)).toEqual(evaluated.map((e) => e.rules.map(shown)));

    const stored = await t.client.execute("select rules from compliance_results order by id");
    for (const row of stored.rows) expect(String(row.rules)).not.toContain('"description"');
    for (const rule of parsePolicy(DEFINITION).policy.rules)
      expect(stored.rows.some((row) => String(row.rules).includes(rule.description))).toBe(false);
    const revisions = await t.client.execute("select hash, rules from policy_revisions");
    expect(revisions.rows.map((r) => r.hash)).toEqual([hash]);
    expect(JSON.parse(String(revisions.rows[0]!.rules))).toEqual(
      parsePolicy(DEFINITION).policy.rules.map((r) => ({
        index: r.index,
        description: r.description,
        method: r.method,
      })),
    );
  });

  it("lists the failing rules of the upgraded results in the trends, with their descriptions", async () => {
    const res = await t.call("/api/v1/policy-compliance/trends?policy_id=1&from=2026-05-20&to=2026-05-21", {
      token: admin,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const failing = (e: (typeof evaluated)[number]) =>
      e.rules
        .filter((r) => !r.passed)
        .map((r) => ({ policy_id: 1, rule: r.index, description: r.description, devices: 1 }))
        .sort((a, b) => a.rule - b.rule);
    expect(res.body.data.periods.map((p: { failing_rules: unknown }) => p.failing_rules)).toEqual(
      evaluated.map(failing),
    );
  });
});
