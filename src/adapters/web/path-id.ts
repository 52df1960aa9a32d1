import { ApiError } from "../../platform/http/errors.ts";

/** A record id from a page's path: anything but a positive whole number names no record (404, as the API). */
export function pathId(raw: string, what: string): number {
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id)) throw ApiError.notFound(`${what} ${raw.slice(0, 40)}`);
  return id;
}
