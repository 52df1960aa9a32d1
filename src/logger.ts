import { pino } from "pino";
import { humanLine } from "./logger-human.ts";

/**
 * One logger for the API and the collector: pino, one JSON line per event (`time`, `level`, `msg`, then the
 * caller's fields), or one human line when the log goes to a terminal. Callers pass facts, never secrets: nothing
 * here scrubs, so the rule is enforced where values are chosen (device passwords and token values never reach a
 * log call).
 */
export type Logger = {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
};

export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type LoggerOptions = {
  /** The least severe line written (LOG_LEVEL); info by default. */
  level?: LogLevel;
  /** One readable line per event instead of JSON: the launchers set it when the log stream is a terminal. */
  human?: boolean;
};

/** `write` takes each line without its newline; by default lines go to stderr. */
export function createLogger(write: (line: string) => void = (l) => console.error(l), options: LoggerOptions = {}): Logger {
  const human = options.human ?? false;
  const base = pino(
    {
      level: options.level ?? "info",
      base: undefined,
      messageKey: "msg",
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    { write: (line: string) => write(human ? humanLine(line) : line.endsWith("\n") ? line.slice(0, -1) : line) },
  );
  const at = (level: "debug" | "info" | "warn" | "error") => (msg: string, fields?: Record<string, unknown>) =>
    fields ? base[level](fields, msg) : base[level](msg);
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** The same logger with `fields` on every line (a request's id, a job's id); a line's own fields win. */
export function withFields(logger: Logger, fields: Record<string, unknown>): Logger {
  const at = (level: keyof Logger) => (msg: string, own?: Record<string, unknown>) => logger[level](msg, own ? { ...fields, ...own } : fields);
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
