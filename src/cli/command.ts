import type { Clock } from "../kernel/clock.ts";
import type { Config } from "../kernel/config.ts";
import type { Db } from "../db/client.ts";
import type { MigrationReport } from "./database.ts";
import type { BuiltinTemplate } from "../modules/templates/index.ts";

/** A flag a command accepts; the same description feeds `util.parseArgs` and the command's --help. */
export type Option = {
  type: "string" | "boolean";
  description: string;
  /** Shown in usage as `--name <placeholder>`; string options only. */
  placeholder?: string;
  required?: boolean;
  /** May also be given as the command's argument: `svc import:rancid router.db` means `--file router.db`. */
  positional?: boolean;
  /**
   * Under `npm run <script> --flag=value` (no `--`), npm keeps the flag as its own setting and hands it on only
   * as the variable npm_config_<flag>; read it from there when the flag itself is absent. Opt-in per option, as
   * npm exports its own settings the same way (`email`, `username`...), which must never become a command's input.
   */
  npmConfig?: boolean;
};

/** A mistake the person at the console can fix; its message says how, on one line. */
export class CliError extends Error {}

export type ConsoleIo = {
  /** One line of stdout. */
  print(line: string): void;
  /** Everything piped into stdin, as text. */
  readStdin(): Promise<string>;
};

/** What a command that declares `database: false` gets: no database is opened, created or migrated for it. */
export type OfflineContext = {
  config: Config;
  clock: Clock;
  io: ConsoleIo;
};

export type CommandContext = OfflineContext & {
  db: Db;
  /** What opening the database did, since every command that uses it migrates before it acts. */
  migration: MigrationReport;
  /** The built-in templates as shipped (collector/templates), read once when the database was brought up to date. */
  builtinTemplates: readonly BuiltinTemplate[];
};

export type Flags = Record<string, string | boolean | undefined>;

export type Command = {
  /** One line for `svc --help`. */
  summary: string;
  options: Record<string, Option>;
} & (
  | { database?: true; run(flags: Flags, ctx: CommandContext): Promise<void> }
  /** The command never touches the database (e.g. it only writes files), so the console leaves it closed. */
  | { database: false; run(flags: Flags, ctx: OfflineContext): Promise<void> }
);

type FlagValues<O extends Record<string, Option>> = {
  [K in keyof O]: O[K]["type"] extends "boolean"
    ? boolean
    : O[K]["required"] extends true
      ? string
      : string | undefined;
};

/**
 * Types a command's flags from its option table. The dispatcher has already parsed them, checked required
 * ones and defaulted booleans to false, which is what makes the cast below hold.
 */
export function defineCommand<const O extends Record<string, Option>>(command: {
  summary: string;
  options: O;
  database: false;
  run(flags: FlagValues<O>, ctx: OfflineContext): Promise<void>;
}): Command;
export function defineCommand<const O extends Record<string, Option>>(command: {
  summary: string;
  options: O;
  run(flags: FlagValues<O>, ctx: CommandContext): Promise<void>;
}): Command;
export function defineCommand(command: unknown): Command {
  return command as Command;
}
