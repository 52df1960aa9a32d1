/**
 * Migrations against a libSQL server (test/helpers/hrana-server.ts). A table rebuild (0009 rebuilds `devices` and
 * `tags`) drops the old table; with foreign keys on, that deletes every row referencing it through ON DELETE
 * CASCADE. Over HTTP each request is a stream of its own, so `PRAGMA foreign_keys = OFF` must travel with the
 * migration's statements, in its stream, or the server runs them with foreign keys on.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startHranaServer, type HranaServer } from "../../test/helpers/hrana-server.ts";
import { migrationsUpTo } from "../../test/helpers/migrations.ts";
import { openClient } from "./driver.ts";
import { applyMigrations, migrationsFolder } from "./migrate.ts";
import { readMigrationFiles } from "drizzle-orm/migrator";

const dirs: string[] = [];
const servers: HranaServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

async function server(): Promise<HranaServer> {
  const dir = mkdtempSync(join(tmpdir(), "netkeep-remote-"));
  dirs.push(dir);
  const started = await startHranaServer(join(dir, "server.db"));
  servers.push(started);
  return started;
}

describe("migrations on a libSQL server", () => {
  it("keep the rows that reference a table a migration rebuilds", async () => {
    const { url } = await server();
    const old = migrationsUpTo("0006_search_pending");
    dirs.push(old);
    await applyMigrations({ url }, old);
    const client = await openClient({ url });
    try {
      const now = Date.now();
      await client.execute({
        sql: "insert into devices (name, ip, created_at, updated_at) values ('core-1', '192.0.2.1', ?, ?)",
        args: [now, now],
      });
      await client.execute({
        sql: "insert into tags (name, created_at, updated_at) values ('core', ?, ?)",
        args: [now, now],
      });
      await client.execute("insert into device_tags (device_id, tag_id) select d.id, t.id from devices d, tags t");

      const applied = await applyMigrations({ url });
      expect(applied).toBe(
        readMigrationFiles({ migrationsFolder }).length - readMigrationFiles({ migrationsFolder: old }).length,
      );
      const { rows } = await client.execute(
        "select d.name as device, t.name as tag from device_tags dt join devices d on d.id = dt.device_id join tags t on t.id = dt.tag_id",
      );
      expect(rows.map((r) => [r.device, r.tag])).toEqual([["core-1", "core"]]);
      const { rows: fk } = await client.execute("pragma foreign_keys");
      expect(Number(fk[0]![0]), "foreign keys are on again afterwards").toBe(1);
    } finally {
      client.close();
    }
  });

  it("apply once when two processes migrate a fresh database together", async () => {
    const { url } = await server();
    const results = await Promise.all([applyMigrations({ url }), applyMigrations({ url })]);
    expect(results.sort()).toEqual([0, readMigrationFiles({ migrationsFolder }).length]);
  });
});
