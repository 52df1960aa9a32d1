import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "./app.ts";
import { checkAgainstContract } from "./contract.ts";

let t: TestContext;
let token: string;
beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
});
afterAll(() => t.close());

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const url = (path: string) => new URL(`http://netkeep.test${path}`);

describe("the API contract check", () => {
  it("refuses a status the operation does not document", async () => {
    await expect(
      checkAgainstContract("GET", url("/api/v1/tags"), json(500, { message: "Server error" })),
    ).rejects.toThrow(/answered 500, which its description does not list/);
  });

  it("refuses a body its documented schema does not accept", async () => {
    await expect(
      checkAgainstContract("GET", url("/api/v1/tags/1"), json(200, { data: { id: "one" } })),
    ).rejects.toThrow(/documented schema refuses: data\.id/);
    await expect(
      checkAgainstContract(
        "GET",
        url("/api/v1/tags/1"),
        new Response("hi", { status: 200, headers: { "content-type": "text/plain" } }),
      ),
    ).rejects.toThrow(/as text\/plain; its description says application\/json/);
  });

  it("takes static paths before parameters, and leaves the router's own 404 and 405 answers alone", async () => {
    await expect(checkAgainstContract("GET", url("/api/v2/devices/summary"), json(200, { data: {} }))).rejects.toThrow(
      /GET \/api\/v2\/devices\/summary /,
    );
    await expect(
      checkAgainstContract("GET", url("/api/v1/no-such-thing"), json(404, { message: "Not found" })),
    ).resolves.toBeUndefined();
  });

  it("holds every answer the test app gives: a task that never finished a run answers run: null, as its description says", async () => {
    const task = await t.call("/api/v1/tasks", {
      method: "POST",
      token,
      body: { task_name: "never-run", task_type: "download_all", task_cron: "0 4 * * *" },
    });
    expect(task.status).toBe(201);
    const failures = await t.call(`/api/v1/tasks/${task.body.data.id}/last-run/failures`, { token });
    expect(failures.body).toEqual({ data: { run: null, failures: [] } });
  });
});
