import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { svc as runSvc, type SvcRun } from "../../test/helpers/svc.ts";
import { createApp } from "../app.ts";
import { verifyPassword } from "../platform/auth/passwords.ts";
import { displayPrefix, hashTokenValue } from "../platform/auth/token-value.ts";
import { findUserByName } from "../platform/auth/users.ts";
import { openSecretBox } from "../runtime/bootstrap.ts";
import { loadConfig } from "../kernel/config.ts";
import { openDatabase, type Database } from "../db/client.ts";
import { TEST_APP_KEY } from "../../test/helpers/app.ts";

const COMMANDS = ["migrate", "user:create", "user:password", "token:create", "token:list", "token:revoke"];

type Run = SvcRun;

const svc = (
  args: string[],
  opts: { stdin?: string; env?: Record<string, string> } = {},
  baseEnv: Record<string, string> = {},
) => runSvc(args, { ...baseEnv, ...opts.env }, opts.stdin);

const lastLine = (text: string) => text.trimEnd().split("\n").at(-1)!;
const occurrences = (text: string, part: string) => text.split(part).length - 1;

function expectOneLineError(run: Run, mentions: RegExp) {
  expect(run.code, run.stderr).toBe(1);
  expect(run.stdout).toBe("");
  expect(run.stderr).toMatch(/^svc: [^\n]+\n$/);
  expect(run.stderr).toMatch(mentions);
}

