import type { Clock } from "../src/kernel/clock.ts";
import type { Db } from "../src/db/client.ts";
import { extendLease } from "../src/platform/jobs/queue.ts";
import type { Logger } from "../src/kernel/logger.ts";
import { describeError } from "./errors.ts";

/**
 * Keeps a running job's lease alive: renewed to `leaseMs` ahead every third of it, so a collector that dies lets
 * the job go within one lease. `lost` is called once the lease is gone (another collector took the job after it
 * expired, or it was handed back): the caller abandons the job. Returns what stops the renewals.
 */
export function keepLease(
  deps: { db: Db; clock: Clock; logger: Logger; owner: string },
  jobId: number,
  leaseMs: number,
  lost: () => void,
): () => void {
  const timer = setInterval(
    async () => {
      try {
        if (!(await extendLease(deps.db, jobId, deps.owner, deps.clock.now(), leaseMs))) lost();
      } catch (err) {
        deps.logger.warn("lease renewal failed", { job: jobId, error: describeError(err) });
      }
    },
    Math.max(100, leaseMs / 3),
  );
  return () => clearInterval(timer);
}
