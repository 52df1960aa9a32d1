import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { activityLog, deviceProfiles, templates } from "../../db/schema/index.ts";
import { seedReferenceData } from "../../runtime/seed.ts";
import { loadBuiltinTemplates } from "../../runtime/builtin-templates.ts";
import { nameKey } from "../../db/name-key.ts";

let t: TestContext;
let admin: string;
beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
});
afterAll(() => t.close());

const CODE = `vendor: Cisco
description: Lab IOS
prompt: '[#>] ?$'
setup:
  - terminal length 0
commands:
  - show running-config
`;

const create = (body: Record<string, unknown>) => t.call("/api/v1/templates", { method: "POST", token: admin, body });
const builtin = async (key: string) =>
  (await t.call(`/api/v1/templates?filter[name]=${key}`, { token: admin })).body.data[0];

describe("templates", () => {
  it("creates, shows, lists, updates and deletes a user template", async () => {
    const created = await create({ name: "lab-ios", code: CODE });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      name: "lab-ios",
      description: "Lab IOS",
      code: CODE,
      builtin: false,
      vendor: "Cisco",
      devices_count: 0,
    });
    const id = created.body.data.id;
    expect(created.headers.get("location")).toMatch(new RegExp(`/api/v1/templates/${id}$`));

    const patched = await t.call(`/api/v1/templates/${id}`, {
      method: "PATCH",
      token: admin,
      body: { description: "mine" },
    });
    expect(patched.body.data).toMatchObject({ description: "mine", code: CODE });
    const put = await t.call(`/api/v1/templates/${id}`, {
      method: "PUT",
      token: admin,
      body: { name: "lab-ios", code: CODE.replace("Cisco", "Cisco Systems") },
    });
    expect(put.body.data).toMatchObject({ description: "Lab IOS", vendor: "Cisco Systems" });

    const list = await t.call("/api/v1/templates?filter[builtin]=false&fields=id,name&per_page=100", { token: admin });
    expect(list.body.data).toContainEqual({ id, name: "lab-ios" });
    expect(list.body.data.map((x: { name: string }) => x.name)).not.toContain("cisco-ios");

    const del = await t.call(`/api/v1/templates/${id}`, { method: "DELETE", token: admin });
    expect(del.body).toEqual({ message: `Template ${id} deleted` });
    const actions = (await t.db.select().from(activityLog).where(eq(activityLog.subjectId, id)))
      .filter((r) => r.subjectType === "template")
      .map((r) => r.action);
    expect(actions).toEqual(["template.create", "template.update", "template.update", "template.delete"]);
  });

  it("reports a bad regular expression, an unknown key and a wrong type with their lines", async () => {
    const code = [
      "vendor: Cisco", //                    1
      "prompt: '([#>]'", //                  2
      "commands:", //                        3
      "  - show running-config", //          4
      "pager:", //                           5
      "  pattern: '--More--'", //            6
      "  answr: ' '", //                     7
      "exec: sometimes", //                  8
    ].join("\n");
    const res = await create({ name: "broken", code });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      "code.prompt": ["code: line 2: key `prompt`: is not a valid regular expression: missing closing ): `([#>]`"],
      "code.pager.answer": ["code: line 5: key `pager.answer`: is required"],
      "code.pager.answr": ["code: line 7: key `pager.answr`: unknown key; use one of: pattern, answer"],
      "code.exec": ["code: line 8: key `exec`: must be true or false"],
    });
    expect(res.body.message).toBe(
      "code: line 2: key `prompt`: is not a valid regular expression: missing closing ): `([#>]` (and 3 more errors)",
    );
  });

  it("takes optional commands as mappings, but not an optional configuration command", async () => {
    const optional = "  - {command: show vtp status, optional: true}";
    expect((await create({ name: "with-optional", code: `${CODE}${optional}\n` })).status).toBe(201);
    const optionalConfig = await create({
      name: "optional-config",
      code: "prompt: '[#>] ?$'\ncommands:\n  - {command: show running-config, optional: true}\n",
    });
    expect(optionalConfig.body.errors).toEqual({
      "code.commands.0.optional": [
        "code: line 3: key `commands.0.optional`: the configuration command cannot be optional",
      ],
    });
    const code = [
      "prompt: '[#>] ?$'",
      "commands:",
      "  - show running-config",
      "  - {commnd: show version}",
      "  - 7",
    ].join("\n");
    const res = await create({ name: "bad-commands", code });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      "code.commands.1.commnd": [
        "code: line 4: key `commands.1.commnd`: unknown key; use one of: command, scp, optional",
      ],
      "code.commands.1.command": ["code: line 4: key `commands.1.command`: is required"],
      "code.commands.2": [
        "code: line 5: key `commands.2`: must be a command, or a mapping with keys command (or scp) and optional",
      ],
    });
  });

  it("checks a secret rule against its example and look-alike, and refuses one that masks a neighbouring word", async () => {
    const rule = (pattern: string, example: string, lookAlike: string) =>
      `${CODE}secrets:\n  - pattern: '${pattern}'\n    replace: '$1 <secret>'\n    example: '${example}'\n    look_alike: '${lookAlike}'\n`;
    const good = rule(
      "^(\\s*security wpa psk set-key ascii \\d) \\S+",
      "  security wpa psk set-key ascii 0 [[Psk-Value-1]]",
      "  security wpa akm psk",
    );
    expect((await create({ name: "secret-examples-ok", code: good })).status).toBe(201);
    // The rule that kept IOS-XE wireless keys in clear: it masks "ascii", and the key stays.
    const leaky = rule("\\b(key) \\S+", "  security wpa psk set-key ascii 0 [[Psk-Value-1]]", "key chain OSPF");
    const res = await create({ name: "secret-examples-leaky", code: leaky });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      "code.secrets.0.example": [
        "code: line 11: key `secrets.0.example`: the rule leaves the secret 'Psk-Value-1' in:   security wpa psk set-key <secret> 0 Psk-Value-1",
        "code: line 11: key `secrets.0.example`: the rule masks 'security wpa psk set-key ascii 0', which is not marked as secret:   security wpa psk set-key <secret> 0 Psk-Value-1",
      ],
      "code.secrets.0.look_alike": [
        "code: line 12: key `secrets.0.look_alike`: the rule changes it, but it holds no secret: key <secret> OSPF",
      ],
    });
  });

  it("reports YAML that is not a template at all", async () => {
    const syntax = await create({ name: "broken", code: "commands: [show run\nprompt: x" });
    expect(syntax.status).toBe(422);
    expect(syntax.body.errors.code[0]).toMatch(/^code: line \d+: not valid YAML: /);
    const list = await create({ name: "broken", code: "- show run" });
    expect(list.body.errors.code).toEqual([
      "code: line 1: the template must be a YAML mapping of keys (vendor, description, protocol, port, ...)",
    ]);
    const missing = await create({ name: "broken", code: "vendor: x\n" });
    expect(missing.body.errors["code.commands"]).toEqual(["code: line 1: key `commands`: is required"]);
    const nested = await create({
      name: "broken",
      code: "prompt: x\ncommands: [a]\nsecrets:\n  - pattern: '(a)'\n    replace: '$2'\n",
    });
    expect(nested.body.errors).toEqual({
      "code.secrets.0.replace": [
        "code: line 5: key `secrets.0.replace`: refers to group $2, but the pattern has 1 group",
      ],
    });
    expect((await create({ name: "x", code: "" })).body.errors.code).toEqual(["code must not be empty"]);
  });

  it("seeds the built-in templates read-only and copies them", async () => {
    const list = await t.call("/api/v1/templates?filter[builtin]=true&per_page=100", { token: admin });
    expect(list.body.data.map((x: { name: string }) => x.name)).toEqual(
      loadBuiltinTemplates()
        .map((b) => b.key)
        .sort(),
    );
    const ios = await builtin("cisco-ios");
    expect(ios).toMatchObject({
      builtin: true,
      vendor: "Cisco",
      description: "Cisco IOS and IOS-XE (Catalyst, ISR, ASR 1000, C9800)",
    });

    const expected = `Built-in template 'cisco-ios' is read-only; copy it with POST /api/v1/templates/${ios.id}/copy and change the copy`;
    for (const [method, body] of [
      ["PATCH", { description: "x" }],
      ["PUT", { name: "cisco-ios", code: CODE }],
      ["DELETE", undefined],
    ] as const) {
      const res = await t.call(`/api/v1/templates/${ios.id}`, { method, token: admin, body });
      expect(res, method).toMatchObject({ status: 403, body: { message: expected } });
    }
    expect(
      (await t.call("/api/v1/templates/bulk", { method: "DELETE", token: admin, body: { ids: [ios.id] } })).status,
    ).toBe(403);

    const copy = await t.call(`/api/v1/templates/${ios.id}/copy`, { method: "POST", token: admin });
    expect(copy.status).toBe(201);
    expect(copy.body.data).toMatchObject({
      name: "cisco-ios (copy)",
      builtin: false,
      code: ios.code,
      description: ios.description,
    });
    expect(copy.headers.get("location")).toMatch(new RegExp(`/api/v1/templates/${copy.body.data.id}$`));
    const second = await t.call(`/api/v1/templates/${ios.id}/copy`, { method: "POST", token: admin, body: {} });
    expect(second.body.data.name).toBe("cisco-ios (copy 2)");
    const named = await t.call(`/api/v1/templates/${ios.id}/copy`, {
      method: "POST",
      token: admin,
      body: { name: "branch-ios" },
    });
    expect(named.body.data.name).toBe("branch-ios");
    const clash = await t.call(`/api/v1/templates/${ios.id}/copy`, {
      method: "POST",
      token: admin,
      body: { name: "BRANCH-IOS" },
    });
    expect(clash).toMatchObject({ status: 422, body: { errors: { name: ["name 'BRANCH-IOS' is already taken"] } } });
    expect((await t.call("/api/v1/templates/99999/copy", { method: "POST", token: admin })).status).toBe(404);

    const edited = await t.call(`/api/v1/templates/${copy.body.data.id}`, {
      method: "PATCH",
      token: admin,
      body: { description: "mine now" },
    });
    expect(edited.body.data.description).toBe("mine now");
  });

  it("re-seeding on upgrade rewrites built-ins, keeps user templates, and names a clashing new built-in apart", async () => {
    // Its own database: what an upgrade leaves (a built-in that is no longer shipped kept as a user template) is
    // not the fixture the other tests read.
    const x = await createTestContext();
    const token = await x.token();
    const builtin = async (key: string) =>
      (await x.call(`/api/v1/templates?filter[name]=${key}`, { token })).body.data[0];
    const shipped = loadBuiltinTemplates();
    const user = (
      await x.call("/api/v1/templates", { method: "POST", token, body: { name: "Netgate-NextGen", code: CODE } })
    ).body.data;
    const vyos = await builtin("vyos");
    const upgrade = [
      ...shipped.map((b) =>
        b.key === "vyos"
          ? {
              ...b,
              code: b.code.replace("description: VyOS 1.3 and later", "description: VyOS 1.4"),
              description: "VyOS 1.4",
            }
          : b,
      ),
      {
        key: "netgate-nextgen",
        code: CODE,
        description: "Lab IOS",
        vendors: [],
        inventoryNames: { oxidized: [], rancid: [] },
      },
    ].filter((b) => b.key !== "linux-generic");
    await seedReferenceData(x.db, x.clock, upgrade);

    const after = (await x.call(`/api/v1/templates/${vyos.id}`, { token })).body.data;
    expect(after).toMatchObject({ builtin: true, description: "VyOS 1.4" });
    expect(after.code).toContain("description: VyOS 1.4\n");
    expect((await x.call(`/api/v1/templates/${user.id}`, { token })).body.data).toMatchObject({
      name: "Netgate-NextGen",
      builtin: false,
      code: CODE,
    });
    expect(await builtin("netgate-nextgen (built-in)")).toMatchObject({ builtin: true });
    // No longer shipped: kept as a user template, so devices using it still work.
    expect(await builtin("linux-generic")).toMatchObject({ builtin: false });

    await seedReferenceData(x.db, x.clock, shipped);
    expect((await x.call(`/api/v1/templates/${vyos.id}`, { token })).body.data.description).toBe("VyOS 1.3 and later");
    const [row] = await x.db.select().from(templates).where(eq(templates.builtinKey, "netgate-nextgen"));
    expect(row).toBeUndefined();
    await x.close();
  });

  it("refuses to delete a template devices use, and detaches it from profiles", async () => {
    const tpl = (await create({ name: "in-use", code: CODE })).body.data;
    const dev = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: { device_name: "tpl-user-1", device_ip: "192.0.2.50", device_vendor: "Cisco", device_template_id: tpl.id },
    });
    expect(dev.status).toBe(201);
    expect((await t.call(`/api/v1/templates/${tpl.id}`, { token: admin })).body.data.devices_count).toBe(1);
    const refused = await t.call(`/api/v1/templates/${tpl.id}`, { method: "DELETE", token: admin });
    expect(refused).toMatchObject({
      status: 409,
      body: { message: `Template ${tpl.id} is used by 1 device; move them to another template first` },
    });

    await t.call(`/api/v1/devices/${dev.body.data.id}`, { method: "DELETE", token: admin });
    const now = new Date();
    const [profile] = await t.db
      .insert(deviceProfiles)
      .values({
        name: "uses in-use",
        nameKey: nameKey("uses in-use"),
        templateId: tpl.id,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    const del = await t.call(`/api/v1/templates/${tpl.id}`, { method: "DELETE", token: admin });
    expect(del.body.message).toBe(`Template ${tpl.id} deleted; cleared from 1 device profile`);
    expect(
      (await t.db.select().from(deviceProfiles).where(eq(deviceProfiles.id, profile!.id)))[0]!.templateId,
    ).toBeNull();
  });

  it("lists with filters, search, sort and pages", async () => {
    const page = await t.call("/api/v1/templates?filter[builtin]=true&sort=-name&per_page=2&page=2&fields=name", {
      token: admin,
    });
    const names = loadBuiltinTemplates()
      .map((b) => b.key)
      .sort()
      .reverse();
    expect(page.body.data).toEqual([{ name: names[2] }, { name: names[3] }]);
    expect(page.body.meta).toMatchObject({ current_page: 2, per_page: 2, total: names.length });
    const search = await t.call("/api/v1/templates?search=show%20configuration%20running", { token: admin });
    expect(search.body.data.map((x: { name: string }) => x.name)).toEqual(["netgate-tnsr", "riverbed-rios"]);
    expect((await t.call("/api/v1/templates?filter[vendorx]=a", { token: admin })).status).toBe(422);
    expect(
      (await t.call("/api/v1/templates?filter[builtin]=maybe", { token: admin })).body.errors["filter[builtin]"],
    ).toEqual(["filter[builtin] must be true or false"]);
  });

  it("needs templates.read / templates.write", async () => {
    const other = await t.token(["devices.read"]);
    expect((await t.call("/api/v1/templates", { token: other })).status).toBe(403);
    const reader = await t.token(["templates.read"]);
    expect((await t.call("/api/v1/templates", { token: reader })).status).toBe(200);
    const ios = await builtin("cisco-ios");
    expect((await t.call(`/api/v1/templates/${ios.id}/copy`, { method: "POST", token: reader })).status).toBe(403);
    expect(
      (await t.call("/api/v1/templates", { method: "POST", token: reader, body: { name: "n", code: CODE } })).status,
    ).toBe(403);
  });
});
