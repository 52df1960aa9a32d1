import { parseArgs } from "node:util";
import { CliError, type Command, type Flags } from "./command.ts";

/** node's parseArgs messages run to several sentences; keep the first and say where the options are listed. */
function describeParseError(name: string, err: Error): string {
  const seeHelp = `see svc ${name} --help`;
  const unknown = /^Unknown option '([^']+)'/.exec(err.message);
  if (unknown) return `${name} has no option '${unknown[1]}'; ${seeHelp}`;
  const positional = /^Unexpected argument '([^']*)'/.exec(err.message);
  if (positional) return `${name} takes no argument '${positional[1]}', only --options; ${seeHelp}`;
  const first = err.message.split(/\.(\s|$)/)[0]!;
  return `${first.charAt(0).toLowerCase()}${first.slice(1)}; ${seeHelp}`;
}

/** What npm exports for `--flag=value` it kept for itself: npm_config_ and the name with `-` as `_`. */
const npmConfigVariable = (flag: string) => `npm_config_${flag.replaceAll("-", "_")}`;

/**
 * Parses a command's flags strictly. Returns "help" when --help was asked for, whatever else was given. `env` is
 * read only for options marked npmConfig, and only when an npm script runs the console (npm_lifecycle_event).
 */
export function parseCommandFlags(
  name: string,
  command: Command,
  args: string[],
  env: Record<string, string | undefined> = {},
): Flags | "help" {
  const options = Object.fromEntries(
    Object.entries(command.options).map(([flag, option]) => [flag, { type: option.type }]),
  );
  // positional options take the command's arguments in the order the options are declared
  const positionals = Object.entries(command.options)
    .filter(([, option]) => option.positional)
    .map(([flag]) => flag);
  let values: Flags;
  try {
    const parsed = parseArgs({
      args,
      options: { ...options, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: positionals.length > 0,
    });
    values = parsed.values;
    if (parsed.positionals.length > positionals.length) {
      const takes = positionals.length === 1 ? "one argument" : `${positionals.length} arguments`;
      throw new CliError(`${name} takes ${takes}, got ${parsed.positionals.length}; see svc ${name} --help`);
    }
    parsed.positionals.forEach((value, i) => {
      const positional = positionals[i]!;
      if (values[positional] !== undefined)
        throw new CliError(`${name} got both an argument and --${positional}; give one`);
      values[positional] = value;
    });
  } catch (err) {
    if (err instanceof Error && "code" in err && String(err.code).startsWith("ERR_PARSE_ARGS")) {
      throw new CliError(describeParseError(name, err));
    }
    throw err;
  }
  if (values.help) return "help";
  for (const [flag, option] of Object.entries(command.options)) {
    if (option.npmConfig && option.type === "string" && values[flag] === undefined && env.npm_lifecycle_event) {
      values[flag] = env[npmConfigVariable(flag)];
    }
    if (option.type === "boolean") values[flag] ??= false;
    else if (typeof values[flag] === "string") values[flag] = values[flag].trim();
    if (option.required && !values[flag]) {
      throw new CliError(
        `${name} needs --${flag} <${option.placeholder ?? "value"}>: ${option.description}; see svc ${name} --help`,
      );
    }
  }
  return values;
}
