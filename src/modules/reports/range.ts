import { z } from "@hono/zod-openapi";
import { ApiError } from "../../platform/http/errors.ts";

const DAY = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const MAX_DAYS = 1000;

export const rangeParams = {
  from: z
    .string()
    .regex(DATE, "must be a date such as 2026-06-01")
    .optional()
    .openapi({ description: "First day (UTC); default 29 days before `to`", example: "2026-05-01" }),
  to: z
    .string()
    .regex(DATE, "must be a date such as 2026-06-30")
    .optional()
    .openapi({ description: "Last day (UTC), included; default today", example: "2026-05-31" }),
};

/** A range of whole UTC days: [from, end) in epoch ms. */
export type DayRange = { from: number; end: number };

export function dayRange(query: { from?: string; to?: string }, now: Date): DayRange {
  const to = query.to ? Date.parse(query.to) : Math.floor(now.getTime() / DAY) * DAY;
  const from = query.from ? Date.parse(query.from) : to - 29 * DAY;
  if (Number.isNaN(to) || Number.isNaN(from))
    throw ApiError.validation({
      [Number.isNaN(to) ? "to" : "from"]: [`${Number.isNaN(to) ? "to" : "from"} must be a real date`],
    });
  if (from > to) throw ApiError.validation({ from: ["from must not be after to"] });
  if ((to - from) / DAY + 1 > MAX_DAYS)
    throw ApiError.validation({ from: [`from and to span more than ${MAX_DAYS} days`] });
  return { from, end: to + DAY };
}
