/**
 * Control characters are refused in names (every resource's name-like fields) and, but for tabs and line
 * breaks, in descriptions and notes: 422 naming the field, nothing stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, TEST_PASSWORD, type TestContext } from "../../../test/helpers/app.ts";

let t: TestContext;
let admin: string;

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(() => t.close());

const CODE = "vendor: Cisco\nprompt: '[#>] ?$'\ncommands:\n  - show running-config\n";
let n = 0;
const unique = () => `ctl${++n}x`;

/** Per resource kind: its path and a valid create body, with `over` laid on top. */
const KINDS: {
  path: string;
  body: (over: Record<string, unknown>) => Record<string, unknown>;
  names: string[];
  texts: string[];
}[] = [
  { path: "tags", body: (o) => ({ name: unique(), ...o }), names: ["name"], texts: ["description"] },
  { path: "categories", body: (o) => ({ name: unique(), ...o }), names: ["name"], texts: ["description"] },
  { path: "vendors", body: (o) => ({ name: unique(), ...o }), names: ["name"], texts: [] },
  {
    path: "device-credentials",
    body: (o) => ({ cred_name: unique(), ...o }),
    names: ["cred_name", "cred_username"],
    texts: ["cred_description"],
  },
  { path: "device-profiles", body: (o) => ({ name: unique(), ...o }), names: ["name"], texts: ["description"] },
  {
    path: "roles",
    body: (o) => ({ name: unique(), permissions: ["devices.read"], ...o }),
    names: ["name"],
    texts: ["description"],
  },
  {
    path: "tasks",
    body: (o) => ({ task_name: unique(), task_type: "download_all", task_cron: "0 3 * * *", ...o }),
    names: ["task_name"],
    texts: ["task_desc"],
  },
  { path: "templates", body: (o) => ({ name: unique(), code: CODE, ...o }), names: ["name"], texts: ["description"] },
  {
    path: "devices",
    body: (o) => ({ device_name: `${unique()}-dev`, device_ip: "192.0.2.10", device_vendor: "Cisco", ...o }),
    names: ["device_name", "device_model", "device_username"],
    texts: ["notes"],
  },
  {
    path: "users",
    body: (o) => ({
      username: unique(),
      email: `${unique()}@example.test`,
      password: TEST_PASSWORD,
      role: "viewer",
      ...o,
    }),
    names: ["username", "email"],
    texts: [],
  },
];

/** NUL, an ANSI escape (C0), DEL, a C1 control (NEL) and a line break. */
const CONTROLS = ["\u0000", "\u001b[31m", "\u007f", "\u0085", "\n"];

describe("control characters", () => {
  for (const kind of KINDS) {
    it(`${kind.path}: refused in ${kind.names.join(", ")} with 422 naming the field`, async () => {
      for (const field of kind.names) {
        for (const control of CONTROLS) {
          const res = await t.call(`/api/v1/${kind.path}`, {
            method: "POST",
            token: admin,
            body: kind.body({ [field]: `bad${control}name` }),
          });
          expect(res.status, `${field} ${JSON.stringify(control)}: ${JSON.stringify(res.body)}`).toBe(422);
          expect(Object.keys(res.body.errors), JSON.stringify(res.body)).toContain(field);
        }
      }
      const good = await t.call(`/api/v1/${kind.path}`, { method: "POST", token: admin, body: kind.body({}) });
      expect(good.status, JSON.stringify(good.body)).toBe(201);
    });

    if (kind.texts.length) {
      it(`${kind.path}: ${kind.texts.join(", ")} keep tabs and line breaks but refuse NUL and escapes`, async () => {
        for (const field of kind.texts) {
          const multiLine = await t.call(`/api/v1/${kind.path}`, {
            method: "POST",
            token: admin,
            body: kind.body({ [field]: "line one\r\n\tline two" }),
          });
          expect(multiLine.status, JSON.stringify(multiLine.body)).toBe(201);
          for (const control of ["\u0000", "\u001b[2J", "\u009b"]) {
            const res = await t.call(`/api/v1/${kind.path}`, {
              method: "POST",
              token: admin,
              body: kind.body({ [field]: `text${control}` }),
            });
            expect(res.status, `${field} ${JSON.stringify(control)}`).toBe(422);
            expect(res.body.errors[field]?.[0]).toContain("must not contain control characters");
          }
        }
      });
    }
  }

  it("applies to updates too, and to the names a device or profile gives its tags", async () => {
    const tag = (await t.call("/api/v1/tags", { method: "POST", token: admin, body: { name: "clean-tag" } })).body.data;
    const patched = await t.call(`/api/v1/tags/${tag.id}`, {
      method: "PATCH",
      token: admin,
      body: { name: "dirty\u0000tag" },
    });
    expect(patched.status).toBe(422);
    expect(patched.body.errors.name[0]).toBe(
      "name must not contain control characters (such as NUL, a line break or an escape)",
    );
    const device = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: "tagged-ctl",
        device_ip: "192.0.2.11",
        device_vendor: "Cisco",
        device_tags: ["ok", "no\u0007pe"],
      },
    });
    expect(device.status).toBe(422);
    expect(Object.keys(device.body.errors)).toEqual(["device_tags.1"]);
  });
});
