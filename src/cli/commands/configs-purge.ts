import { purgeConfigs } from "../../modules/configs/index.ts";
import { defineCommand } from "../command.ts";
import { formatTable, formatTime } from "../table.ts";

export const configsPurgeCommand = defineCommand({
  summary: "Delete stored configurations the retention policy no longer keeps, and old failed download records",
  options: {
    "dry-run": { type: "boolean", description: "list what would be deleted, changing nothing" },
  },
  async run(flags, { db, clock, io }) {
    const report = await purgeConfigs(db, clock.now(), {
      dryRun: flags["dry-run"],
      actor: { system: "svc configs:purge" },
      progress: (line) => io.print(line),
    });
    const { keepDays, keepVersions } = report.policy;
    if (report.maintenance) {
      const m = report.maintenance;
      io.print(
        `Storage maintenance: ${m.commonGramsAdded} index tokens newly common, ${m.seriesReindexed} device commands reindexed, ${m.textsRecompressed} texts recompressed, ${m.pagesFreed} free pages released.`,
      );
    }
    if (report.maintenanceError)
      io.print(`Storage maintenance failed (the purge itself is done): ${report.maintenanceError}`);
    if (keepDays === null && keepVersions === null) {
      io.print("No retention policy is set, so nothing is purged; set one with PUT /api/v1/configs/retention-policy.");
      return;
    }
    io.print(
      `Policy: ${keepDays === null ? "no age limit" : `keep ${keepDays} days`}, ${keepVersions === null ? "no count limit" : `keep the newest ${keepVersions} versions`}; the latest version is always kept.`,
    );
    if (flags["dry-run"] && report.configs.length) {
      const rows = report.configs.map((c) => [
        String(c.id),
        c.deviceName,
        c.command,
        String(c.version),
        formatTime(c.lastSeenAt, ""),
      ]);
      for (const line of formatTable(["ID", "DEVICE", "COMMAND", "VERSION", "LAST SEEN"], rows)) io.print(line);
    }
    const verb = flags["dry-run"] ? "Would delete" : "Deleted";
    io.print(
      `${verb} ${report.configs.length} configuration versions (${report.changes} change rows), ${report.blobs} stored texts (${report.blobBytes} bytes) and ${report.failedJobIds.length} failed download records.`,
    );
  },
});
