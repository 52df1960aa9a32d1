/**
 * Test helper for collector/scheduler.test.ts, run as its own process: one scheduler on its own database
 * connection, stepping a fake clock through the slots it is given, against another such process. GO_FILE
 * holds the wall-clock time (epoch ms) of step 0; step i starts PACE_MS later each, plus a random jitter, so
 * the two processes reach every slot together and either may get there first. Prints the runs it started.
 */
import { existsSync, readFileSync } from "node:fs";
import { openDatabase } from "../src/db/client.ts";
import { createLogger } from "../src/kernel/logger.ts";
import { scheduleDueRuns } from "./scheduler.ts";

const { DATABASE_URL, START, STEPS, STEP_MS, GO_FILE, PACE_MS } = process.env;
const { db, client } = await openDatabase(DATABASE_URL!);
const logger = createLogger();
console.log("ready");
while (!existsSync(GO_FILE!)) await new Promise((r) => setTimeout(r, 5));
const go = Number(readFileSync(GO_FILE!, "utf8"));
const pace = Number(PACE_MS);

const started: number[] = [];
for (let i = 0; i <= Number(STEPS); i++) {
  const at = go + i * pace + Math.random() * (pace / 3);
  if (at > Date.now()) await new Promise((r) => setTimeout(r, at - Date.now()));
  const now = new Date(Date.parse(START!) + i * Number(STEP_MS));
  for (const run of await scheduleDueRuns({ db, clock: { now: () => now }, logger: { ...logger, info() {} } }))
    started.push(run.id);
}
console.log(JSON.stringify({ started }));
client.close();
