import { z } from "zod";
import { LOG_LEVELS, type LogLevel } from "./logger.ts";
import { MIN_PASSWORD_LENGTH } from "./password-rule.ts";

/**
 * Settings come from the environment once, in the launcher, and are passed down; nothing else reads the
 * environment. A bad value stops the start with one line naming the variable and what it accepts.
 */
const onOff = z
  .string()
  .transform((v) => v.trim().toLowerCase())
  .pipe(z.enum(["on", "off", "true", "false", "1", "0"], { error: "must be on or off" }))
  .transform((v) => v === "on" || v === "true" || v === "1");

const envSchema = z.object({
  PORT: z.coerce
    .number({ error: "must be a port number" })
    .int("must be a whole number")
    .min(1)
    .max(65535)
    .default(3000),
  HOST: z.string().min(1).default("127.0.0.1"),
  STORAGE_DIR: z.string().min(1).default("storage"),
  DATABASE_URL: z
    .string()
    .regex(
      /^(file:|libsql:\/\/|https?:\/\/|wss?:\/\/)/,
      "must start with file:, libsql://, http://, https://, ws:// or wss://",
    )
    .optional(),
  DATABASE_AUTH_TOKEN: z.string().optional(),
  APP_KEY: z.string().optional(),
  APP_URL: z.url("must be an absolute URL such as https://netkeep.example.net").optional(),
  APP_NAME: z.string().min(1).default("netkeep"),
  RATE_LIMIT_PER_MINUTE: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(1)
    .default(600),
  COLLECTOR: onOff.default(true),
  COLLECTOR_LEASE_SECONDS: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(3600, "must be at most 3600")
    .default(60),
  COLLECTOR_JOB_TIME_LIMIT_SECONDS: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(5, "must be at least 5")
    .max(86_400, "must be at most 86400")
    .default(600),
  COLLECTOR_CONCURRENCY: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(5000, "must be at most 5000")
    .default(50),
  ADMIN_PASSWORD: z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).optional(),
  METRICS_PUBLIC: onOff.default(false),
  LOG_LEVEL: z
    .string()
    .transform((v) => v.trim().toLowerCase())
    .pipe(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(", ")}` }))
    .default("info"),
  SHUTDOWN_GRACE_SECONDS: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(3600, "must be at most 3600")
    .default(25),
  SESSION_LIFETIME_MINUTES: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(5, "must be at least 5")
    .max(43_200, "must be at most 43200 (30 days)")
    .default(120),
});

export type Config = {
  port: number;
  host: string;
  storageDir: string;
  databaseUrl: string;
  databaseAuthToken: string | undefined;
  appKey: string | undefined;
  appUrl: string;
  appName: string;
  rateLimitPerMinute: number;
  collector: boolean;
  /** Device sessions one collector process runs at once. */
  collectorConcurrency: number;
  /** How long a job stays with a collector that stopped heartbeating before another may take it. */
  collectorLeaseMs: number;
  /** No job holds a worker longer than this, whatever the device does. */
  collectorJobTimeLimitMs: number;
  adminPassword: string | undefined;
  /** A web login ends after this long without a request. */
  sessionLifetimeMs: number;
  /** GET /metrics answers without a token. */
  metricsPublic: boolean;
  /** The least severe log line written. */
  logLevel: LogLevel;
  /** On SIGTERM/SIGINT, how long requests in flight and a collector's jobs get to finish before the exit is forced. */
  shutdownGraceMs: number;
};

export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined>): Config {
  // An empty variable means "not set", as it does for most twelve-factor tools.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    throw new ConfigError(`${name}=${JSON.stringify(present[name] ?? "")} is invalid: ${issue.message}`);
  }
  const e = parsed.data;
  const displayHost = e.HOST.includes(":") ? `[${e.HOST}]` : e.HOST;
  return {
    port: e.PORT,
    host: e.HOST,
    storageDir: e.STORAGE_DIR.replace(/\/+$/, ""),
    databaseUrl: e.DATABASE_URL ?? `file:${e.STORAGE_DIR.replace(/\/+$/, "")}/netkeep.db`,
    databaseAuthToken: e.DATABASE_AUTH_TOKEN,
    appKey: e.APP_KEY,
    appUrl: (e.APP_URL ?? `http://${displayHost}:${e.PORT}`).replace(/\/+$/, ""),
    appName: e.APP_NAME,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    collector: e.COLLECTOR,
    collectorConcurrency: e.COLLECTOR_CONCURRENCY,
    collectorLeaseMs: e.COLLECTOR_LEASE_SECONDS * 1000,
    collectorJobTimeLimitMs: e.COLLECTOR_JOB_TIME_LIMIT_SECONDS * 1000,
    adminPassword: e.ADMIN_PASSWORD,
    sessionLifetimeMs: e.SESSION_LIFETIME_MINUTES * 60_000,
    metricsPublic: e.METRICS_PUBLIC,
    logLevel: e.LOG_LEVEL,
    shutdownGraceMs: e.SHUTDOWN_GRACE_SECONDS * 1000,
  };
}
