import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { devices } from "../../db/schema/index.ts";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";

let t: TestContext;
let token: string;
beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
});
afterAll(() => t.close());

const MiB = 1024 * 1024;

/** A body sent in chunks, without Content-Length, as a client streaming it would. */
function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + 64 * 1024));
      offset += 64 * 1024;
    },
  });
}

async function send(path: string, method: string, body: BodyInit, headers: Record<string, string> = {}) {
  const res = await t.app.request(
    new Request(`http://netkeep.test${path}`, {
      method,
      body,
      headers: { apitoken: token, "content-type": "application/json", ...headers },
      duplex: "half",
    } as RequestInit),
  );
  return { status: res.status, body: await res.json() };
}

/** 1,200,000 ids: valid JSON that the bulk schema would refuse (at most 1000) with a 422, were it parsed. */
const hugeIdList = JSON.stringify({ ids: Array.from({ length: 200_000 }, (_, i) => 100_000 + i) });

describe("request body limits", () => {
  it("refuse a body over the route's limit with 413 naming the limit, before it is parsed (Content-Length)", async () => {
    expect(hugeIdList.length).toBeGreaterThan(MiB);
    const res = await send("/api/v1/tags/bulk", "DELETE", hugeIdList, { "content-length": String(hugeIdList.length) });
    expect(res.status).toBe(413);
    expect(res.body.message).toMatch(/larger than 1 MiB/);
  });

  it("refuse a chunked body over the limit the same way", async () => {
    const res = await send("/api/v1/tags/bulk", "DELETE", chunked(hugeIdList));
    expect(res.status).toBe(413);
    expect(res.body.message).toMatch(/larger than 1 MiB/);
    // Malformed past the limit: still 413, as nothing parses it.
    const malformed = await send("/api/v1/tags", "POST", chunked(`{"name": "${"x".repeat(MiB)}`));
    expect(malformed.status).toBe(413);
  });

  it("let a body under the limit through to validation", async () => {
    const ids = JSON.stringify({ ids: Array.from({ length: 1001 }, (_, i) => i + 1) });
    const res = await send("/api/v1/tags/bulk", "DELETE", chunked(ids));
    expect(res.status).toBe(422);
    expect(res.body.errors.ids).toEqual(["ids must have at most 1000 items"]);
  });

  it("give bulk device creation a larger limit than one record (16 MiB)", async () => {
    const item = {
      device_name: "bulk-device",
      device_ip: "192.0.2.1",
      device_vendor: "Cisco",
      notes: "n".repeat(2000),
    };
    const body = JSON.stringify({ devices: Array.from({ length: 1001 }, () => item) });
    expect(body.length).toBeGreaterThan(MiB);
    const res = await send("/api/v1/devices/bulk", "POST", chunked(body));
    expect(res.status, "parsed and validated, not refused for size").toBe(422);
    const over = await send("/api/v1/devices/bulk", "POST", chunked(" ".repeat(16 * MiB + 1)));
    expect(over.status).toBe(413);
    expect(over.body.message).toMatch(/larger than 16 MiB/);
  });

  it("are documented on every operation with a body, with 413 and (for JSON bodies) 415", async () => {
    const { openApiDocument, API_VERSIONS } = await import("../../adapters/api/versions.ts");
    const missing: string[] = [];
    let jsonBodies = 0;
    for (const version of API_VERSIONS) {
      const doc = openApiDocument(version, "http://netkeep.test") as { paths: Record<string, Record<string, any>> };
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          if (!op.requestBody) continue;
          const where = `${method.toUpperCase()} ${path}`;
          if (typeof op["x-body-limit"] !== "number") missing.push(`${where}: x-body-limit`);
          if (!op.responses["413"]) missing.push(`${where}: 413`);
          if (op.requestBody.content["application/json"]) {
            jsonBodies++;
            if (!op.responses["415"]) missing.push(`${where}: 415`);
          }
        }
      }
    }
    expect(jsonBodies).toBeGreaterThan(70);
    expect(missing).toEqual([]);
  });
});

describe("request body encoding", () => {
  it("refuses JSON that is not UTF-8 with a 400 saying so, and stores nothing", async () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"name": "caf'),
      0xe9,
      ...new TextEncoder().encode('-latin1"}'),
    ]);
    const res = await send("/api/v1/tags", "POST", bytes);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/not valid UTF-8/);
    const list = await t.call("/api/v1/tags?search=latin1", { token });
    expect(list.body.data).toEqual([]);
  });

  it("takes UTF-8 beyond ASCII as it is", async () => {
    const res = await send("/api/v1/tags", "POST", new TextEncoder().encode('{"name": "café-ünïcode"}'));
    expect(res.status).toBe(201);
    expect(res.body.data.name).toBe("café-ünïcode");
  });
});

describe("request body nesting", () => {
  it("refuses a body nested 5,000 levels deep (30 KB) with a 400 saying so, before anything walks it", async () => {
    const deep = `{"name": ${"[".repeat(5000)}${"]".repeat(5000)}}`;
    const res = await send("/api/v1/tags", "POST", deep);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/nests objects and arrays more than 64 levels deep/);
    // Brackets inside strings are text, not nesting: a name made of them is taken.
    const brackets = "[{".repeat(100);
    const named = await send("/api/v1/tags", "POST", JSON.stringify({ name: "brackets", description: brackets }));
    expect(named.status).toBe(201);
    // An escaped quote does not end the string early.
    const escaped = await send(
      "/api/v1/tags",
      "POST",
      JSON.stringify({ name: "escaped", description: `q\\"${brackets}` }),
    );
    expect(escaped.status).toBe(201);
  });
});

describe("an empty body where the body is optional", () => {
  it("is no body: a host-key reset sent with Content-Type: application/json and nothing else forgets the key", async () => {
    const created = await t.call("/api/v1/devices", {
      method: "POST",
      token,
      body: { device_name: "hostkey-dev", device_ip: "192.0.2.7", device_vendor: "Cisco" },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.id as number;
    const pinned = "SHA256:" + "B".repeat(43);
    await t.db.update(devices).set({ hostKeyFingerprint: pinned }).where(eq(devices.id, id));
    for (const rawBody of ["", "  \n"]) {
      const res = await t.call(`/api/v1/devices/${id}/host-key/reset`, {
        method: "POST",
        token,
        rawBody,
        headers: { "content-type": "application/json" },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.host_key_fingerprint).toBeNull();
      await t.db.update(devices).set({ hostKeyFingerprint: pinned }).where(eq(devices.id, id));
    }
  });

  it("is still malformed where the body is required", async () => {
    const res = await t.call("/api/v1/tags", {
      method: "POST",
      token,
      rawBody: "",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
  });
});
