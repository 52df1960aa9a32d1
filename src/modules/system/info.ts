import { and, count, eq, gte, isNull, sql } from "drizzle-orm";
import type { Clock } from "../../kernel/clock.ts";
import type { Config } from "../../kernel/config.ts";
import type { Db } from "../../db/client.ts";
import { apiTokens, configs, devices, jobs, processHeartbeats, users } from "../../db/schema/index.ts";
import { type DeviceScope, deviceIdInScope, deviceScopeCondition } from "../../platform/auth/scope.ts";
import { HEARTBEAT_STALE_MS } from "../../platform/jobs/heartbeats.ts";
import { nodeFs, promised } from "./node-fs.ts";
import packageJson from "../../../package.json" with { type: "json" };

type Runtime = { name: "node" | "deno"; version: string };
function runtime(): Runtime {
  const g = globalThis as { Deno?: { version: { deno: string } }; process?: { versions?: { node?: string } } };
  return g.Deno
    ? { name: "deno", version: g.Deno.version.deno }
    : { name: "node", version: g.process?.versions?.node ?? "unknown" };
}

/** Bytes of every file under dir; null where the runtime lends no node:fs. */
async function bytesUnder(dir: string): Promise<number | null> {
  const fs = nodeFs;
  if (!fs) return null;
  try {
    const entries = await promised<{ name: string; parentPath: string; isFile(): boolean }[]>((cb) =>
      fs.readdir(dir, { withFileTypes: true, recursive: true }, cb),
    );
    const sizes = await Promise.all(
      entries
        .filter((e) => e.isFile())
        .map((e) =>
          promised<{ size: number }>((cb) => fs.stat(`${e.parentPath}/${e.name}`, cb)).then(
            (s) => s.size,
            () => 0,
          ),
        ),
    );
    return sizes.reduce((a, b) => a + b, 0);
  } catch {
    return null;
  }
}

/** A collector not heard from in this long is no longer listed (its row stays until then, for the health check). */
const LIST_COLLECTORS_FOR_MS = 24 * 3_600_000;

export async function systemInfo(deps: { db: Db; clock: Clock; config: Config }, scope: DeviceScope) {
  const { db, config } = deps;
  const now = deps.clock.now();
  const [pages] = await db.all<{ size: number }>(
    sql`select page_count * page_size as size from pragma_page_count(), pragma_page_size()`,
  );
  const collectors = await db
    .select()
    .from(processHeartbeats)
    .where(
      sql`${processHeartbeats.kind} = 'collector' and ${processHeartbeats.seenAt} >= ${now.getTime() - LIST_COLLECTORS_FOR_MS}`,
    )
    .orderBy(processHeartbeats.owner);
  const one = async (query: Promise<{ n: number }[]>) => (await query)[0]!.n;
  const [queueDepth, deviceCount, versions, userCount, tokens] = await Promise.all([
    // A scoped role counts only its devices' jobs: the fleet's queue would tell it how many devices it cannot see.
    one(
      db
        .select({ n: count() })
        .from(jobs)
        .where(and(eq(jobs.state, "queued"), deviceIdInScope(jobs.deviceId, scope))),
    ),
    one(db.select({ n: count() }).from(devices).where(deviceScopeCondition(scope))),
    one(db.select({ n: count() }).from(configs).where(deviceIdInScope(configs.deviceId, scope))),
    one(db.select({ n: count() }).from(users)),
    one(
      db
        .select({ n: count() })
        .from(apiTokens)
        .where(
          sql`${isNull(apiTokens.revokedAt)} and (${isNull(apiTokens.expiresAt)} or ${gte(apiTokens.expiresAt, now)})`,
        ),
    ),
  ]);
  return {
    version: packageJson.version,
    uptime_seconds: Math.max(0, Math.round((Date.now() - performance.timeOrigin) / 1000)),
    runtime: runtime(),
    database: {
      kind: config.databaseUrl.startsWith("file:") ? ("embedded file" as const) : ("libsql server" as const),
      size_bytes: Number(pages?.size ?? 0),
    },
    storage_used_bytes: await bytesUnder(config.storageDir),
    collectors: collectors.map((r) => ({
      owner: r.owner,
      host: r.host,
      pid: r.pid,
      version: r.version,
      concurrency: r.concurrency,
      started_at: r.startedAt.toISOString(),
      last_heartbeat_at: r.seenAt.toISOString(),
      fresh: now.getTime() - r.seenAt.getTime() <= HEARTBEAT_STALE_MS,
    })),
    queue_depth: queueDepth,
    counts: { devices: deviceCount, versions, users: userCount, tokens },
  };
}