// One storage directory for the whole file: the steps build on each other like a session at the console.
describe("svc console", () => {
  let root: string;
  let storageDir: string;
  let env: Record<string, string>;
  let database: Database | undefined;
  let app: ReturnType<typeof createApp>;
  const run = (args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}) => svc(args, opts, env);

  /** The test's own view of the database svc writes to, opened once it exists. */
  async function open(): Promise<Database> {
    if (database) return database;
    database = await openDatabase(`file:${storageDir}/netkeep.db`);
    const config = loadConfig(env);
    app = createApp({ db: database.db, config, secrets: await openSecretBox(TEST_APP_KEY) });
    return database;
  }
  const devicesAs = (token: string) =>
    Promise.resolve(app.request("/api/v1/devices", { headers: { apitoken: token } }));

  let token = { id: 0, value: "" };

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "netkeep-svc-"));
    storageDir = join(root, "storage");
    env = { STORAGE_DIR: storageDir, APP_KEY: TEST_APP_KEY };
  });

  afterAll(() => {
    database?.client.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("lists its commands and explains each one's options, without touching storage", async () => {
    const [overview, ...helps] = await Promise.all([run(["--help"]), ...COMMANDS.map((name) => run([name, "--help"]))]);
    expect(overview.code).toBe(0);
    for (const name of COMMANDS) expect(overview.stdout).toContain(`  ${name} `);
    helps.forEach((help, i) => {
      expect(help.code, help.stderr).toBe(0);
      expect(help.stderr).toBe("");
      expect(help.stdout).toMatch(new RegExp(`^Usage: svc ${COMMANDS[i]}`));
      expect(help.stdout).toContain("--help");
    });
    expect(helps[COMMANDS.indexOf("token:create")]!.stdout).toContain("--abilities <list>");
    expect(existsSync(storageDir)).toBe(false);
  });

  it("migrates a fresh storage directory once, even when three commands start on it together, then finds nothing pending", async () => {
    const together = await Promise.all([run(["migrate"]), run(["migrate"]), run(["migrate"])]);
    for (const r of together) expect(r.code, r.stderr).toBe(0);
    const appliers = together.filter((r) => r.stdout.startsWith("Applied"));
    expect(appliers).toHaveLength(1);
    const migrationFiles = readdirSync(new URL("../../drizzle", import.meta.url)).filter((f) => f.endsWith(".sql"));
    expect(appliers[0]!.stdout).toMatch(
      new RegExp(`^Applied ${migrationFiles.length} migrations? to file:.*netkeep\\.db`),
    );
    const again = await run(["migrate"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^No pending migrations/);
  });

  it("creates a user with the password piped on stdin, storing only its hash", async () => {
    const password = "piped password 123";
    const created = await run(
      ["user:create", "--username", "alice", "--email", "alice@example.test", "--role", "operator", "--password-stdin"],
      { stdin: `${password}\n` },
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain("Created user 'alice'");
    expect(created.stdout + created.stderr).not.toContain(password);
    const { db } = await open();
    const alice = await findUserByName(db, "alice");
    expect(await verifyPassword(password, alice!.passwordHash)).toBe(true);
  });

  it("generates a password when none is piped and prints it once, as the last line", async () => {
    const created = await run(["user:create", "--username", "bob", "--email", "bob@example.test", "--role", "viewer"]);
    expect(created.code, created.stderr).toBe(0);
    const password = lastLine(created.stdout);
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(occurrences(created.stdout, password)).toBe(1);
    const bob = await findUserByName((await open()).db, "bob");
    expect(await verifyPassword(password, bob!.passwordHash)).toBe(true);
  });

  it("sets a user's password from stdin or generates one, printed once; records it and refuses an unknown user", async () => {
    const { db } = await open();
    const piped = "bob's new password 456";
    const set = await run(["user:password", "--username", "bob", "--password-stdin"], { stdin: `${piped}\n` });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain("Set the password of 'bob'");
    expect(set.stdout + set.stderr).not.toContain(piped);
    expect(await verifyPassword(piped, (await findUserByName(db, "bob"))!.passwordHash)).toBe(true);

    const generated = await run(["user:password", "--username", "BOB"]);
    expect(generated.code, generated.stderr).toBe(0);
    const password = lastLine(generated.stdout);
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(occurrences(generated.stdout, password)).toBe(1);
    const bob = (await findUserByName(db, "bob"))!;
    expect(await verifyPassword(password, bob.passwordHash)).toBe(true);
    expect(await verifyPassword(piped, bob.passwordHash)).toBe(false);
    const { rows } = await database!.client.execute({
      sql: "select count(*) as n from activity_log where action = 'user.password_change' and subject_id = ?",
      args: [bob.id],
    });
    expect(Number(rows[0]!.n)).toBe(2);

    const [unknown, short] = await Promise.all([
      run(["user:password", "--username", "nobody"]),
      run(["user:password", "--username", "bob", "--password-stdin"], { stdin: "short\n" }),
    ]);
    expectOneLineError(unknown, /no user is named 'nobody'/);
    expectOneLineError(short, /at least 12/);
  });

  it("refuses bad user input with one line on stderr that says what to fix", async () => {
    const user = (name: string) => ["user:create", "--username", name, "--email", `${name}@example.test`];
    const [badRole, shortPassword, duplicate, missingEmail, unknownFlag] = await Promise.all([
      run([...user("carol"), "--role", "superuser"]),
      // Ten characters: the API's and web's rule (12) holds here too.
      run([...user("carol"), "--role", "admin", "--password-stdin"], { stdin: "ten-chars!\n" }),
      run([...user("alice"), "--role", "admin"]),
      run(["user:create", "--username", "carol", "--role", "admin"]),
      run([...user("carol"), "--role", "admin", "--nickname", "c"]),
    ]);
    expectOneLineError(badRole, /'superuser'.*admin, operator, viewer/);
    expectOneLineError(shortPassword, /has 10 characters; pipe one of at least 12/);
    expectOneLineError(duplicate, /already exists/);
    expectOneLineError(missingEmail, /--email/);
    expectOneLineError(unknownFlag, /'--nickname'/);
  });

  it("issues a token whose value appears only on the last line of stdout, and which authenticates", async () => {
    const created = await run([
      "token:create",
      "--user",
      "alice",
      "--name",
      "ci backup",
      "--abilities",
      "devices.read,devices.write",
      "--expires-days",
      "30",
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe("");
    token = { id: Number(/Created token (\d+)/.exec(created.stdout)![1]), value: lastLine(created.stdout) };
    expect(token.value).toMatch(/^nk_/);
    expect(occurrences(created.stdout, token.value)).toBe(1);
    await open();
    expect((await devicesAs(token.value)).status).toBe(200);
  });

  it("refuses unknown or missing abilities, abilities beyond the role, a bad expiry and an unknown user", async () => {
    const create = (...extra: string[]) => run(["token:create", "--name", "x", ...extra]);
    const [unknownAbility, noAbilities, badExpiry, unknownUser, beyondRole] = await Promise.all([
      create("--user", "alice", "--abilities", "devices.read,devices.delete"),
      create("--user", "alice", "--abilities", " , "),
      create("--user", "alice", "--abilities", "devices.read", "--expires-days", "soon"),
      create("--user", "nobody", "--abilities", "devices.read"),
      create("--user", "bob", "--abilities", "devices.read,devices.write"),
    ]);
    expectOneLineError(beyondRole, /devices\.write is not granted by bob's role 'viewer'/);
    expectOneLineError(
      unknownAbility,
      /--abilities has unknown ability 'devices\.delete'; use any of: devices\.read, devices\.write, /,
    );
    expectOneLineError(noAbilities, /--abilities/);
    expectOneLineError(badExpiry, /--expires-days 'soon'/);
    expectOneLineError(unknownUser, /'nobody'/);
  });

  it("lists tokens without their values or hashes", async () => {
    const [all, bobs] = await Promise.all([run(["token:list"]), run(["token:list", "--user", "bob"])]);
    expect(all.code, all.stderr).toBe(0);
    const [header, row] = all.stdout.trimEnd().split("\n");
    expect(header!.split(/\s{2,}/)).toEqual([
      "ID",
      "NAME",
      "USER",
      "ABILITIES",
      "CREATED",
      "LAST USED",
      "EXPIRES",
      "STATE",
    ]);
    expect(row).toMatch(
      new RegExp(`^${token.id}\\s+ci backup\\s+alice\\s+devices\\.read,devices\\.write\\s.*\\sactive$`),
    );
    for (const secret of [token.value, displayPrefix(token.value), await hashTokenValue(token.value)]) {
      expect(all.stdout + all.stderr).not.toContain(secret);
    }
    expect(bobs.code).toBe(0);
    expect(bobs.stdout).toContain("has no tokens");
  });

  it("revokes a token, which then gets 401; revoking it again or an unknown id fails", async () => {
    const revoked = await run(["token:revoke", "--id", String(token.id)]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await devicesAs(token.value)).status).toBe(401);
    const [again, unknown, listed] = await Promise.all([
      run(["token:revoke", "--id", String(token.id)]),
      run(["token:revoke", "--id", "9999"]),
      run(["token:list"]),
    ]);
    expectOneLineError(again, new RegExp(`id ${token.id}\\b`));
    expectOneLineError(unknown, /id 9999\b/);
    expect(listed.stdout).toMatch(/\srevoked\n$/);
  });

  it("records token creation and revocation in the activity log, as the web settings page does", async () => {
    const auditor = await run(["token:create", "--user", "bob", "--name", "audit", "--abilities", "users.read"]);
    expect(auditor.code, auditor.stderr).toBe(0);
    const auditorId = Number(/Created token (\d+)/.exec(auditor.stdout)![1]);
    const res = await app.request("/api/v1/activity-logs?filter[subject_type]=api_token&sort=id", {
      headers: { apitoken: lastLine(auditor.stdout) },
    });
    expect(res.status).toBe(200);
    const entries = ((await res.json()) as { data: Record<string, unknown>[] }).data;
    const alice = await findUserByName((await open()).db, "alice");
    const bob = await findUserByName((await open()).db, "bob");
    expect(entries.map((e) => [e.action, e.subject_id, e.username, e.token_name])).toEqual([
      ["api_token.create", token.id, "svc token:create", null],
      ["api_token.revoke", token.id, "svc token:revoke", null],
      ["api_token.create", auditorId, "svc token:create", null],
    ]);
    expect(entries[0]!.changes).toEqual({
      id: { old: null, new: token.id },
      name: { old: null, new: "ci backup" },
      user_id: { old: null, new: alice!.id },
      abilities: { old: null, new: ["devices.read", "devices.write"] },
    });
    expect(entries[1]!.changes).toEqual({ revoked: { old: false, new: true } });
    expect(entries[2]!.changes).toMatchObject({ user_id: { old: null, new: bob!.id } });
    expect(JSON.stringify(entries)).not.toContain(token.value);
  });

  it("reports an unknown command and a bad setting in one line", async () => {
    const [unknownCommand, badSetting] = await Promise.all([
      run(["token:craete"]),
      run(["token:list"], { env: { DATABASE_URL: "postgres://db/netkeep" } }),
    ]);
    expectOneLineError(unknownCommand, /'token:craete'.*token:create/);
    expectOneLineError(badSetting, /^svc: DATABASE_URL=.*must start with file:/);
  });
});
