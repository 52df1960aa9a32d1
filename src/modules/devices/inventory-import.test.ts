import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, isNotNull } from "drizzle-orm";
import { createTestContext, TEST_APP_KEY, type TestContext } from "../../../test/helpers/app.ts";
import { openSecretBox } from "../../runtime/bootstrap.ts";
import { openDatabase, type Database } from "../../db/client.ts";
import { devices, templates, vendors } from "../../db/schema/index.ts";
import { importInventory, parseOxidized, parseRancid, DEFAULT_OXIDIZED_MAP } from "./inventory-import.ts";
import { inventoryModels, type InventoryModels } from "../templates/index.ts";
import { BUILTIN_TEMPLATES_DIR, loadBuiltinTemplates } from "../../runtime/builtin-templates.ts";
import { svc } from "../../../test/helpers/svc.ts";
import { nameKey } from "../../db/name-key.ts";

const fixture = (tool: string) => fileURLToPath(new URL(`../../../test/fixtures/${tool}/router.db`, import.meta.url));

/** The built-in template keys: the YAML files shipped in collector/templates, independent of the mapping table under test. */
const TEMPLATE_KEYS = readdirSync(fileURLToPath(new URL("../../../collector/templates/", import.meta.url)))
  .filter((f) => f.endsWith(".yaml"))
  .map((f) => f.slice(0, -".yaml".length));
/** The model table the shipped templates' inventory_names make. */
const MODELS = inventoryModels(loadBuiltinTemplates());
/** What each model in the fixtures must become: vendor and template key. */
const OXIDIZED_EXPECTED: Record<string, [string, string]> = {
  ios: ["Cisco", "cisco-ios"],
  iosxe: ["Cisco", "cisco-ios"],
  iosxr: ["Cisco", "cisco-iosxr"],
  nxos: ["Cisco", "cisco-nxos"],
  asa: ["Cisco", "cisco-asa"],
  junos: ["Juniper", "juniper-junos"],
  eos: ["Arista", "arista-eos"],
  routeros: ["MikroTik", "mikrotik-routeros"],
  fortios: ["Fortinet", "fortinet-fortios"],
  aoscx: ["Aruba", "aruba-aoscx"],
  arubainstant: ["Aruba", "aruba-instant"],
  comware: ["HPE", "hpe-comware"],
  procurve: ["HPE", "hpe-procurve"],
  aosw: ["Aruba", "aruba-aosw"],
  netgear: ["Netgear", "netgear"],
  vyos: ["VyOS", "vyos"],
  opnsense: ["OPNsense", "opnsense"],
  tnsr: ["Netgate", "netgate-tnsr"],
  linuxgeneric: ["Linux", "linux-generic"],
  aireos: ["Cisco", "cisco-aireos"],
  apc_aos: ["APC", "apc-nmc"],
  apcaos: ["APC", "apc-nmc"],
};
const RANCID_EXPECTED: Record<string, [string, string]> = {
  cisco: ["Cisco", "cisco-ios"],
  "cisco-nx": ["Cisco", "cisco-nxos"],
  "cisco-xr": ["Cisco", "cisco-iosxr"],
  juniper: ["Juniper", "juniper-junos"],
  arista: ["Arista", "arista-eos"],
  mikrotik: ["MikroTik", "mikrotik-routeros"],
  fortigate: ["Fortinet", "fortinet-fortios"],
  hp: ["HPE", "hpe-procurve"],
  h3c: ["H3C", "hpe-comware"],
  "cisco-wlc4": ["Cisco", "cisco-aireos"],
  "cisco-wlc5": ["Cisco", "cisco-aireos"],
};

/** The fixture's device lines (not comments, not blank), numbered as an editor numbers them. */
function fixtureLines(tool: string) {
  const text = readFileSync(fixture(tool), "utf8");
  const all = text.split("\n");
  expect(all.at(-1)).toBe("");
  expect(all.length - 1).toBe(200);
  return all
    .slice(0, -1)
    .map((t, i) => ({ line: i + 1, text: t }))
    .filter((l) => l.text.trim() !== "" && !l.text.trim().startsWith("#"));
}

