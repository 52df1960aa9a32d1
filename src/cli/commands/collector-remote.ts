import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "../../kernel/logger.ts";
import { CliError, defineCommand } from "../command.ts";
import packageJson from "../../../package.json" with { type: "json" };

const whole = (flags: Record<string, unknown>, name: string, fallback: number, min = 1): number => {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new CliError(`--${name} must be a whole number of at least ${min}`);
  return n;
};

export const collectorRemoteCommand = defineCommand({
  summary: "Run a site collector for a remote zone: talks only HTTP(S) to the API (docs/zones.md)",
  database: false,
  options: {
    server: { type: "string", placeholder: "url", required: true, description: "the API's base URL (https://...)" },
    enroll: {
      type: "string",
      placeholder: "key",
      description: "the zone's enrollment key; needed only for the first start (the enrollment is kept in --state-dir)",
    },
    "state-dir": {
      type: "string",
      placeholder: "dir",
      description: "where the enrollment, private key and spool live (default: STORAGE_DIR/remote-collector)",
    },
    ca: {
      type: "string",
      placeholder: "file",
      description: "PEM file of the private CA that signed the server's certificate",
    },
    "allow-http": { type: "boolean", description: "allow a plain http:// server (a warning is logged)" },
    name: {
      type: "string",
      placeholder: "name",
      description: "how the collector shows in the zone (default: the host name)",
    },
    concurrency: { type: "string", placeholder: "n", description: "device sessions at once (default 20)" },
    "spool-mb": { type: "string", placeholder: "MB", description: "the result spool's bound (default 256)" },
    "spool-bytes": { type: "string", placeholder: "bytes", description: "the spool's bound in bytes (tests)" },
    "heartbeat-seconds": { type: "string", placeholder: "s", description: "heartbeat interval (default 15)" },
    "claim-wait-seconds": { type: "string", placeholder: "s", description: "long-poll wait per claim (default 25)" },
  },
  async run(flags, { config }) {
    const { startRemoteCollector, DEFAULT_REMOTE_OPTIONS, CollectorRefused } = await import(
      "../../../collector/remote/runner.ts"
    );
    const logger = createLogger(undefined, { level: config.logLevel, human: process.stderr.isTTY === true });
    let ca: string | undefined;
    if (typeof flags.ca === "string") {
      try {
        ca = readFileSync(flags.ca, "utf8");
      } catch {
        throw new CliError(
          `--ca ${flags.ca} cannot be read; give the PEM file of the CA that signed the server's certificate`,
        );
      }
    }
    const spoolBytes =
      flags["spool-bytes"] !== undefined
        ? whole(flags, "spool-bytes", 0)
        : whole(flags, "spool-mb", DEFAULT_REMOTE_OPTIONS.spoolBytes / 1024 / 1024) * 1024 * 1024;
    let collector: Awaited<ReturnType<typeof startRemoteCollector>>;
    try {
      collector = await startRemoteCollector(
        {
          ...DEFAULT_REMOTE_OPTIONS,
          server: String(flags.server).replace(/\/+$/, ""),
          enrollmentKey: typeof flags.enroll === "string" ? flags.enroll : undefined,
          stateDir:
            typeof flags["state-dir"] === "string" ? flags["state-dir"] : join(config.storageDir, "remote-collector"),
          ca,
          allowHttp: flags["allow-http"] === true,
          name: typeof flags.name === "string" ? flags.name : undefined,
          version: packageJson.version,
          concurrency: whole(flags, "concurrency", DEFAULT_REMOTE_OPTIONS.concurrency),
          spoolBytes,
          heartbeatMs: whole(flags, "heartbeat-seconds", 15) * 1000,
          claimWaitMs: whole(flags, "claim-wait-seconds", 25, 0) * 1000,
        },
        logger,
      );
    } catch (err) {
      if (err instanceof CollectorRefused || (err instanceof Error && /HTTP|URL|certificate/.test(err.message)))
        throw new CliError(err.message);
      throw new CliError(`could not start: ${(err as Error).message}`);
    }
    const stop = () => void collector.stop().then(() => process.exit(0));
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    try {
      await collector.done;
    } catch (err) {
      // Revoked, deleted or an untrusted server: stop now, whatever is still running.
      console.error(`netkeep remote collector: ${(err as Error).message}`);
      process.exit(3);
    }
  },
});
