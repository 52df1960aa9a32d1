import type { Command } from "./command.ts";

const flagUsage = (name: string, option: Command["options"][string]) =>
  option.type === "boolean" ? `--${name}` : `--${name} <${option.placeholder ?? "value"}>`;

/** A positional-capable option reads `<router.db>` in the usage line; --file still works. */
const usageOf = (name: string, option: Command["options"][string]) =>
  option.positional ? `<${option.placeholder ?? name}>` : flagUsage(name, option);

export function commandHelp(name: string, command: Command): string {
  const entries = Object.entries(command.options);
  const usage = entries.map(([flag, option]) =>
    option.required ? usageOf(flag, option) : `[${usageOf(flag, option)}]`,
  );
  const rows = [
    ...entries.map(([flag, option]) => [flagUsage(flag, option), option.description]),
    ["--help", "show this help"],
  ];
  const width = Math.max(...rows.map(([left]) => left!.length));
  return [
    `Usage: svc ${[name, ...usage].join(" ")}`,
    "",
    command.summary,
    "",
    "Options:",
    ...rows.map(([left, right]) => `  ${left!.padEnd(width)}  ${right}`),
  ].join("\n");
}

export function overviewHelp(commands: Record<string, Command>): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length));
  return [
    "Usage: svc <command> [options]",
    "",
    "Commands:",
    ...Object.entries(commands).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
    "",
    "Run svc <command> --help for a command's options. Settings come from the environment (STORAGE_DIR, DATABASE_URL, ...).",
  ].join("\n");
}
