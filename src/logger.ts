/**
 * One JSON line per event on stderr. Callers pass facts, never secrets: nothing here scrubs, so the rule is
 * enforced where values are chosen (device passwords and token values never reach a log call).
 */
export type Logger = {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
};

export function createLogger(write: (line: string) => void = (l) => console.error(l)): Logger {
  const log = (level: string) => (msg: string, fields?: Record<string, unknown>) =>
    write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }));
  return { info: log("info"), warn: log("warn"), error: log("error") };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