/** Broken lines, found by their text; every other device line must be imported. */
const OXIDIZED_BROKEN: [string, RegExp][] = [
  ["ams1-acc-spare01", /^too few fields: the line has 1 field, but the map puts model in field 2 \(counting from 0\)$/],
  ["fra1-acc-spare02:", /^too few fields: the line has 2 fields/],
  ["fra1-lb-f501:", /^model 'bigip' is not a known Oxidized model; known: .*\bios\b.*\bjunos\b/],
  ["lon1-fw-fw03:", /^device_ip must be an IPv4 address, an IPv6 address or a hostname$/],
  ["AMS1-CORE-RTR01:", /^device_name 'AMS1-CORE-RTR01' repeats line 5 of this file$/],
  ["sw9:", /^device_name must be at least 5 characters$/],
  ["sin1 edge rtr03:", /^device_name must not contain whitespace$/],
  ["syd1-vpn-fw01:", /^too many fields: the line has 7, the map uses 6/],
  ["jnb1-acc-sw09:", /^model is empty; known: /],
];
const RANCID_BROKEN: [string, RegExp][] = [
  ["ams1-acc-old01.", /^too few fields: RANCID lines are name;type;state$/],
  ["fra1-lb-f501.", /^type 'bigip' is not a known RANCID device type; known: .*\bcisco-nx\b/],
  ["LON1-CORE-RTR01.", /^device_name 'LON1-CORE-RTR01.net.example.com' repeats line \d+ of this file$/],
  ["sw12;", /^device_name must be at least 5 characters$/],
  ["nyc1_edge_rtr09.", /^device_ip must be an IPv4 address, an IPv6 address or a hostname$/],
  // The name is the address too, so both rules fail.
  [
    "sin1 dist sw03;",
    /^device_name must not contain whitespace; device_ip must be an IPv4 address, an IPv6 address or a hostname$/,
  ],
  ["syd1-acc-sw09.", /^type is empty; known: /],
];

/** Splits svc's report into its summary lines and its per-line entries. */
function readReport(stdout: string) {
  const lines = stdout.trimEnd().split("\n");
  const entries = lines.slice(2).map((l) => {
    const m = /^line (\d+):(?: (.+?):)? (rejected|warning|created|skipped): (.*)$/.exec(l);
    expect(m, l).not.toBeNull();
    return { line: Number(m![1]), name: m![2] ?? "", kind: m![3]!, text: m![4]! };
  });
  return { summary: lines.slice(0, 2), entries };
}

describe("inventory file parsing", () => {
  it("reads Oxidized lines through the map: missing optional fields are empty, # and blank lines are skipped", () => {
    const parsed = parseOxidized(
      "# c\n\nrtr-one:10.0.0.1:ios:u:p:e\r\nrtr-two:10.0.0.2:junos\n   \nrtr-three::eos:u\n",
      { map: DEFAULT_OXIDIZED_MAP, delimiter: ":" },
    );
    expect(parsed.lines).toBe(6);
    expect(parsed.rejected).toEqual([]);
    expect(
      parsed.entries.map(({ line, name, ip, model, username, password, enable }) => ({
        line,
        name,
        ip,
        model,
        username,
        password,
        enable,
      })),
    ).toEqual([
      { line: 3, name: "rtr-one", ip: "10.0.0.1", model: "ios", username: "u", password: "p", enable: "e" },
      {
        line: 4,
        name: "rtr-two",
        ip: "10.0.0.2",
        model: "junos",
        username: undefined,
        password: undefined,
        enable: undefined,
      },
      { line: 6, name: "rtr-three", ip: "", model: "eos", username: "u", password: undefined, enable: undefined },
    ]);
  });

  it("follows another map and delimiter, e.g. Oxidized's own default name:model, or groups as tags", () => {
    const byName = parseOxidized("edge-rtr-1:routeros\n", { map: { name: 0, model: 1 }, delimiter: ":" });
    expect(byName.entries[0]).toMatchObject({ name: "edge-rtr-1", ip: "", model: "routeros" });
    const grouped = parseOxidized("ams;core-rtr-1;10.0.0.1;ios\n", {
      map: { group: 0, name: 1, ip: 2, model: 3 },
      delimiter: ";",
    });
    expect(grouped.entries[0]).toMatchObject({ name: "core-rtr-1", ip: "10.0.0.1", model: "ios", group: "ams" });
  });

  it("reads RANCID 3 and RANCID 2 lines: state decides enabled, anything after it is the comment", () => {
    const parsed = parseRancid(
      "a-router.example.net;cisco;up;core; rack 4\nb-router.example.net:juniper:down\nc-router.example.net;arista;testing\n",
    );
    expect(
      parsed.entries.map(({ name, model, enabled, notes, warnings }) => ({ name, model, enabled, notes, warnings })),
    ).toEqual([
      { name: "a-router.example.net", model: "cisco", enabled: true, notes: "core; rack 4", warnings: [] },
      { name: "b-router.example.net", model: "juniper", enabled: false, notes: undefined, warnings: [] },
      {
        name: "c-router.example.net",
        model: "arista",
        enabled: false,
        notes: undefined,
        warnings: ["state 'testing' is not 'up': imported disabled, as RANCID skips it"],
      },
    ]);
  });
});

