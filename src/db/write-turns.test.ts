import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@libsql/client";
import { afterAll, describe, expect, it } from "vitest";
import { withWriteTurns } from "./write-turns.ts";

const dir = mkdtempSync(join(tmpdir(), "netkeep-turns-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function overlap(client: Client) {
  await client.execute("PRAGMA journal_mode=WAL");
  await client.execute("create table if not exists t(x)");
  const started = Date.now();
  const holder = (async () => {
    const tx = await client.transaction("write");
    await tx.execute("insert into t values (1)");
    await new Promise((r) => setTimeout(r, 50));
    await tx.execute("insert into t values (2)");
    await tx.commit();
  })();
  const other = (async () => {
    await new Promise((r) => setTimeout(r, 10));
    await client.execute("insert into t values (3)");
  })();
  const results = await Promise.allSettled([holder, other]);
  return { ms: Date.now() - started, results: results.map((r) => r.status), rows: (await client.execute("select count(*) as n from t")).rows[0]!.n };
}

describe("writes take turns within a process", () => {
  it("a write issued while another transaction is open waits its turn instead of freezing the event loop", async () => {
    const raw = createClient({ url: `file:${dir}/raw.db`, timeout: 1000 });
    const frozen = await overlap(raw);
    // Without turns: the busy handler blocks the event loop, the holder cannot commit, the writer gives up.
    expect(frozen.ms).toBeGreaterThanOrEqual(900);
    expect(frozen.results).toContain("rejected");
    raw.close();

    const turned = withWriteTurns(createClient({ url: `file:${dir}/turns.db`, timeout: 1000 }));
    const fine = await overlap(turned);
    expect(fine.results).toEqual(["fulfilled", "fulfilled"]);
    expect(fine.rows).toBe(3);
    expect(fine.ms).toBeLessThan(500);
    turned.close();
  });

  it("releases the turn on rollback and on a failed statement", async () => {
    const client = withWriteTurns(createClient({ url: `file:${dir}/release.db`, timeout: 1000 }));
    await client.execute("create table t(x unique)");
    const tx = await client.transaction("write");
    await tx.execute("insert into t values (1)");
    await tx.rollback();
    await expect(client.execute("insert into t values (1)")).resolves.toBeDefined();
    await expect(client.execute("insert into t values (1)")).rejects.toThrow(/UNIQUE/);
    await expect(client.execute("insert into t values (2)")).resolves.toBeDefined();
    client.close();
  });
});
