import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { claimNextJob } from "../../platform/jobs/queue.ts";
import { silentLogger } from "../../kernel/logger.ts";
import { runComplianceJob } from "../../../collector/compliance-job.ts";
import { createDevice, storeVersion } from "../configs/test-fixtures.ts";

const DEFINITION = [
  "// Description: no SNMP community public",
  "#[must_not_match_single_string]",
  "snmp-server community public",
  "",
  "// Description: no telnet",
  "#[must_not_match_single_string]",
  "transport input telnet",
  "",
].join("\n");

let t: TestContext;
let token: string;
const clock = manualClock(new Date("2026-11-24T12:00:00Z"));
beforeAll(async () => {
  t = await createTestContext({ clock });
  token = await t.token();
});
afterAll(() => t.close());

async function resultFor(text: string, name: string, tags: string[] = []) {
  const deviceId = await createDevice(t, token, { device_name: name, device_tags: tags });
  await storeVersion(t, { deviceId, text, at: clock.now() });
  const policy = (
    await t.call("/api/v1/policies", {
      method: "POST",
      token,
      body: { name: `policy ${name}`, definition: DEFINITION },
    })
  ).body.data;
  const assignment = (
    await t.call("/api/v1/policy-assignments", {
      method: "POST",
      token,
      body: { policy_id: policy.id, scope: "devices", devices: [deviceId] },
    })
  ).body.data;
  expect((await t.call(`/api/v1/policy-assignments/${assignment.id}/run`, { method: "POST", token })).status).toBe(202);
  for (let job; (job = await claimNextJob(t.db, "test-collector", clock.now(), 60_000)); ) {
    await runComplianceJob({ db: t.db, secrets: t.secrets, clock, logger: silentLogger, owner: "test-collector" }, job);
  }
  const list = await t.call(`/api/v1/policy-compliance?filter[device_id]=${deviceId}`, { token });
  return { deviceId, result: list.body.data[0] };
}

describe("remediation to snippet", () => {
  it("turns a failed result's fixes into a snippet, in rule order, that renders for the device", async () => {
    const { deviceId, result } = await resultFor(
      "hostname r1\nsnmp-server community public RO\nline vty 0 4\n transport input telnet\nend",
      "remedy-1",
    );
    expect(result.status).toBe("not_compliant");
    const res = await t.call(`/api/v1/policy-compliance/${result.id}/snippet`, { method: "POST", token, body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const fixes = result.rules.flatMap((r: any) => r.remediation ?? []);
    expect(fixes.length).toBeGreaterThan(0);
    expect(res.body.data).toMatchObject({
      name: `Remediation: policy remedy-1 on remedy-1 (result ${result.id})`,
      content: fixes.join("\n"),
      tags: ["remediation"],
    });
    const dry = await t.call(`/api/v1/snippets/${res.body.data.id}/send`, {
      method: "POST",
      token,
      body: { device_id: deviceId, dry_run: true },
    });
    expect(dry.body.data.devices[0].lines).toEqual(fixes);
  });

  it("answers 422 for a result with nothing to fix, and 404 for a result outside the caller's scope", async () => {
    const { result: clean } = await resultFor("hostname r2\nend", "remedy-2");
    expect(
      (await t.call(`/api/v1/policy-compliance/${clean.id}/snippet`, { method: "POST", token, body: {} })).status,
    ).toBe(422);
    const { result: other } = await resultFor("hostname r3\nsnmp-server community public RO\nend", "remedy-3", [
      "remedy-lon",
    ]);
    await t.role({ name: "remedy-ams", tags: ["remedy-ams"] });
    const scoped = await t.token(undefined, { role: "remedy-ams" });
    expect(
      (await t.call(`/api/v1/policy-compliance/${other.id}/snippet`, { method: "POST", token: scoped, body: {} }))
        .status,
    ).toBe(404);
  });
});
