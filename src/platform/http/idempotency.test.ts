/**
 * Idempotency-Key on create routes: a retry after a lost answer gets the first answer back (200) instead of a
 * duplicate or a 409, through HTTP on a real database.
 */
import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { devices, idempotencyKeys, tags } from "../../db/schema/index.ts";
import { nameKey } from "../../db/name-key.ts";
import { openApiDocument } from "../../adapters/api/versions.ts";
import { sha256Hex } from "../../kernel/hashing.ts";
import { createSecretBox, generateAppKey, parseAppKey } from "../secrets/box.ts";

let t: TestContext;
let admin: string;
const clock = manualClock();

beforeAll(async () => {
  t = await createTestContext({ clock });
  admin = await t.token();
});
afterAll(() => t.close());

const device = (name: string) => ({ device_name: name, device_ip: "192.0.2.10", device_vendor: "Cisco" });
const post = (path: string, body: unknown, key?: string, token = admin) =>
  t.call(`/api/v1/${path}`, {
    method: "POST",
    token,
    body,
    headers: key === undefined ? {} : { "Idempotency-Key": key },
  });
const devicesNamed = async (name: string) =>
  (
    await t.db
      .select({ n: count() })
      .from(devices)
      .where(eq(devices.nameKey, nameKey(name)))
  )[0]!.n;

