import type { Clock } from "../../src/kernel/clock.ts";
import type { Db } from "../../src/db/client.ts";
import type { Logger } from "../../src/kernel/logger.ts";
import { getSyslogSettings } from "../../src/platform/settings/service.ts";
import {
  forgetHeartbeat,
  HEARTBEAT_INTERVAL_MS,
  recordHeartbeat,
  type HeartbeatIdentity,
} from "../../src/platform/jobs/heartbeats.ts";
import { describeError } from "../errors.ts";
import { DEFAULT_SYSLOG_OPTIONS, SyslogReceiver, type SyslogCounters, type SyslogReceiverOptions } from "./receiver.ts";

/**
 * Runs the syslog receiver as the settings' `syslog` section says, in every collector: started when `enabled`
 * turns on, restarted on another port or address, stopped when it turns off, within SETTINGS_POLL_MS. Only one
 * process can hold the port: a collector that cannot bind it (another collector on the box has it) says so and
 * tries again at the next poll. Its state and counters go into a heartbeat row of kind `syslog`, which the health
 * check and the metrics read (the API process may run elsewhere).
 */

export const SETTINGS_POLL_MS = 10_000;

export type SyslogState = {
  state: "off" | "listening" | "failed";
  port: number | null;
  error: string | null;
  counters: SyslogCounters | null;
};

export function startSyslogService(
  deps: { db: Db; clock: Clock; logger: Logger; queued?: () => void },
  who: Omit<HeartbeatIdentity, "kind" | "details">,
  options: Partial<typeof DEFAULT_SYSLOG_OPTIONS> = {},
) {
  let receiver: SyslogReceiver | undefined;
  let failure: { key: string; error: string } | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const state = (): SyslogState =>
    receiver
      ? { state: "listening", port: receiver.options.port, error: null, counters: { ...receiver.counters } }
      : failure
        ? { state: "failed", port: null, error: failure.error, counters: null }
        : { state: "off", port: null, error: null, counters: null };

  const beat = () =>
    recordHeartbeat(deps.db, { ...who, kind: "syslog", details: state() }, deps.clock.now()).catch((err) =>
      deps.logger.warn("could not record the syslog receiver's state", { error: describeError(err) }),
    );

  const apply = async () => {
    const settings = await getSyslogSettings(deps.db);
    const wanted: SyslogReceiverOptions | undefined =
      settings.enabled && !stopped
        ? {
            ...DEFAULT_SYSLOG_OPTIONS,
            ...options,
            port: settings.port,
            bindAddress: settings.bind_address,
            debounceMs: settings.debounce_seconds * 1000,
            relays: settings.relays,
          }
        : undefined;
    const key = wanted ? `${wanted.bindAddress}:${wanted.port}` : "";
    const current = receiver ? `${receiver.options.bindAddress}:${receiver.options.port}` : "";
    if (receiver && key === current) {
      if (wanted) Object.assign(receiver.options, { debounceMs: wanted.debounceMs, relays: wanted.relays });
      return;
    }
    if (receiver) {
      await receiver.stop();
      deps.logger.info("syslog receiver stopped", { port: receiver.options.port });
      receiver = undefined;
    }
    if (!wanted) {
      failure = undefined;
      return;
    }
    const next = new SyslogReceiver(deps, wanted);
    try {
      await next.start();
      receiver = next;
      failure = undefined;
      deps.logger.info("syslog receiver listening", { address: wanted.bindAddress, port: wanted.port });
    } catch (err) {
      const error = `cannot listen on ${key} (UDP and TCP): ${describeError(err)}`;
      if (failure?.error !== error) deps.logger.warn("syslog receiver cannot start; trying again in 10 s", { error });
      failure = { key, error };
    }
  };

  /** Applies the settings now (and once more if asked while applying). */
  const reconcile = async (): Promise<void> => {
    while (running) await running;
    running = apply()
      .catch((err) => deps.logger.warn("could not apply the syslog settings", { error: describeError(err) }))
      .then(beat)
      .finally(() => (running = undefined));
    await running;
  };

  void reconcile();
  const settingsTimer = setInterval(() => void reconcile(), SETTINGS_POLL_MS);
  const beatTimer = setInterval(() => void beat(), HEARTBEAT_INTERVAL_MS);
  return {
    reconcile,
    state,
    get receiver() {
      return receiver;
    },
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(settingsTimer);
      clearInterval(beatTimer);
      while (running) await running;
      await receiver?.stop();
      receiver = undefined;
      await forgetHeartbeat(deps.db, who.owner, "syslog").catch(() => {});
    },
  };
}
