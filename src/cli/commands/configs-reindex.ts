import { reindexAllConfigs } from "../../modules/configs/search-reindex.ts";
import { defineCommand } from "../command.ts";

export const configsReindexCommand = defineCommand({
  summary: "Rebuild the configuration search index from every stored version (after an upgrade that added it)",
  options: {},
  async run(_flags, { db, io }) {
    const { series, versions } = await reindexAllConfigs(db);
    io.print(`Indexed ${versions} versions of ${series} device commands.`);
  },
});
