import { parseArgs } from "node:util";

export type BenchFlags = {
  duration: number;
  connections: number;
  warmup: number;
  devices: number;
  rounds: number;
  profile: boolean;
};

/** `--duration 10 --connections 50 --warmup 3 --devices 10000 --rounds 1 --profile`; each flag has a default. */
export function readBenchFlags(argv = process.argv.slice(2)): BenchFlags {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: "string", default: "10" },
      connections: { type: "string", default: "50" },
      warmup: { type: "string", default: "3" },
      devices: { type: "string", default: "10000" },
      rounds: { type: "string", default: "1" },
      profile: { type: "boolean", default: false },
    },
  });
  const number = (name: "duration" | "connections" | "warmup" | "devices" | "rounds", min: number) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < min)
      throw new Error(`--${name} must be a whole number >= ${min}, got '${values[name]}'`);
    return n;
  };
  return {
    duration: number("duration", 1),
    connections: number("connections", 1),
    warmup: number("warmup", 0),
    devices: number("devices", 1),
    rounds: number("rounds", 1),
    profile: values.profile,
  };
}