describe("Idempotency-Key", () => {
  it("a retry with the same key and body answers 200 with the first answer and Location, and creates nothing", async () => {
    const first = await post("devices", device("idem-rtr-01"), "key-001");
    expect(first.status).toBe(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    const retry = await post("devices", device("idem-rtr-01"), "key-001");
    expect(retry.status).toBe(200);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(retry.headers.get("Location")).toBe(first.headers.get("Location"));
    expect(retry.body).toEqual(first.body);
    expect(await devicesNamed("idem-rtr-01")).toBe(1);
  });

  it("works on every create route, here a tag, a bulk device create and a template copy", async () => {
    const tag = await post("tags", { name: "idem-tag" }, "tag-key");
    expect((await post("tags", { name: "idem-tag" }, "tag-key")).body.data.id).toBe(tag.body.data.id);
    const bulk = { devices: [device("idem-bulk-01"), device("idem-bulk-02")] };
    expect((await post("devices/bulk", bulk, "bulk-key")).status).toBe(201);
    const again = await post("devices/bulk", bulk, "bulk-key");
    expect(again.status).toBe(200);
    expect(await devicesNamed("idem-bulk-02")).toBe(1);
    const [template] = (await t.call("/api/v1/templates?per_page=1", { token: admin })).body.data;
    const copy = await post(`templates/${template.id}/copy`, {}, "copy-key");
    expect(copy.status).toBe(201);
    expect((await post(`templates/${template.id}/copy`, {}, "copy-key")).body.data.id).toBe(copy.body.data.id);
  });

  it("the same key with another body, or on another route, is a 422 saying so", async () => {
    await post("devices", device("idem-rtr-02"), "key-002");
    const other = await post("devices", device("idem-rtr-03"), "key-002");
    expect(other.status).toBe(422);
    expect(other.body.errors["Idempotency-Key"][0]).toContain("was already used for a different request");
    expect((await post("tags", { name: "idem-other" }, "key-002")).status).toBe(422);
    expect(await devicesNamed("idem-rtr-03")).toBe(0);
  });

  it("keys of different tokens are independent", async () => {
    const other = await t.token();
    const mine = await post("tags", { name: "idem-token-a" }, "shared-key");
    const theirs = await post("tags", { name: "idem-token-b" }, "shared-key", other);
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
  });

  it("a failed first request does not keep its key: the corrected request with the same key runs", async () => {
    const bad = await post("devices", { ...device("idem-rtr-04"), device_ip: "not an address" }, "key-004");
    expect(bad.status).toBe(422);
    const fixed = await post("devices", device("idem-rtr-04"), "key-004");
    expect(fixed.status).toBe(201);
  });

  it("a key whose first request is still running answers 409", async () => {
    const [token] = await t.db.select({ id: idempotencyKeys.tokenId }).from(idempotencyKeys).limit(1);
    // Another process's claim, as it stands while its request runs.
    const now = clock.now();
    await t.db.insert(idempotencyKeys).values({
      tokenId: token!.id,
      key: "running-key",
      route: "POST /api/v1/tags",
      requestHash: await sha256Hex(JSON.stringify({ name: "idem-running" })),
      state: "running",
      createdAt: now,
      expiresAt: new Date(now.getTime() + 60_000),
    });
    const res = await post("tags", { name: "idem-running" }, "running-key");
    expect(res.status).toBe(409);
    expect(res.body.message).toContain("still running");
  });

  it("an answer sealed under an app key since rotated is a 409 saying so, and nothing is created again", async () => {
    const first = await post("devices", device("idem-rtr-rotated"), "key-rotated");
    expect(first.status).toBe(201);
    // What svc key:rotate leaves: the stored answer sealed under the old key, which the new one cannot open.
    const oldKey = await createSecretBox(parseAppKey(generateAppKey()));
    await t.db
      .update(idempotencyKeys)
      .set({ body: await oldKey.encrypt(JSON.stringify(first.body)) })
      .where(eq(idempotencyKeys.key, "key-rotated"));
    const retry = await post("devices", device("idem-rtr-rotated"), "key-rotated");
    expect(retry.status).toBe(409);
    expect(retry.body.message).toContain("can no longer be read");
    expect(await devicesNamed("idem-rtr-rotated")).toBe(1);
  });

  it("a malformed key is a 422 and runs nothing", async () => {
    for (const key of ["", "x".repeat(256), "bad\tkey", "caf\u00e9"]) {
      const res = await t.request("/api/v1/tags", {
        method: "POST",
        token: admin,
        body: { name: "idem-malformed" },
        headers: { "Idempotency-Key": key },
      });
      expect(res.status, JSON.stringify(key)).toBe(422);
    }
    expect((await t.db.select({ n: count() }).from(tags).where(eq(tags.nameKey, "idem-malformed")))[0]!.n).toBe(0);
  });

  it("expires after 24 hours: the same key then creates again, and the old row is swept", async () => {
    const first = await post("tags", { name: "idem-expiring" }, "expiring-key");
    await t.call(`/api/v1/tags/${first.body.data.id}`, { method: "DELETE", token: admin });
    clock.advance(24 * 60 * 60 * 1000 + 1);
    const later = await post("tags", { name: "idem-expiring" }, "expiring-key");
    expect(later.status).toBe(201);
    const rows = await t.db.select({ key: idempotencyKeys.key }).from(idempotencyKeys);
    expect(rows.map((r) => r.key)).toEqual(["expiring-key"]);
  });

  it("without the header nothing changes: a second create is refused as before", async () => {
    expect((await post("tags", { name: "idem-plain" })).status).toBe(201);
    expect((await post("tags", { name: "idem-plain" })).status).toBe(422);
  });

  it("is documented on every create route: the header parameter and the 200", async () => {
    const doc = openApiDocument("v1", "http://netkeep.test") as any;
    const ops = Object.values(doc.paths).flatMap((p: any) => Object.values(p)) as any[];
    const createDevice = ops.find((o) => o.operationId === "createDevice");
    expect(createDevice.parameters.map((p: any) => [p.name, p.in])).toContainEqual(["Idempotency-Key", "header"]);
    expect(Object.keys(createDevice.responses)).toEqual(expect.arrayContaining(["200", "201", "409", "422"]));
    const creates = ops.filter((o) => o.responses?.["201"]);
    expect(creates.length).toBeGreaterThan(10);
    for (const op of creates) {
      expect(
        op.parameters?.some((p: any) => p.name === "Idempotency-Key"),
        op.operationId,
      ).toBe(true);
      expect(op.responses["200"], op.operationId).toBeDefined();
    }
  });
});
