import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { openSecretBox } from "../runtime/bootstrap.ts";
import { importInventory, type InventoryReport, type ParsedInventory } from "../modules/devices/index.ts";
import { inventoryModels, type InventorySource } from "../modules/templates/index.ts";
import { loadAppKey } from "../runtime/app-key-file.ts";
import { CliError, type CommandContext } from "./command.ts";
import { plural } from "../kernel/words.ts";

/** Where --file's help says when the command fails, since the exit code is part of a script's contract. */
export const FILE_OPTION_HELP =
  "the router.db to read; exit 1 if it cannot be read or not one of its lines can be imported (lines already in netkeep count as fine)";

export function readInventoryFile(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "it is a directory"
          : code === "EACCES"
            ? "permission denied"
            : String((err as Error).message);
    throw new CliError(`--file '${path}' cannot be read: ${why}`);
  }
}

/** The summary, then one line per problem (and with --verbose per device), each naming the file's line. */
function reportLines(file: string, report: InventoryReport, options: { dryRun: boolean; verbose: boolean }): string[] {
  const ignored = report.lines - report.deviceLines;
  const verb = options.dryRun
    ? { created: "Would create", skipped: "would skip", rejected: "would reject" }
    : { created: "Created", skipped: "skipped", rejected: "rejected" };
  const lines = [
    `Read ${file}: ${plural(report.lines, "line")}, ${plural(report.deviceLines, "device line")}, ${plural(ignored, "comment or blank line")}.`,
    `${verb.created} ${plural(report.created, "device")}, ${verb.skipped} ${report.skipped} already in netkeep, ${verb.rejected} ${plural(report.rejected, "line")}.` +
      (options.dryRun ? " Dry run: nothing was changed." : ""),
  ];
  for (const o of report.outcomes) {
    const who = o.name ? ` ${o.name}:` : "";
    if (o.outcome === "rejected") lines.push(`line ${o.line}:${who} rejected: ${o.reason}`);
    else if (options.verbose) lines.push(`line ${o.line}:${who} ${o.outcome}${o.reason ? `: ${o.reason}` : ""}`);
    for (const w of o.warnings) lines.push(`line ${o.line}:${who} warning: ${w}`);
  }
  return lines;
}

/** The shared body of svc import:oxidized and import:rancid, once the file is parsed. */
export async function runInventoryImport(
  source: InventorySource,
  file: string,
  parsed: ParsedInventory,
  flags: { "dry-run": boolean; verbose: boolean },
  { db, config, clock, io, builtinTemplates }: CommandContext,
): Promise<void> {
  const name = basename(file);
  if (parsed.entries.length + parsed.rejected.length === 0)
    throw new CliError(`${name} has no device lines, only comments and blank lines`);
  const secrets = await openSecretBox((await loadAppKey(config, db)).key);
  const ctx = {
    db,
    secrets,
    actor: { system: `svc import:${source}` },
    scope: { all: true as const },
    abilities: "all" as const,
    now: clock.now(),
  };
  const models = inventoryModels(builtinTemplates);
  const report = await importInventory(ctx, source, parsed, { dryRun: flags["dry-run"], models });
  for (const line of reportLines(name, report, { dryRun: flags["dry-run"], verbose: flags.verbose })) io.print(line);
  if (report.created + report.skipped === 0) {
    throw new CliError(`not one line of ${name} can be imported; the lines above say why`);
  }
}
