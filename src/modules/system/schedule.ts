import type { Logger } from "../../kernel/logger.ts";
import { failureReason } from "../../kernel/error-reason.ts";
import { runHealthChecks, type HealthDeps } from "./checks.ts";

export const HEALTH_INTERVAL_MS = 5 * 60_000;

/**
 * Runs the health checks every 5 minutes in the API process (not the collector: a stopped collector is one of
 * the things they report). Each API replica runs its own; health-latest reads whichever pass is newest.
 */
export function startHealthSchedule(deps: HealthDeps & { logger: Logger }, intervalMs = HEALTH_INTERVAL_MS) {
  const pass = () =>
    runHealthChecks(deps, "schedule")
      .then((run) => {
        if (run.status !== "ok")
          deps.logger.warn("health checks found problems", {
            status: run.status,
            checks: run.checks.filter((c) => c.status !== "ok").map((c) => `${c.name}: ${c.message}`),
          });
      })
      .catch((err) => deps.logger.error("the health checks could not run", { error: failureReason(err) }));
  const first = setTimeout(pass, 10_000);
  const timer = setInterval(pass, intervalMs);
  return {
    stop: () => {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}
