import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ABILITIES } from "../src/platform/auth/abilities.ts";
import { issueToken } from "../src/platform/auth/tokens.ts";
import { findUserByName } from "../src/platform/auth/users.ts";
import { openSecretBox, prepareDatabase } from "../src/runtime/bootstrap.ts";
import { systemClock } from "../src/kernel/clock.ts";
import { loadConfig } from "../src/kernel/config.ts";
import { openDatabase } from "../src/db/client.ts";
import { loadBuiltinTemplates } from "../src/runtime/builtin-templates.ts";
import { generateAppKey } from "../src/platform/secrets/box.ts";
import { readBenchFlags } from "./flags.ts";
import { measure, startServer, type Measurement, type ServerKind } from "./load.ts";
import { summarizeProfiles } from "./profile.ts";
import { seedDevices } from "./seed.ts";

/**
 * `npm run bench:api [-- --duration 10 --connections 50 --warmup 3 --devices 10000 --rounds 1 --profile]`
 *
 * Authenticated `GET /api/v1/devices?per_page=50` on the real app against a bare handler doing the same query
 * and encoding, on one seeded temp database, one server at a time, loopback only. With --rounds N the two
 * alternate N times and the median round of each counts (a shared machine is noisy). Exits 1 below target.
 */
const TARGET_RATIO = 0.7;
const PATH = "/api/v1/devices?per_page=50";
const KINDS: ServerKind[] = ["app", "baseline"];

const flags = readBenchFlags();
const dir = mkdtempSync(join(tmpdir(), "netkeep-bench-"));
// A limit no run can reach: the bench measures the limiter's bookkeeping, not its refusals. The servers
// inherit the environment, so an empty DATABASE_URL keeps a developer's own database out of it.
const env = {
  STORAGE_DIR: dir,
  DATABASE_URL: "",
  DATABASE_AUTH_TOKEN: "",
  APP_KEY: generateAppKey(),
  RATE_LIMIT_PER_MINUTE: "1000000000",
  COLLECTOR: "off",
};

/** Both servers must answer the same page before their speeds mean anything (links differ only by port). */
async function checkAnswer(kind: ServerKind, origin: string, token: string): Promise<string> {
  const res = await fetch(origin + PATH, { headers: { apitoken: token } });
  const text = await res.text();
  const body = (res.status === 200 ? JSON.parse(text) : undefined) as
    | { data: unknown[]; meta: { total: number } }
    | undefined;
  if (!body || body.data.length !== Math.min(50, flags.devices) || body.meta.total !== flags.devices) {
    throw new Error(`${kind}: unexpected answer ${res.status} ${text.slice(0, 300)}`);
  }
  return JSON.stringify({ data: body.data, meta: body.meta });
}

const median = (runs: Measurement[]) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;
const row = (name: string, m: Measurement) =>
  `${name.padEnd(22)}${m.rps.toFixed(1).padStart(10)}${m.p50.toFixed(1).padStart(10)}${m.p99.toFixed(1).padStart(10)}` +
  `${String(m.requests).padStart(11)}${String(m.timeouts).padStart(10)}`;

try {
  const config = loadConfig(env);
  const database = await openDatabase(config.databaseUrl);
  const { db, client } = database;
  await prepareDatabase(database, config, systemClock, loadBuiltinTemplates());
  const started = performance.now();
  await seedDevices(db, await openSecretBox(config.appKey!), flags.devices);
  console.log(`seeded ${flags.devices} devices in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const admin = await findUserByName(db, "admin");
  const { value: token } = await issueToken(
    db,
    { userId: admin!.id, name: "bench", abilities: [...ABILITIES] },
    new Date(),
  );
  client.close();

  const profileDir = flags.profile ? join(dir, "profiles") : undefined;
  const runs: Record<ServerKind, Measurement[]> = { app: [], baseline: [] };
  const answers = new Set<string>();
  for (let round = 1; round <= flags.rounds; round++) {
    for (const kind of KINDS) {
      const server = await startServer(kind, env, kind === "app" && round === 1 ? profileDir : undefined);
      try {
        if (round === 1) answers.add(await checkAnswer(kind, server.origin, token));
        if (answers.size > 1) throw new Error("app and baseline answered different pages");
        runs[kind].push(await measure(server.origin + PATH, { apitoken: token }, flags));
      } finally {
        await server.stop();
      }
    }
    if (flags.rounds > 1)
      console.log(`round ${round}: ${KINDS.map((k) => `${k} ${runs[k].at(-1)!.rps.toFixed(1)} req/s`).join(", ")}`);
  }

  const app = median(runs.app);
  const baseline = median(runs.baseline);
  const ratio = app.rps / baseline.rps;
  console.log(
    `\nGET ${PATH}: ${flags.devices} devices, ${flags.connections} connections, ${flags.duration} s each after ${flags.warmup} s warm-up` +
      (flags.rounds > 1 ? `, median of ${flags.rounds} rounds` : ""),
  );
  console.log(
    `${"".padEnd(22)}${"req/s".padStart(10)}${"p50 ms".padStart(10)}${"p99 ms".padStart(10)}${"requests".padStart(11)}${"timeouts".padStart(10)}`,
  );
  console.log(row("app (createApp)", app));
  console.log(row("baseline (bare Hono)", baseline));
  console.log(
    `ratio app/baseline: ${ratio.toFixed(3)} (target >= ${TARGET_RATIO}) ${ratio >= TARGET_RATIO ? "OK" : "BELOW TARGET"}`,
  );
  if (profileDir) console.log(summarizeProfiles(profileDir));
  if (ratio < TARGET_RATIO) process.exitCode = 1;
} finally {
  if (flags.profile) console.log(`\nprofiles kept in ${dir}/profiles (open them in Chrome DevTools > Performance)`);
  else rmSync(dir, { recursive: true, force: true });
}
