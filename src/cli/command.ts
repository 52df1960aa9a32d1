import type { Clock } from "../clock.ts";
import type { Config } from "../config.ts";
import type { Db } from "../db/client.ts";
import type { MigrationReport } from "./database.ts";

/** A flag a command accepts; the same description feeds `util.parseArgs` and the command's --help. */
export type Option = {
  type: "string" | "boolean";
  description: string;
  /** Shown in usage as `--name <placeholder>`; string options only. */
  placeholder?: string;
  required?: boolean;
  /** May also be given as the command's argument: `svc import:rancid router.db` means `--file router.db`. */
  positional?: boolean;
};

/** A mistake the person at the console can fix; its message says how, on one line. */
export class CliError extends Error {}

export type ConsoleIo = {
  /** One line of stdout. */
  print(line: string): void;
  /** Everything piped into stdin, as text. */
  readStdin(): Promise<string>;
};

export type CommandContext = {
  db: Db;
  config: Config;
  clock: Clock;
  io: ConsoleIo;
  /** What opening the database did, since every command migrates before it acts. */
  migration: MigrationReport;
};

export type Flags = Record<string, string | boolean | undefined>;

export type Command = {
  /** One line for `svc --help`. */
  summary: string;
  options: Record<string, Option>;
  run(flags: Flags, ctx: CommandContext): Promise<void>;
};

type FlagValues<O extends Record<string, Option>> = {
  [K in keyof O]: O[K]["type"] extends "boolean" ? boolean : O[K]["required"] extends true ? string : string | undefined;
};

/**
 * Types a command's flags from its option table. The dispatcher has already parsed them, checked required
 * ones and defaulted booleans to false, which is what makes the cast below hold.
 */
export function defineCommand<const O extends Record<string, Option>>(command: {
  summary: string;
  options: O;
  run(flags: FlagValues<O>, ctx: CommandContext): Promise<void>;
}): Command {
  return command as unknown as Command;
}
