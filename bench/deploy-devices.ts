import { parseArgs } from "node:util";
import { startConfigDevice } from "../test/helpers/config-device.ts";
import { hostnameOf } from "./ios-config.ts";
import { benchLogin } from "./sim-devices.ts";

/**
 * The simulated devices of bench/deploy.ts, all in this one process (one loopback port each): IOS-like devices
 * that apply what they are sent (test/helpers/config-device.ts). Reports `{ ports }` over IPC once listening;
 * answers `{ stats: lines }` with the logins served and how many devices' startup configurations hold every one
 * of the lines, then puts every device back to its first configuration, so the next phase proves its own saves;
 * stops on SIGTERM.
 */
const { values } = parseArgs({ options: { devices: { type: "string" }, "latency-ms": { type: "string" } } });

const firstConfig = (index: number) => [
  `hostname ${hostnameOf(index)}`,
  "interface Vlan1",
  " ip address 192.0.2.1 255.255.255.0",
];
const devices = await Promise.all(
  Array.from({ length: Number(values.devices) }, (_, index) =>
    startConfigDevice({
      flavor: "ios",
      hostname: hostnameOf(index),
      running: firstConfig(index),
      auth: benchLogin(index),
      latencyMs: Number(values["latency-ms"]),
    }),
  ),
);
process.send!({ ports: devices.map((d) => d.port) });

process.on("message", (message: { stats: string[] }) => {
  const expected = message.stats;
  const saved = devices.filter((d) => expected.every((line) => d.state.startup.includes(line))).length;
  const unexpected = devices.flatMap((d) => d.unexpected).slice(0, 10);
  devices.forEach((d, index) => {
    d.state.running = firstConfig(index);
    d.state.startup = firstConfig(index);
  });
  process.send!({
    sessions: devices.reduce((n, d) => n + d.sessions, 0),
    configLines: devices.reduce((n, d) => n + d.state.configLines.length, 0),
    saved,
    unexpected,
  });
});

process.on("SIGTERM", async () => {
  setTimeout(() => process.exit(0), 2000).unref();
  await Promise.all(devices.map((d) => d.close()));
  process.exit(0);
});
