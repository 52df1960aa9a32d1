import { parseArgs } from "node:util";
import { startFakeDevices } from "../test/helpers/fake-device.ts";
import { hostnameOf } from "./ios-config.ts";
import { benchLogin, ciscoShell, initialPrompt } from "./sim-devices.ts";

/**
 * The simulated devices of bench/collect.ts, all in this one process (one loopback port each), apart from the
 * SSH clients under test so their CPU and memory are not counted with them. Reports `{ ports }` over IPC once
 * listening; answers "stats" with the logins served and anything a client sent that no device knows; stops on
 * SIGTERM.
 */
const { values } = parseArgs({
  options: {
    devices: { type: "string" },
    "latency-ms": { type: "string" },
    "config-kb": { type: "string" },
    "chunk-bytes": { type: "string" },
  },
});
const configBytes = Number(values["config-kb"]) * 1024;
const chunkBytes = Number(values["chunk-bytes"]);

const devices = await startFakeDevices(Number(values.devices), (index) => ({
  auth: benchLogin(index),
  initPrompt: initialPrompt(index),
  script: ciscoShell(index, configBytes),
  latencyMs: Number(values["latency-ms"]),
  chunkSize: chunkBytes > 0 ? chunkBytes : undefined,
}));
process.send!({ ports: devices.map((d) => d.port) });

process.on("message", (message) => {
  if (message !== "stats") return;
  const unexpected = devices.flatMap((d, i) => d.unexpected.map((line) => `${hostnameOf(i)}: ${JSON.stringify(line)}`));
  process.send!({
    sessions: devices.reduce((n, d) => n + d.sessions, 0),
    unexpected: unexpected.slice(0, 20),
    unexpectedCount: unexpected.length,
  });
});

process.on("SIGTERM", async () => {
  setTimeout(() => process.exit(0), 2000).unref();
  await Promise.all(devices.map((d) => d.close()));
  process.exit(0);
});
