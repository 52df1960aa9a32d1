import type { Clock } from "../src/kernel/clock.ts";
import type { Db } from "../src/db/client.ts";
import type { Logger } from "../src/kernel/logger.ts";
import {
  forgetHeartbeats,
  HEARTBEAT_INTERVAL_MS,
  recordHeartbeat,
  type HeartbeatIdentity,
} from "../src/platform/jobs/heartbeats.ts";
import { describeError } from "./errors.ts";

/**
 * Says every HEARTBEAT_INTERVAL_MS that this collector is alive (the collectors health check and the system
 * information read it); stop() removes the row, so a collector stopped on purpose is not reported as silent.
 */
export function startHeartbeat(deps: { db: Db; clock: Clock; logger: Logger }, who: Omit<HeartbeatIdentity, "kind">) {
  const beat = () =>
    recordHeartbeat(deps.db, { ...who, kind: "collector" }, deps.clock.now()).catch((err) =>
      deps.logger.warn("could not record the collector's heartbeat", { error: describeError(err) }),
    );
  void beat();
  const timer = setInterval(beat, HEARTBEAT_INTERVAL_MS);
  return {
    /** The scheduler's own heartbeat, given after each pass it completes. */
    schedulerPassed: () =>
      recordHeartbeat(deps.db, { ...who, kind: "scheduler" }, deps.clock.now()).catch((err) =>
        deps.logger.warn("could not record the scheduler's heartbeat", { error: describeError(err) }),
      ),
    async stop(): Promise<void> {
      clearInterval(timer);
      await forgetHeartbeats(deps.db, who.owner).catch((err) =>
        deps.logger.warn("could not remove the collector's heartbeat", { error: describeError(err) }),
      );
    },
  };
}
