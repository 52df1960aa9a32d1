import { Cron } from "croner";

/** The five fields, as a problem message names them, with what each accepts. */
const FIELDS = [
  { name: "minute", accepts: "0-59" },
  { name: "hour", accepts: "0-23" },
  { name: "day-of-month", accepts: "1-31, L or W forms" },
  { name: "month", accepts: "1-12 or JAN-DEC" },
  { name: "day-of-week", accepts: "0-7 (0 and 7 are Sunday) or SUN-SAT" },
] as const;

const parse = (expression: string, timezone?: string) =>
  new Cron(expression, { mode: "5-part", timezone, paused: true });

/** A cron expression as rConfig clients send it (an array of the five fields) or as text, as one string. */
export const cronText = (value: string | (string | number)[]): string =>
  (Array.isArray(value) ? value.map(String).join(" ") : value).trim().replace(/\s+/g, " ");

/**
 * Checks a five-field cron expression; on failure says which field is wrong, phrased to follow the field's
 * name in a 422 ("task_cron has an invalid hour field '24': use 0-23"). Each field is tried on its own
 * (the others as *), so the message names the culprit whatever croner's own wording.
 */
export function cronProblem(expression: string): string | undefined {
  const parts = expression.split(" ").filter(Boolean);
  if (parts.length !== 5) {
    return `must have 5 fields (minute hour day-of-month month day-of-week); '${expression}' has ${parts.length}`;
  }
  for (let i = 0; i < 5; i++) {
    const probe = parts.map((p, j) => (j === i ? p : "*")).join(" ");
    try {
      parse(probe);
    } catch {
      return `has an invalid ${FIELDS[i]!.name} field '${parts[i]}': use ${FIELDS[i]!.accepts}, with lists (a,b), ranges (a-b) and steps (*/n)`;
    }
  }
  let cron: Cron;
  try {
    cron = parse(expression);
  } catch (err) {
    return `is not a valid cron expression: ${err instanceof Error ? err.message.replace(/^CronPattern: /, "") : String(err)}`;
  }
  if (!cron.nextRun(new Date())) return `never matches a date (e.g. February 30th); '${expression}'`;
  return undefined;
}

/** The canonical IANA name of a time zone ("europe/berlin" -> "Europe/Berlin"), or undefined if unknown. */
export function canonicalTimeZone(name: string): string | undefined {
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

export type Schedule = { cron: string; timezone: string };

/** The next `count` run times strictly after `from`, in UTC. */
export function nextRuns(schedule: Schedule, from: Date, count: number): Date[] {
  return parse(schedule.cron, schedule.timezone).nextRuns(count, from);
}

/** Whether any slot falls in (after, now]: one step of the cron, for the scheduler's cheap first look. */
export function hasDueSlot(schedule: Schedule, after: Date, now: Date): boolean {
  const next = parse(schedule.cron, schedule.timezone).nextRun(after);
  return next !== null && next.getTime() <= now.getTime();
}

/**
 * The slots in (after, now]: how many there are (counting stops at `cap`) and the latest one. A scheduler
 * that was down for a month on a per-minute cron does not walk 43,200 slots: past the cap it asks for the
 * last slot before now directly.
 */
export function dueSlots(
  schedule: Schedule,
  after: Date,
  now: Date,
  cap = 1000,
): { count: number; latest: Date } | undefined {
  const cron = parse(schedule.cron, schedule.timezone);
  let count = 0;
  let latest: Date | undefined;
  let cursor: Date | null = cron.nextRun(after);
  while (cursor && cursor.getTime() <= now.getTime()) {
    count++;
    latest = cursor;
    if (count >= cap) {
      const [last] = cron.previousRuns(1, new Date(now.getTime() + 1));
      if (last && last.getTime() > latest.getTime()) latest = last;
      break;
    }
    cursor = cron.nextRun(cursor);
  }
  return latest ? { count, latest } : undefined;
}
