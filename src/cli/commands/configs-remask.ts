import { remaskStoredConfigs } from "../../modules/configs/index.ts";
import { defineCommand } from "../command.ts";

export const configsRemaskCommand = defineCommand({
  summary:
    "Apply today's masking rules (each device's template, then the generic layer) to every stored version, rewriting those that change",
  options: {
    "dry-run": { type: "boolean", description: "count the versions that would change, change nothing" },
  },
  async run(flags, { db, clock, io }) {
    const dryRun = flags["dry-run"];
    const report = await remaskStoredConfigs(db, {
      actor: { system: "svc configs:remask" },
      now: clock.now(),
      dryRun,
      progress: (line) => io.print(line),
    });
    io.print(
      `${dryRun ? "Would rewrite" : "Rewrote"} ${report.versions_rewritten} of ${report.versions_checked} versions in ${report.series_rewritten} device commands.`,
    );
  },
});
