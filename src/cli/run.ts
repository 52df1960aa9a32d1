import type { Clock } from "../kernel/clock.ts";
import { ConfigError, loadConfig } from "../kernel/config.ts";
import { UserInputError } from "../platform/auth/users.ts";
import { CliError, type Command, type ConsoleIo } from "./command.ts";
import { DISK_FULL_REASON, isDiskFull } from "../kernel/error-reason.ts";
import { openMigratedDatabase } from "./database.ts";
import { parseCommandFlags } from "./flags.ts";
import { commandHelp, overviewHelp } from "./help.ts";

export type ConsoleDeps = {
  env: Record<string, string | undefined>;
  io: ConsoleIo;
  /** stderr; receives exactly one line per failure. */
  printError(line: string): void;
  clock: Clock;
};

/** Errors whose message already tells the person what to fix; anything else is reported as a failure. */
const isExplained = (err: unknown): err is Error =>
  err instanceof CliError || err instanceof UserInputError || err instanceof ConfigError;

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, " ").trim();

/** Runs one console invocation and returns its exit code: 0 when it did what was asked, 1 otherwise. */
export async function runConsole(
  commands: Record<string, Command>,
  argv: string[],
  deps: ConsoleDeps,
): Promise<number> {
  const [spelled, ...given] = argv;
  // The npm and Deno scripts are named `svc:<command>`, and the docs spell commands that way too:
  // `npx svc svc:api-docs:build` is `npx svc api-docs:build`.
  const unprefixed = spelled?.startsWith("svc:") ? spelled.slice("svc:".length) : undefined;
  const name = unprefixed !== undefined && Object.hasOwn(commands, unprefixed) ? unprefixed : spelled;
  // `deno task svc:x -- --flag` passes on the `--` that `npm run svc:x -- --flag` swallows; accept both spellings.
  const args = given[0] === "--" ? given.slice(1) : given;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    deps.io.print(overviewHelp(commands));
    return 0;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  try {
    if (!command) throw new CliError(`unknown command '${name}'; use one of: ${Object.keys(commands).join(", ")}`);
    const flags = parseCommandFlags(name, command, args, deps.env);
    if (flags === "help") {
      deps.io.print(commandHelp(name, command));
      return 0;
    }
    const context = { config: loadConfig(deps.env), clock: deps.clock, io: deps.io };
    if (command.database === false) {
      await command.run(flags, context);
      return 0;
    }
    const { db, client, migration, builtinTemplates } = await openMigratedDatabase(context.config, deps.clock);
    try {
      await command.run(flags, { ...context, db, migration, builtinTemplates });
    } finally {
      client.close();
    }
    return 0;
  } catch (err) {
    const message = isExplained(err)
      ? err.message
      : isDiskFull(err)
        ? `${name} failed: ${DISK_FULL_REASON}`
        : `${name} failed: ${err instanceof Error ? err.message : String(err)}`;
    deps.printError(`svc: ${oneLine(message)}`);
    return 1;
  }
}