describe("the model table", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext();
  });
  afterAll(() => t.close());

  it("names only seeded vendors and the built-in template keys", async () => {
    const seeded = new Set((await t.db.select({ name: vendors.name }).from(vendors)).map((v) => v.name));
    for (const { vendor, template } of [...MODELS.oxidized.values(), ...MODELS.rancid.values()]) {
      expect(seeded.has(vendor), vendor).toBe(true);
      expect(TEMPLATE_KEYS).toContain(template);
    }
    for (const [model, [vendor, template]] of Object.entries(OXIDIZED_EXPECTED))
      expect(MODELS.oxidized.get(model), model).toEqual({ vendor, template });
    for (const [type, [vendor, template]] of Object.entries(RANCID_EXPECTED))
      expect(MODELS.rancid.get(type), type).toEqual({ vendor, template });
  });

  it("maps the names the templates' YAML gives (inventory_names), and only those", async () => {
    const dir = mkdtempSync(join(tmpdir(), "netkeep-templates-"));
    try {
      for (const file of readdirSync(BUILTIN_TEMPLATES_DIR).filter((f) => f.endsWith(".yaml"))) {
        let code = readFileSync(join(BUILTIN_TEMPLATES_DIR, file), "utf8");
        // vyos gains a model name of the test's own; juniper-junos no longer claims junos.
        if (file === "vyos.yaml") code = code.replace(/^ {2}oxidized: \[/m, "  oxidized: [labrouter-os, ");
        if (file === "juniper-junos.yaml") code = code.replace(/^ {2}oxidized: \[junos, /m, "  oxidized: [");
        writeFileSync(join(dir, file), code);
      }
      const models: InventoryModels = inventoryModels(loadBuiltinTemplates(dir));
      const ctx = {
        db: t.db,
        secrets: t.secrets,
        actor: { system: "test" },
        scope: { all: true as const },
        abilities: "all" as const,
        now: new Date(),
      };
      const parsed = parseOxidized("yaml-rtr-01:10.9.1.1:LabRouter-OS:u:p\nyaml-rtr-02:10.9.1.2:junos:u:p\n", {
        map: DEFAULT_OXIDIZED_MAP,
        delimiter: ":",
      });
      const report = await importInventory(ctx, "oxidized", parsed, { dryRun: true, models });
      expect(report.outcomes[0]).toEqual({ line: 1, name: "yaml-rtr-01", outcome: "created", warnings: [] });
      expect(report.outcomes[1]).toMatchObject({ line: 2, outcome: "rejected" });
      expect(report.outcomes[1]!.reason).toMatch(
        /^model 'junos' is not a known Oxidized model; known: .*\blabrouter-os\b/,
      );
      expect(models.oxidized.get("labrouter-os")).toEqual({ vendor: "VyOS", template: "vyos" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("imports a device without a template, with a warning, when its built-in template is not installed", async () => {
    await t.db.update(templates).set({ builtinKey: null }).where(eq(templates.builtinKey, "juniper-junos"));
    const now = new Date();
    await t.db
      .insert(templates)
      .values({
        name: "Cisco IOS (test)",
        nameKey: nameKey("Cisco IOS (test)"),
        code: "name: test\n",
        builtinKey: "cisco-ios",
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing();
    const [ios] = await t.db.select({ id: templates.id }).from(templates).where(eq(templates.builtinKey, "cisco-ios"));
    const parsed = parseOxidized("lab-rtr-01:10.9.0.1:ios:u:p\nlab-rtr-02:10.9.0.2:junos:u:p\n", {
      map: DEFAULT_OXIDIZED_MAP,
      delimiter: ":",
    });
    const ctx = {
      db: t.db,
      secrets: t.secrets,
      actor: { system: "test" },
      scope: { all: true as const },
      abilities: "all" as const,
      now,
    };
    const report = await importInventory(ctx, "oxidized", parsed, { dryRun: false, models: MODELS });
    expect(report.outcomes).toEqual([
      { line: 1, name: "lab-rtr-01", outcome: "created", warnings: [] },
      {
        line: 2,
        name: "lab-rtr-02",
        outcome: "created",
        warnings: ["template 'juniper-junos' is not installed: imported without a connection template"],
      },
    ]);
    const rows = await t.db.select().from(devices);
    expect(rows.map((r) => [r.name, r.templateId])).toEqual([
      ["lab-rtr-01", ios!.id],
      ["lab-rtr-02", null],
    ]);
  });
});

describe.each([
  { tool: "oxidized", broken: OXIDIZED_BROKEN, expected: OXIDIZED_EXPECTED },
  { tool: "rancid", broken: RANCID_BROKEN, expected: RANCID_EXPECTED },
])("svc import:$tool with a 200-line router.db", ({ tool, broken, expected }) => {
  let root: string;
  let env: Record<string, string>;
  let database: Database;
  const run = (...args: string[]) => svc([`import:${tool}`, fixture(tool), ...args], env);
  const lines = fixtureLines(tool);
  const brokenLines = new Map(
    broken.map(([prefix, reason]) => {
      const found = lines.filter((l) => l.text.startsWith(prefix));
      expect(found, prefix).toHaveLength(1);
      return [found[0]!.line, reason] as const;
    }),
  );
  const good = lines.filter((l) => !brokenLines.has(l.line));
  /** Independent reading of a good line: name, address, model, state, credentials. */
  const read = (text: string) => {
    if (tool === "oxidized") {
      const [name, ip, model, username, password, enable] = text.split(":");
      return { name: name!, ip: ip!, model: model!, enabled: true, username, password, enable, notes: "" };
    }
    const sep = text.includes(";") ? ";" : ":";
    const [name, type, state, ...comment] = text.split(sep);
    return {
      name: name!,
      ip: name!,
      model: type!,
      enabled: state === "up",
      username: undefined,
      password: undefined,
      enable: undefined,
      notes: comment.join(sep),
    };
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), `netkeep-${tool}-`));
    env = { STORAGE_DIR: join(root, "storage"), APP_KEY: TEST_APP_KEY };
  });
  afterAll(() => {
    database?.client.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("reports in a dry run what it would do, line by line, and changes nothing", async () => {
    const dry = await run("--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    const { summary, entries } = readReport(dry.stdout);
    expect(summary).toEqual([
      `Read router.db: 200 lines, ${lines.length} device lines, ${200 - lines.length} comment or blank lines.`,
      `Would create ${good.length} devices, would skip 0 already in netkeep, would reject ${brokenLines.size} lines. Dry run: nothing was changed.`,
    ]);
    expect(entries.filter((e) => e.kind === "rejected").map((e) => e.line)).toEqual(
      [...brokenLines.keys()].sort((a, b) => a - b),
    );
    database = await openDatabase(`file:${env.STORAGE_DIR}/netkeep.db`);
    expect(await database.db.select().from(devices)).toEqual([]);
  });

  it("imports every good line with its vendor, template, address, state and credentials, and reports every broken one with the reason", async () => {
    const real = await run();
    expect(real.code, real.stderr).toBe(0);
    expect(real.stderr).toBe("");
    const { summary, entries } = readReport(real.stdout);
    expect(summary[1]).toBe(
      `Created ${good.length} devices, skipped 0 already in netkeep, rejected ${brokenLines.size} lines.`,
    );

    const rejected = entries.filter((e) => e.kind === "rejected");
    expect(rejected.map((e) => e.line)).toEqual([...brokenLines.keys()].sort((a, b) => a - b));
    for (const e of rejected) expect(e.text, `line ${e.line}`).toMatch(brokenLines.get(e.line)!);

    const installed = new Map(
      (
        await database.db
          .select({ id: templates.id, key: templates.builtinKey })
          .from(templates)
          .where(isNotNull(templates.builtinKey))
      ).map((r) => [r.key!, r.id]),
    );
    const vendorIds = new Map((await database.db.select().from(vendors)).map((v) => [v.name, v.id]));
    const stored = new Map((await database.db.select().from(devices)).map((d) => [d.name, d]));
    expect(stored.size).toBe(good.length);
    const secrets = await openSecretBox(TEST_APP_KEY);
    const expectedWarnings: number[] = [];
    for (const { line, text } of good) {
      const want = read(text);
      const [vendor, templateKey] = expected[want.model]!;
      const d = stored.get(want.name)!;
      expect(d, want.name).toBeDefined();
      expect(
        {
          ip: d.ip,
          vendorId: d.vendorId,
          templateId: d.templateId,
          enabled: d.enabled,
          username: d.username,
          notes: d.notes,
          credId: d.credId,
        },
        want.name,
      ).toEqual({
        ip: want.ip,
        vendorId: vendorIds.get(vendor),
        templateId: (templateKey && installed.get(templateKey)) ?? null,
        enabled: want.enabled,
        username: want.username ?? "",
        notes: want.notes,
        credId: null,
      });
      expect(d.passwordEnc === null ? undefined : await secrets.decrypt(d.passwordEnc)).toBe(want.password);
      expect(d.enablePasswordEnc === null ? undefined : await secrets.decrypt(d.enablePasswordEnc)).toBe(want.enable);
      if (
        !templateKey ||
        !installed.has(templateKey) ||
        (tool === "rancid" && !["up", "down"].includes(text.split(/[;:]/)[2]!))
      )
        expectedWarnings.push(line);
      if (want.password) expect(real.stdout + real.stderr).not.toContain(want.password);
    }
    expect(entries.filter((e) => e.kind === "warning").map((e) => e.line)).toEqual(expectedWarnings);
  });

  it("imports nothing twice when run again: every good line is skipped, the broken ones are reported again", async () => {
    const before = await database.db.select().from(devices);
    const again = await run("--verbose");
    expect(again.code, again.stderr).toBe(0);
    const { summary, entries } = readReport(again.stdout);
    expect(summary[1]).toBe(
      `Created 0 devices, skipped ${good.length} already in netkeep, rejected ${brokenLines.size} lines.`,
    );
    expect(entries.filter((e) => e.kind === "skipped").map((e) => e.line)).toEqual(good.map((l) => l.line));
    expect(await database.db.select().from(devices)).toEqual(before);
  });
});

describe("svc import commands refuse what they cannot use", () => {
  let root: string;
  let env: Record<string, string>;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "netkeep-import-errors-"));
    env = { STORAGE_DIR: join(root, "storage"), APP_KEY: TEST_APP_KEY };
    writeFileSync(join(root, "broken.db"), "# nothing usable\nrtr1:10.0.0.1:ios\nbig-lb-01:10.0.0.2:bigip\n");
    writeFileSync(join(root, "comments.db"), "# only comments\n\n");
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("explains its options and exit code in --help", async () => {
    const [ox, ra] = await Promise.all([
      svc(["import:oxidized", "--help"], env),
      svc(["import:rancid", "--help"], env),
    ]);
    expect(ox.code).toBe(0);
    expect(ox.stdout).toMatch(
      /^Usage: svc import:oxidized <router\.db> \[--map <list>\] \[--delimiter <text>\] \[--dry-run\] \[--verbose\]/,
    );
    expect(ox.stdout).toContain("default name=0,ip=1,model=2,username=3,password=4,enable=5");
    expect(ra.stdout).toMatch(/exit 1 if it cannot be read or not one of its lines can be imported/);
  });

  it("fails with one line on stderr for a missing file, a bad map, a file with no device line, and prints the report when no line is importable", async () => {
    const [missing, badMap, noModel, comments, nothingGood] = await Promise.all([
      svc(["import:rancid", "--file", join(root, "nope.db")], env),
      svc(["import:oxidized", "--file", join(root, "broken.db"), "--map", "name=0,ip=x"], env),
      svc(["import:oxidized", "--file", join(root, "broken.db"), "--map", "name=0,ip=1"], env),
      svc(["import:oxidized", join(root, "comments.db")], env),
      svc(["import:oxidized", "--file", join(root, "broken.db")], env),
    ]);
    for (const [r, pattern] of [
      [missing, /^svc: --file '.*nope\.db' cannot be read: no such file\n$/],
      [badMap, /^svc: --map 'ip=x' is not <key>=<position>/],
      [noModel, /^svc: --map must give the position of model/],
      [comments, /^svc: comments\.db has no device lines/],
      [nothingGood, /^svc: not one line of broken\.db can be imported; the lines above say why\n$/],
    ] as const) {
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(pattern);
    }
    expect(nothingGood.stdout).toContain("line 2: rtr1: rejected: device_name must be at least 5 characters");
    expect(nothingGood.stdout).toContain("line 3: big-lb-01: rejected: model 'bigip' is not a known Oxidized model");
  });
});
