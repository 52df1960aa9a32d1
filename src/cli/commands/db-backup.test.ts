import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync, gzipSync } from "node:zlib";
import { createClient, type Client } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { start, stopGroup, type Spawned } from "../../../test/helpers/process.ts";
import { runCaptured, svc } from "../../../test/helpers/svc.ts";
import { until } from "../../../test/helpers/until.ts";

const root = fileURLToPath(new URL("../../..", import.meta.url));

/**
 * Inserts 1, 2, 3 ... into writer_rows, each row its own committed transaction, until stopped, or until the test
 * process that started it is gone (a killed test run left one inserting for 1 h 40 min).
 */
const WRITER = `
import { createClient } from "@libsql/client";
const client = createClient({ url: process.env.DB_URL, timeout: 10000 });
const parent = process.ppid;
for (let n = 1; process.ppid === parent; n++) await client.execute({ sql: "insert into writer_rows (n, pad) values (?, randomblob(200))", args: [n] });
`;

/** Prints the highest row of writer_rows in the database at DB_URL. */
const MAX_ROW = `
import { createClient } from "@libsql/client";
const client = createClient({ url: process.env.DB_URL, timeout: 10000 });
console.log((await client.execute("select coalesce(max(n), 0) as m from writer_rows")).rows[0].m);
`;

let dir: string;
let env: Record<string, string>;
const dbFile = () => join(dir, "netkeep.db");
const maxRow = async (client: Client) =>
  Number((await client.execute("select coalesce(max(n), 0) as m from writer_rows")).rows[0]!.m);
/**
 * The live database is read from a process of its own: a closed libsql connection may stay open until it is
 * garbage-collected, which would keep db:restore refusing the file as in use by this test.
 */
async function liveMaxRow(): Promise<number> {
  const run = await runCaptured(process.execPath, ["--input-type=module", "-e", MAX_ROW], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", DB_URL: `file:${dbFile()}` },
  });
  if (run.code !== 0) throw new Error(run.stderr);
  return Number(run.stdout.trim());
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "netkeep-backup-"));
  env = { STORAGE_DIR: dir };
  expect((await svc(["migrate"], env)).code).toBe(0);
  const created = await runCaptured(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `
import { createClient } from "@libsql/client";
await createClient({ url: process.env.DB_URL }).execute("create table writer_rows (n integer primary key, pad blob)");
`,
    ],
    { cwd: root, env: { PATH: process.env.PATH ?? "", DB_URL: `file:${dbFile()}` } },
  );
  expect(created.stderr).toBe("");
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Waits until the writer process has committed row `n`: 1000 tries 20 ms apart, 20 s or more. */
const untilRows = (n: number) =>
  until(`the writer to reach ${n} rows`, liveMaxRow, (max) => max >= n, { tries: 1000, everyMs: 20 });

