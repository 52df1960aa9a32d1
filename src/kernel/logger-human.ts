/**
 * A JSON log line as one line a person reads in a terminal: `12:00:00.000 WARN  message key=value ...`, local time,
 * values that hold spaces or quotes JSON-quoted. It is the only pretty printer (no pino-pretty dependency).
 */
export function humanLine(json: string): string {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.trimEnd();
  }
  const { time, level, msg, ...fields } = event;
  const at = typeof time === "string" ? new Date(time) : new Date();
  const clock =
    [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":") +
    "." +
    String(at.getMilliseconds()).padStart(3, "0");
  const parts = [
    clock,
    String(level ?? "")
      .toUpperCase()
      .padEnd(5),
    String(msg ?? ""),
  ];
  for (const [key, value] of Object.entries(fields)) parts.push(`${key}=${shown(value)}`);
  return parts.join(" ");
}

function shown(value: unknown): string {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}
