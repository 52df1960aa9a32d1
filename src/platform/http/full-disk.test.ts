import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { backupName, backupsDir } from "../../db/backup.ts";
import { createTestContext, manualClock, type TestContext } from "../../../test/helpers/app.ts";
import { fillDatabase } from "../../../test/helpers/full-disk.ts";

/**
 * A full disk, provoked for real: SQLITE_FULL from a database that may not grow past its size (PRAGMA
 * max_page_count on the writer connection, its free pages used up), and ENOSPC from a backup written into
 * /dev/full. Each answers 507 saying the disk is full, never a 500.
 */

const clock = manualClock(new Date("2026-06-01T12:00:00Z"));
let t: TestContext;
let token: string;
beforeEach(async () => {
  t = await createTestContext({ clock });
  token = await t.token();
});
afterEach(() => t.close());

/** Creates tags until one is refused; the answer that refused it. */
async function writeUntilRefused() {
  for (let i = 0; i < 500; i++) {
    const res = await t.call("/api/v1/tags", {
      method: "POST",
      token,
      body: { name: `full-${i}`, description: `${i} `.repeat(300) },
    });
    if (res.status !== 201) return { ...res, name: `full-${i}` };
  }
  throw new Error("every write was taken");
}

describe("a full disk", () => {
  it("answers a write 507 saying the disk is full, and nothing half-written", async () => {
    await fillDatabase(t.db);
    const refused = await writeUntilRefused();
    expect(refused.status).toBe(507);
    expect(refused.body.message).toMatch(
      /^The request failed: the disk holding the database and STORAGE_DIR is full .*free space, then retry/,
    );
    const listed = await t.call(`/api/v1/tags?filter[name]=${refused.name}`, { token });
    expect(listed.body.data).toEqual([]);
  });

  it("answers the health run 507 with its checks, the disk check saying the database cannot grow", async () => {
    await fillDatabase(t.db);
    // Runs fill the health runs' pages first; one comes that needs a page the database cannot add.
    let res;
    for (let i = 0; i < 200; i++) {
      res = await t.call("/api/v1/system/health/run", { method: "POST", token });
      if (res.status !== 200) break;
    }
    expect(res!.status).toBe(507);
    expect(res!.body.message).toMatch(
      /^The health pass could not be stored, as the disk is full\. Its checks not ok: .*disk failed: The database cannot grow: the disk holding the database and STORAGE_DIR is full/,
    );
  });

  it("answers a backup 507 when its file cannot be written (ENOSPC), leaving no file behind", async () => {
    const name = backupName(clock.now());
    mkdirSync(backupsDir(t.dir), { recursive: true });
    // The compressed copy is written to <name>.partial: here /dev/full, which answers every write with ENOSPC.
    symlinkSync("/dev/full", join(backupsDir(t.dir), `${name}.partial`));
    const res = await t.call("/api/v1/system/backups", { method: "POST", token });
    expect(res.status).toBe(507);
    expect(res.body.message).toMatch(/disk holding the database and STORAGE_DIR is full/);
    expect(existsSync(join(backupsDir(t.dir), name))).toBe(false);
    expect(existsSync(join(backupsDir(t.dir), `${name}.snapshot`))).toBe(false);
  });
});