describe("svc db:backup and db:restore", () => {
  let writer: Spawned;
  const backup = () => join(dir, "during-writes.db.gz");

  it("copies the database consistently while another process keeps inserting", async () => {
    writer = start(process.execPath, ["--input-type=module", "-e", WRITER], { DB_URL: `file:${dbFile()}` }, root);
    await untilRows(200);
    const committedBefore = await liveMaxRow();
    const run = await svc(["db:backup", "--out", backup()], env);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/app key is not in it/);
    // The writer went on while the backup ran: the copy raced real commits.
    await untilRows(committedBefore + 50);
    expect(writer.child.exitCode).toBeNull();

    const sum = readFileSync(`${backup()}.sha256`, "utf8");
    expect(sum).toBe(`${createHash("sha256").update(readFileSync(backup())).digest("hex")}  during-writes.db.gz\n`);

    const restoredDir = mkdtempSync(join(tmpdir(), "netkeep-restored-"));
    try {
      const restoredEnv = { STORAGE_DIR: restoredDir };
      const restore = await svc(["db:restore", backup()], restoredEnv);
      expect(restore.stderr).toBe("");
      expect(restore.code).toBe(0);
      const restored = createClient({ url: `file:${join(restoredDir, "netkeep.db")}` });
      try {
        expect((await restored.execute("PRAGMA integrity_check")).rows.map((r) => r[0])).toEqual(["ok"]);
        const rows = await restored.execute({
          sql: "select count(*) as c, min(n) as lo from writer_rows where n <= ?",
          args: [committedBefore],
        });
        expect({ count: Number(rows.rows[0]!.c), lowest: Number(rows.rows[0]!.lo) }).toEqual({
          count: committedBefore,
          lowest: 1,
        });
        // Rows are whole and contiguous up to wherever the snapshot fell.
        const all = await restored.execute("select count(*) as c, max(n) as hi from writer_rows");
        expect(Number(all.rows[0]!.c)).toBe(Number(all.rows[0]!.hi));
      } finally {
        restored.close();
      }
    } finally {
      rmSync(restoredDir, { recursive: true, force: true });
    }
  });

  it("refuses to restore over a database another process has open, and replaces it once that process stops", async () => {
    const refused = await svc(["db:restore", backup()], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/open in another process.*stop the service/);
    stopGroup(writer);
    await writer.exited;

    const rowsNow = await liveMaxRow();
    const restore = await svc(["db:restore", backup()], env);
    expect(restore.stderr).toBe("");
    expect(restore.code).toBe(0);
    const kept = readdirSync(dir).filter((f) => f.startsWith("netkeep.db.replaced-"));
    expect(kept).toHaveLength(1);
    expect(restore.stdout).toContain(kept[0]);
    const replaced = createClient({ url: `file:${join(dir, kept[0]!)}` });
    try {
      expect(await maxRow(replaced)).toBe(rowsNow);
    } finally {
      replaced.close();
    }
    expect(await liveMaxRow()).toBeLessThan(rowsNow);
  });

  it("refuses a backup whose bytes no longer match its checksum, or whose checksum is missing", async () => {
    const damaged = join(dir, "damaged.db.gz");
    const bytes = readFileSync(backup());
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    writeFileSync(damaged, bytes);
    writeFileSync(`${damaged}.sha256`, readFileSync(`${backup()}.sha256`));
    const target = mkdtempSync(join(tmpdir(), "netkeep-target-"));
    try {
      const run = await svc(["db:restore", damaged], { STORAGE_DIR: target });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(/damaged: its SHA-256 is [0-9a-f]{64}, but .* says/);
      expect(existsSync(join(target, "netkeep.db"))).toBe(false);

      rmSync(`${damaged}.sha256`);
      const unsummed = await svc(["db:restore", damaged], { STORAGE_DIR: target });
      expect(unsummed.stderr).toMatch(/damaged\.db\.gz\.sha256 is missing/);
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  });

  it("refuses a backup with a matching checksum whose database fails integrity_check", async () => {
    // A database that opens and reads, but whose index i1 points at i2's pages: what integrity_check exists to find.
    const source = join(dir, "corrupt-source.db");
    const c = createClient({ url: `file:${source}` });
    try {
      await c.execute("create table t (x integer)");
      await c.execute("create index i1 on t(x)");
      await c.execute("create table u (y text)");
      await c.execute("create index i2 on u(y)");
      for (let i = 0; i < 20; i++)
        await c.batch([
          { sql: "insert into t values (?)", args: [i] },
          { sql: "insert into u values (?)", args: [`v${i}`] },
        ]);
      await c.execute("PRAGMA writable_schema = ON");
      await c.execute(
        "update sqlite_master set rootpage = (select rootpage from sqlite_master where name = 'i2') where name = 'i1'",
      );
    } finally {
      c.close();
    }
    const packed = gzipSync(readFileSync(source));
    const file = join(dir, "corrupt.db.gz");
    writeFileSync(file, packed);
    writeFileSync(`${file}.sha256`, `${createHash("sha256").update(packed).digest("hex")}  corrupt.db.gz\n`);
    const target = mkdtempSync(join(tmpdir(), "netkeep-target-"));
    try {
      const run = await svc(["db:restore", file], { STORAGE_DIR: target });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(/fails SQLite's integrity_check \(.*page.*\); nothing was restored/s);
      expect(existsSync(join(target, "netkeep.db"))).toBe(false);
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  });

  /** Packs an SQLite file as a backup with a matching checksum, as if db:backup had written it. */
  function packed(source: string, name: string): string {
    const bytes = gzipSync(readFileSync(source));
    const file = join(dir, name);
    writeFileSync(file, bytes);
    writeFileSync(`${file}.sha256`, `${createHash("sha256").update(bytes).digest("hex")}  ${name}\n`);
    return file;
  }

  /** A copy of the backup taken above, unpacked, changed by `change`, and packed again with a matching checksum. */
  async function alteredBackup(name: string, change: (c: Client) => Promise<void>): Promise<string> {
    const source = join(dir, `${name}.db`);
    writeFileSync(source, gunzipSync(readFileSync(backup())));
    const c = createClient({ url: `file:${source}` });
    try {
      await change(c);
    } finally {
      c.close();
    }
    return packed(source, `${name}.db.gz`);
  }

  /** Restores into a fresh storage directory; what svc said, and whether a database appeared. */
  async function restoreFresh(file: string) {
    const target = mkdtempSync(join(tmpdir(), "netkeep-target-"));
    try {
      const run = await svc(["db:restore", file], { STORAGE_DIR: target });
      return { ...run, restored: existsSync(join(target, "netkeep.db")) };
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  }

  it("refuses an SQLite file that is not a netkeep database, checksum or not", async () => {
    const source = join(dir, "foreign.db");
    const c = createClient({ url: `file:${source}` });
    try {
      await c.execute("create table notes (id integer primary key, body text)");
      await c.execute("insert into notes (body) values ('not netkeep')");
    } finally {
      c.close();
    }
    const run = await restoreFresh(packed(source, "foreign.db.gz"));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(
      /foreign\.db\.gz is not a netkeep database: it has no migrations table \(__drizzle_migrations\); nothing was restored/,
    );
    expect(run.restored).toBe(false);
  });

  it("refuses a netkeep backup with a table dropped, or from a release that ships migrations this one does not", async () => {
    const dropped = await restoreFresh(
      await alteredBackup("dropped", (c) => c.execute("drop table health_runs").then(() => undefined)),
    );
    expect(dropped.code).not.toBe(0);
    expect(dropped.stderr).toMatch(
      /dropped\.db\.gz lacks table health_runs that its migrations create: the backup is damaged; nothing was restored/,
    );
    expect(dropped.restored).toBe(false);

    const newer = await restoreFresh(
      await alteredBackup("newer", (c) =>
        c
          .execute("insert into __drizzle_migrations (hash, created_at) values ('f00d', 4102444800000)")
          .then(() => undefined),
      ),
    );
    expect(newer.code).not.toBe(0);
    expect(newer.stderr).toMatch(
      /newer\.db\.gz holds migration \d+ \(of 2100-01-01T00:00:00\.000Z\), which this release does not ship/,
    );
    expect(newer.restored).toBe(false);
  });

  it("creates the database, backups and their checksums mode 0600, and removes what a backup stopped mid-way left", async () => {
    // svc migrate created this storage's database in beforeAll.
    expect(statSync(dbFile()).mode & 0o777).toBe(0o600);
    const backups = join(dir, "backups");
    mkdirSync(backups, { recursive: true });
    // A backup killed an hour ago left its uncompressed copy and half its compressed file; one running now writes to its own.
    const stale = ["netkeep-20260101T010000000Z.db.gz.snapshot", "netkeep-20260101T010000000Z.db.gz.partial"];
    const running = ["netkeep-20260101T020000000Z.db.gz.snapshot", "netkeep-20260101T020000000Z.db.gz.partial"];
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const name of [...stale, ...running]) writeFileSync(join(backups, name), "leftover");
    for (const name of stale) utimesSync(join(backups, name), hourAgo, hourAgo);
    // The running one's snapshot was finished an hour ago; its compressed file is being written now.
    utimesSync(join(backups, running[0]!), hourAgo, hourAgo);

    const run = await svc(["db:backup"], env);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const left = readdirSync(backups);
    for (const name of stale) expect(left).not.toContain(name);
    for (const name of running) expect(left).toContain(name);
    const taken = left.filter((n) => /^netkeep-.*\.db\.gz$/.test(n));
    expect(taken).toHaveLength(1);
    expect(statSync(join(backups, taken[0]!)).mode & 0o777).toBe(0o600);
    expect(statSync(join(backups, `${taken[0]}.sha256`)).mode & 0o777).toBe(0o600);
  });

  it("says the disk is full when the backup cannot be written, and leaves nothing", async () => {
    const out = join(dir, "full-disk.db.gz");
    // The compressed copy goes to <out>.partial first: here /dev/full, which answers every write with ENOSPC.
    symlinkSync("/dev/full", `${out}.partial`);
    const run = await svc(["db:backup", "--out", out], env);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(
      /^svc: db:backup failed: the disk holding the database and STORAGE_DIR is full .*free space, then retry/,
    );
    expect(existsSync(out)).toBe(false);
    expect(existsSync(`${out}.snapshot`)).toBe(false);
  });

  it("says what to do for a libSQL server instead of pretending", async () => {
    const run = await svc(["db:backup"], { STORAGE_DIR: dir, DATABASE_URL: "libsql://db.example.invalid" });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/libSQL server.*server's own means/);
  });
});
