import { openDatabase } from "../src/db/client.ts";
import { sql } from "drizzle-orm";
const { db } = await openDatabase("file:/tmp/zz-tx.db");
await db.run(sql`create table if not exists t (x int)`);
const t0 = Date.now();
const tx = (n: number) => db.transaction(async (tx) => { await tx.run(sql`insert into t values (${n})`); await new Promise((r) => setTimeout(r, 5)); await tx.run(sql`insert into t values (${n})`); });
const r = await Promise.allSettled([tx(1), tx(2)]);
console.log(r.map((x) => x.status + (x.status === "rejected" ? String(x.reason).slice(0, 80) : "")), Date.now() - t0, "ms");
