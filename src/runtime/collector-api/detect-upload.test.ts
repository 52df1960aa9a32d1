import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { devices } from "../../db/schema/index.ts";
import { getJob } from "../../platform/jobs/queue.ts";
import { newKeyPair } from "../../platform/secrets/sealed-box.ts";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { addLoopbackDevice, builtinTemplateId } from "../../../test/helpers/collector.ts";
import { COLLECTOR_CREDENTIAL_HEADER } from "./wire.ts";

/** The collectors' API spoken by hand: what a site sends is checked by the server, not trusted. */
let t: TestContext;
beforeEach(async () => {
  t = await createTestContext();
});
afterEach(() => t.close());

async function post(path: string, body: unknown, credential?: string) {
  const res = await t.app.fetch(
    new Request(`http://localhost/collector-api/v1${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(credential ? { [COLLECTOR_CREDENTIAL_HEADER]: credential } : {}),
      },
      body: JSON.stringify(body),
    }),
  );
  return { status: res.status, body: (await res.json()) as { data?: any; message?: string } };
}

describe("a detection uploaded by a remote collector", () => {
  it("is refused when it proposes a template that is not one of the server's built-ins; the device keeps its own", async () => {
    const admin = await t.token();
    const zone = (
      await t.call("/api/v1/zones", { method: "POST", token: admin, body: { name: "site", mode: "remote" } })
    ).body.data;
    const iosId = await builtinTemplateId(t, "cisco-ios");
    const deviceId = await addLoopbackDevice(t, admin, { port: 1, templateId: iosId, zone_id: zone.id });
    const made = await t.call("/api/v1/templates", {
      method: "POST",
      token: admin,
      body: { name: "site-made", code: "prompt: '#$'\ncommands: [show run]" },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const own = made.body.data as { id: number };
    const enrolled = await post("/enroll", {
      enrollment_key: zone.enrollment_key,
      name: "site-1",
      public_key: newKeyPair().publicKey,
    });
    expect(enrolled.status).toBe(201);
    const credential = enrolled.body.data.credential as string;
    const queued = await t.call(`/api/v1/devices/${deviceId}/detect`, {
      method: "POST",
      token: admin,
      body: { apply: true },
    });
    expect(queued.status).toBe(202);
    const claimed = await post("/jobs/claim", { wait_ms: 0, max: 5 }, credential);
    expect(claimed.body.data.map((j: { type: string }) => j.type)).toEqual(["detect"]);
    // The built-ins the site matches against come with the job.
    expect(claimed.body.data[0].builtins.some((b: { id: number }) => b.id === iosId)).toBe(true);

    const match = (templateId: number) => ({
      template_id: templateId,
      template: "site-made",
      vendor: null,
      model: null,
      os_version: null,
      serial: null,
      matched_by: ["version"],
      score: 4,
    });
    const uploaded = await post(
      "/results",
      {
        upload_key: "forged-detection-1",
        job_id: claimed.body.data[0].id,
        outcome: "collected",
        duration_ms: 10,
        detection: {
          result: {},
          ranked: [match(own.id)],
          proposal: match(own.id),
          model: null,
          os_version: null,
          serial: null,
          hostname: null,
          protocol: "ssh",
        },
      },
      credential,
    );
    expect(uploaded.status).toBe(200);
    const job = (await getJob(t.db, claimed.body.data[0].id))!;
    expect(job).toMatchObject({ state: "finished", outcome: "error" });
    expect(job.message).toContain("not one of the server's built-ins");
    const [device] = await t.db.select().from(devices).where(eq(devices.id, deviceId));
    expect(device!.templateId).toBe(iosId);
  });
});
