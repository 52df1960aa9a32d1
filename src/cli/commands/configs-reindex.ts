import { maintainConfigStorage } from "../../modules/configs/index.ts";
import { defineCommand } from "../command.ts";

export const configsReindexCommand = defineCommand({
  summary:
    "Rebuild the configuration search index from every stored version (after an upgrade that added it), then compact storage",
  options: {},
  async run(_flags, { db, io }) {
    const report = await maintainConfigStorage(db, { reindex: true, progress: (line) => io.print(line) });
    io.print(
      `Indexed ${report.versionsReindexed} versions of ${report.seriesReindexed} device commands (${report.commonGramsAdded} index tokens newly common); recompressed ${report.textsRecompressed} texts; released ${report.pagesFreed} free pages.`,
    );
  },
});
