import { writeSync } from "node:fs";
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

let stderr: ((line: string) => void) | undefined;

/** How long a line may wait to be written with the lines after it. */
const GATHER_MS = 100;
/** Unwritten log kept while stderr's reader takes nothing; past it, lines are dropped and counted. */
const MAX_WAITING_BYTES = 8 * 1024 * 1024;
/** How long an exiting process waits for stderr's reader to take what is left. */
const EXIT_WAIT_MS = 2000;

/**
 * Lines to stderr, gathered for up to GATHER_MS and written together. A collector writes a line per job, and
 * each write woke the log's reader (a terminal, journald, the launcher), which on a busy machine the kernel often
 * ran before the collector's event loop: in bench:collect that held the loop, and every session in it, some
 * 0.13 ms a line. And Node writes to a pipe synchronously only while its reader keeps up: once it fell behind,
 * Node queued the rest, and a process that then exited lost them. Here a write takes what the pipe takes now and
 * keeps the rest for the next turn (the event loop never waits on a reader), and an exiting process writes what
 * is left before it goes, waiting up to EXIT_WAIT_MS for a reader that is slow.
 */
function stderrLines(): (line: string) => void {
  if (stderr) return stderr;
  let waiting: Buffer[] = [];
  let gathered: string[] = [];
  let bytes = 0;
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;
  /** Writes what stderr takes without waiting; true when nothing is left. */
  const writeNow = (): boolean => {
    if (gathered.length) waiting.push(Buffer.from(gathered.join("")));
    gathered = [];
    if (dropped) {
      const warning = Buffer.from(
        `${JSON.stringify({ level: "warn", time: new Date().toISOString(), msg: "log lines dropped: stderr's reader took nothing for too long", dropped })}\n`,
      );
      // Counted as the lines are, for writing it subtracts what it wrote.
      bytes += warning.length;
      waiting.push(warning);
    }
    dropped = 0;
    while (waiting.length) {
      try {
        const written = writeSync(2, waiting[0]!);
        bytes -= written;
        if (written === waiting[0]!.length) waiting.shift();
        else waiting[0] = waiting[0]!.subarray(written);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EAGAIN") return false;
        // Nobody reads the log any more (the reader closed the pipe): the service goes on; there is nowhere to say so.
        waiting = [];
        bytes = 0;
      }
    }
    return true;
  };
  const writeLater = () => {
    timer = undefined;
    if (!writeNow()) timer = setTimeout(writeLater, GATHER_MS).unref();
  };
  process.on("exit", () => {
    clearTimeout(timer);
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    for (const until = Date.now() + EXIT_WAIT_MS; !writeNow() && Date.now() < until; ) Atomics.wait(sleeper, 0, 0, 5);
  });
  stderr = (line) => {
    const size = Buffer.byteLength(line) + 1;
    if (bytes + size > MAX_WAITING_BYTES) return void dropped++;
    bytes += size;
    gathered.push(`${line}\n`);
    timer ??= setTimeout(writeLater, GATHER_MS).unref();
  };
  return stderr;
}

/** `write` takes each line without its newline; by default lines go to stderr (stderrLines). */
export function createLogger(write: (line: string) => void = stderrLines(), options: LoggerOptions = {}): Logger {
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
  const at = (level: keyof Logger) => (msg: string, own?: Record<string, unknown>) =>
    logger[level](msg, own ? { ...fields, ...own } : fields);
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
