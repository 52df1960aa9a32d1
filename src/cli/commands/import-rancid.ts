import { parseRancid } from "../../modules/devices/index.ts";
import { defineCommand } from "../command.ts";
import { FILE_OPTION_HELP, readInventoryFile, runInventoryImport } from "../inventory.ts";

export const importRancidCommand = defineCommand({
  summary:
    "Import devices from a RANCID router.db (name;type;state or name:type:state); re-running it skips what is already imported",
  options: {
    file: { type: "string", placeholder: "router.db", required: true, positional: true, description: FILE_OPTION_HELP },
    "dry-run": { type: "boolean", description: "check every line and print the same report, changing nothing" },
    verbose: { type: "boolean", description: "also list every created and skipped line" },
  },
  async run(flags, ctx) {
    await runInventoryImport("rancid", flags.file, parseRancid(readInventoryFile(flags.file)), flags, ctx);
  },
});
