import { DEFAULT_OXIDIZED_MAP, OXIDIZED_KEYS, parseOxidized, type OxidizedMap } from "../../modules/devices/index.ts";
import { CliError, defineCommand } from "../command.ts";
import { FILE_OPTION_HELP, readInventoryFile, runInventoryImport } from "../inventory.ts";

const describeMap = (map: OxidizedMap) =>
  Object.entries(map)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");

/** `name=0,model=1,...`: the positions of Oxidized's `source.csv.map` (plus `vars_map.enable`), from 0. */
export function parseOxidizedMap(text: string): OxidizedMap {
  const map: OxidizedMap = {};
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const match = /^([a-z]+)\s*[=:]\s*(\d+)$/.exec(part);
    const key = match?.[1] as (typeof OXIDIZED_KEYS)[number] | undefined;
    if (!match || !OXIDIZED_KEYS.includes(key!)) {
      throw new CliError(
        `--map '${part}' is not <key>=<position>; keys: ${OXIDIZED_KEYS.join(", ")}; e.g. --map ${describeMap(DEFAULT_OXIDIZED_MAP)}`,
      );
    }
    if (map[key!] !== undefined) throw new CliError(`--map names ${key} twice`);
    map[key!] = Number(match[2]);
  }
  for (const required of ["name", "model"] as const) {
    if (map[required] === undefined)
      throw new CliError(
        `--map must give the position of ${required}; e.g. --map ${describeMap(DEFAULT_OXIDIZED_MAP)}`,
      );
  }
  const positions = Object.values(map);
  if (new Set(positions).size !== positions.length) throw new CliError("--map gives two keys the same position");
  return map;
}

export const importOxidizedCommand = defineCommand({
  summary: "Import devices from an Oxidized router.db (CSV source); re-running it skips what is already imported",
  options: {
    file: { type: "string", placeholder: "router.db", required: true, positional: true, description: FILE_OPTION_HELP },
    map: {
      type: "string",
      placeholder: "list",
      description: `field positions from 0, as in Oxidized's source.csv.map (default ${describeMap(DEFAULT_OXIDIZED_MAP)}); keys: ${OXIDIZED_KEYS.join(", ")} (group becomes a tag)`,
    },
    delimiter: { type: "string", placeholder: "text", description: "field separator (default ':')" },
    "dry-run": { type: "boolean", description: "check every line and print the same report, changing nothing" },
    verbose: { type: "boolean", description: "also list every created and skipped line" },
  },
  async run(flags, ctx) {
    const map = flags.map === undefined ? DEFAULT_OXIDIZED_MAP : parseOxidizedMap(flags.map);
    const delimiter = flags.delimiter ?? ":";
    if (delimiter === "") throw new CliError("--delimiter must not be empty");
    const parsed = parseOxidized(readInventoryFile(flags.file), { map, delimiter });
    await runInventoryImport("oxidized", flags.file, parsed, flags, ctx);
  },
});
