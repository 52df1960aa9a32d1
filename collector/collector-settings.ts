import type { Clock } from "../src/kernel/clock.ts";
import type { Db } from "../src/db/client.ts";
import type { Logger } from "../src/kernel/logger.ts";
import { SETTINGS_DEFAULTS, type Settings } from "../src/platform/settings/schema.ts";
import { getCollectorSettings } from "../src/platform/settings/service.ts";
import { describeError } from "./errors.ts";
import { DEFAULT_LIMITS, type SessionLimits } from "./session.ts";

/** How long a collector keeps the settings it read: a change applies within this, without a restart. */
export const SETTINGS_TTL_MS = 10_000;

export type CollectorSettings = Settings["collector"];

/**
 * The settings' collector section as this process last read it, read again once it is older than `ttlMs` (by
 * the injected clock). Sessions start by the hundred: a read per job would be a statement per job, this is one
 * every ten seconds. A failed read keeps the last values (the defaults before any), and is tried again next time.
 */
export function collectorSettingsCache(
  deps: { db: Db; clock: Clock; logger: Logger },
  ttlMs = SETTINGS_TTL_MS,
): () => Promise<CollectorSettings> {
  let value: CollectorSettings = SETTINGS_DEFAULTS.collector;
  let readAt = -Infinity;
  let reading: Promise<CollectorSettings> | undefined;
  return () => {
    if (deps.clock.now().getTime() - readAt < ttlMs) return Promise.resolve(value);
    // Jobs claimed together share one read.
    reading ??= getCollectorSettings(deps.db)
      .then((read) => (value = read))
      .catch((err: unknown) => {
        deps.logger.warn("could not read the collector settings; keeping the last ones", { error: describeError(err) });
        return value;
      })
      .finally(() => {
        readAt = deps.clock.now().getTime();
        reading = undefined;
      });
    return reading;
  };
}

/** What a session is opened with: `limits` and `connectTimeoutMs` given in code (tests, benchmarks) win over the settings. */
export async function sessionSettings(deps: {
  limits?: SessionLimits;
  connectTimeoutMs?: number;
  settings?: () => Promise<CollectorSettings>;
}) {
  const settings = deps.settings ? await deps.settings() : SETTINGS_DEFAULTS.collector;
  return {
    limits: deps.limits ?? { ...DEFAULT_LIMITS, idleTimeoutMs: settings.command_timeout_seconds * 1000 },
    connectTimeoutMs: deps.connectTimeoutMs ?? settings.connect_timeout_seconds * 1000,
  };
}
