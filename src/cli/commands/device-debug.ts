import { hostname } from "node:os";
import { eq, or } from "drizzle-orm";
import { runDownloadJob } from "../../../collector/download.ts";
import { keepLease } from "../../../collector/lease.ts";
import { openSecretBox } from "../../runtime/bootstrap.ts";
import { nameKey } from "../../db/name-key.ts";
import { devices } from "../../db/schema/index.ts";
import { getJob, PRIORITY, startDeviceJob } from "../../platform/jobs/queue.ts";
import { createLogger } from "../../kernel/logger.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { loadAppKey } from "../../runtime/app-key-file.ts";
import { CliError, defineCommand } from "../command.ts";

/** No debug session holds the device longer than a collector's job would (DEFAULT_WORKER_OPTIONS.jobTimeLimitMs). */
const TIME_LIMIT_MS = 10 * 60_000;
const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

export const deviceDebugCommand = defineCommand({
  summary:
    "Run one download of a device here, printing the whole session as it happens (secrets masked), and store it as a download would",
  options: {
    device: {
      type: "string",
      placeholder: "ID|NAME",
      required: true,
      positional: true,
      description: "the device, by id or by name",
    },
  },
  async run(flags, { db, config, clock, io }) {
    const given = flags.device.trim();
    const [device] = await db
      .select({ id: devices.id, name: devices.name })
      .from(devices)
      .where(
        /^\d+$/.test(given)
          ? or(eq(devices.id, Number(given)), eq(devices.nameKey, nameKey(given)))
          : eq(devices.nameKey, nameKey(given)),
      );
    if (!device) throw new CliError(`no device has the id or name '${given}' (GET /api/v1/devices lists them)`);
    const owner = `svc device:debug on ${hostname()} (pid ${process.pid})`;
    // A collector's lease, renewed as a collector renews it: a debug session killed mid-way frees the device
    // within one lease, not at the end of its time limit.
    const job = await startDeviceJob(
      db,
      { type: "download", deviceId: device.id, trigger: "cli", priority: PRIORITY.downloadNow },
      owner,
      clock.now(),
      config.collectorLeaseMs,
    );
    if (!job)
      throw new CliError(
        `a job is running for device ${device.name} right now; run svc device:debug again when it has finished`,
      );

    await recordActivity(
      db,
      { system: "svc device:debug" },
      { action: "device.debug", subjectType: "device", subjectId: device.id, after: { job_id: job.id } },
      clock.now(),
    );
    io.print(
      `Debugging device ${device.name} (id ${device.id}) as job ${job.id}; the session follows, secrets masked.`,
    );
    let live = true;
    const controller = new AbortController();
    const limit = setTimeout(
      () => controller.abort(`the session ran past ${TIME_LIMIT_MS / 60_000} minutes`),
      TIME_LIMIT_MS,
    );
    const stopRenewing = keepLease({ db, clock, owner, logger: createLogger() }, job.id, config.collectorLeaseMs, () =>
      controller.abort("the job's lease was lost"),
    );
    // Ctrl-C (or a stop) ends the session and its job at once: left running, the job would hold the device until
    // its lease ran out, with download-now answering the dead job meanwhile.
    let interrupted: string | undefined;
    const interrupt = (signal: NodeJS.Signals) => {
      interrupted = signal;
      controller.abort(`svc device:debug was interrupted (${signal})`);
    };
    for (const signal of STOP_SIGNALS) process.once(signal, interrupt);
    try {
      const secrets = await openSecretBox((await loadAppKey(config, db)).key);
      await runDownloadJob(
        {
          db,
          secrets,
          clock,
          owner,
          logger: createLogger(),
          onTranscriptLine: (line) => live && io.print(`| ${line}`),
        },
        job,
        controller.signal,
      );
    } finally {
      clearTimeout(limit);
      stopRenewing();
      for (const signal of STOP_SIGNALS) process.off(signal, interrupt);
      // What still arrives (the echo of the logout) would print after the outcome.
      live = false;
    }
    const done = (await getJob(db, job.id))!;
    io.print(`Job ${done.id} ended ${done.outcome}: ${done.message ?? ""}`);
    if (interrupted)
      throw new CliError(`interrupted (${interrupted}): job ${done.id} ended; the device is free for its next backup`);
    if (done.outcome !== "success" && done.outcome !== "unchanged") {
      throw new CliError(
        `the download failed (${done.outcome}); GET /api/v1/devices/${device.id}/last-failure keeps this transcript`,
      );
    }
  },
});
