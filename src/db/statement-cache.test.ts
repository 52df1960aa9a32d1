import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "./client.ts";
import { keepPreparedStatements, keptStatements, STATEMENTS_PER_CONNECTION } from "./statement-cache.ts";

const dir = mkdtempSync(join(tmpdir(), "netkeep-statements-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("each connection keeps its statements prepared", () => {
  it("hands back the same statement for the same SQL, the least recently used one dropped past the limit", () => {
    keepPreparedStatements();
    const db = new Database(join(dir, "lru.db"));
    try {
      const first = db.prepare("select 1 as n");
      expect(db.prepare("select 1 as n")).toBe(first);
      const second = db.prepare("select 2 as n");
      for (let i = 3; i <= STATEMENTS_PER_CONNECTION; i++) db.prepare(`select ${i} as n`);
      // Used again, "select 1" is the most recently used: "select 2" is now the least.
      expect(db.prepare("select 1 as n")).toBe(first);
      expect(keptStatements(db)).toBe(STATEMENTS_PER_CONNECTION);
      db.prepare(`select ${STATEMENTS_PER_CONNECTION + 1} as n`);
      expect(keptStatements(db)).toBe(STATEMENTS_PER_CONNECTION);
      expect(db.prepare("select 1 as n")).toBe(first);
      expect(
        db.prepare("select 2 as n"),
        "the least recently used statement was dropped and is prepared anew",
      ).not.toBe(second);
    } finally {
      db.close();
    }
    expect(keptStatements(db)).toBe(0);
  });

  it("answers repeated statements through the client with each call's own arguments, also after one failed", async () => {
    const { client } = await openDatabase(`file:${join(dir, "client.db")}`);
    try {
      await client.execute("create table t(id integer primary key, doc text)");
      // The client tells writes from reads by asking the statement: a kept insert is still a write each time.
      const inserted = [];
      for (const doc of ['{"a":1}', "not json", '{"a":3}'])
        inserted.push(await client.execute({ sql: "insert into t(doc) values (?)", args: [doc] }));
      expect(inserted.map((r) => [r.rowsAffected, Number(r.lastInsertRowid)])).toEqual([
        [1, 1],
        [1, 2],
        [1, 3],
      ]);
      const pick = (id: number) =>
        client.execute({
          sql: "select id, json_extract(doc, '$.a') as a from t where id >= ? order by id",
          args: [id],
        });
      expect((await pick(3)).rows.map((r) => [r.id, r.a])).toEqual([[3, 3]]);
      await expect(pick(1)).rejects.toThrow(/malformed JSON/);
      expect((await pick(3)).rows.map((r) => [r.id, r.a])).toEqual([[3, 3]]);
      const tx = await client.transaction("write");
      await tx.execute({ sql: "update t set doc = ? where id = ?", args: ['{"a":2}', 2] });
      await tx.commit();
      expect((await pick(2)).rows.map((r) => [r.id, r.a])).toEqual([
        [2, 2],
        [3, 3],
      ]);
    } finally {
      client.close();
    }
  });

  it("prepares a statement for every column anew, so it reports a column its own connection just added", () => {
    keepPreparedStatements();
    const db = new Database(join(dir, "schema.db"));
    try {
      db.exec("create table t(x); insert into t values (1)");
      const columns = () =>
        db
          .prepare("select * from t")
          .columns()
          .map((c) => c.name);
      expect(columns()).toEqual(["x"]);
      db.exec("alter table t add column y default 5");
      expect(columns()).toEqual(["x", "y"]);
    } finally {
      db.close();
    }
  });
});
