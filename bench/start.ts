import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { freePort } from "../test/helpers/process.ts";

/**
 * `npm run bench:start [-- --rounds 5]`
 *
 * Time from spawn to the first 200 from /healthz, for each way the API starts: `npm start` (npm, sh, then the
 * bundle), the bundle directly (`node dist/main.js`, as the Dockerfile and the systemd unit run it), and the
 * source through tsx (`npm run dev`, for comparison). Each round is a warm start on a database that already
 * exists (migrations applied, admin created): what a restart costs. The collector is off (it starts after the API
 * answers and does not delay it). Build first (`npm run build`). Prints the median and worst of each; exits 1
 * when the bundle's median is over the 1 s target.
 */
const TARGET_MS = 1000;
const { values } = parseArgs({ options: { rounds: { type: "string", default: "5" } } });
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error(`--rounds must be a whole number >= 1, got '${values.rounds}'`);

const WAYS: Record<string, [string, string[]]> = {
  "npm start": ["npm", ["start", "--silent"]],
  "node dist/main.js": [process.execPath, ["dist/main.js"]],
  "tsx src/main.ts (dev)": [process.execPath, ["--import", "tsx", "src/main.ts"]],
};

async function startOnce(command: string, args: string[], storage: string): Promise<number> {
  const port = await freePort();
  const began = performance.now();
  const child = spawn(command, args, {
    env: {
      ...process.env,
      STORAGE_DIR: storage,
      PORT: String(port),
      HOST: "127.0.0.1",
      COLLECTOR: "off",
      ADMIN_PASSWORD: "bench-password",
    },
    stdio: "ignore",
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  try {
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`${command} ${args.join(" ")} exited with ${child.exitCode} before answering`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return performance.now() - began;
      if (performance.now() - began > 60_000)
        throw new Error(`${command} ${args.join(" ")} did not answer within 60 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

const storage = mkdtempSync(join(tmpdir(), "netkeep-bench-start-"));
try {
  await startOnce(process.execPath, ["dist/main.js"], storage); // creates and migrates the database
  const medians: Record<string, number> = {};
  for (const [name, [command, args]] of Object.entries(WAYS)) {
    const times: number[] = [];
    for (let i = 0; i < rounds; i++) times.push(await startOnce(command, args, storage));
    times.sort((a, b) => a - b);
    medians[name] = times[Math.floor(times.length / 2)]!;
    console.log(
      `${name.padEnd(24)} median ${medians[name]!.toFixed(0).padStart(5)} ms   worst ${times.at(-1)!.toFixed(0).padStart(5)} ms   (${rounds} starts)`,
    );
  }
  const bundle = medians["node dist/main.js"]!;
  console.log(
    bundle <= TARGET_MS
      ? `OK: the bundle answers in ${bundle.toFixed(0)} ms (target ${TARGET_MS})`
      : `FAIL: the bundle takes ${bundle.toFixed(0)} ms (target ${TARGET_MS})`,
  );
  process.exitCode = bundle <= TARGET_MS ? 0 : 1;
} finally {
  rmSync(storage, { recursive: true, force: true });
}
