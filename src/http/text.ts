import type { z } from "@hono/zod-openapi";

/*
 * Control characters in stored text: a NUL truncates the value in C tools and some drivers, an escape sequence
 * repaints the terminal of whoever lists it (svc prints names), a line break forges lines in CSV exports and logs.
 * The patterns name the ranges with \u escapes, so the published document's `pattern` reads the same in every
 * regex dialect: C0 (U+0000-U+001F, NUL included), DEL (U+007F) and C1 (U+0080-U+009F).
 */
const ONE_LINE = /^[^\u0000-\u001F\u007F-\u009F]*$/;
/** Free text keeps its tabs and line breaks (CR, LF); every other control character is refused. */
const FREE_TEXT = /^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$/;

/** A name-like field (names, usernames, models): no control character at all. Chain it after trim and length checks. */
export const singleLine = <S extends z.ZodString>(schema: S): S =>
  schema.regex(ONE_LINE, "must not contain control characters (such as NUL, a line break or an escape)") as S;

/** A description or note: tabs and line breaks allowed, other control characters (NUL, escapes) refused. */
export const freeText = <S extends z.ZodString>(schema: S): S =>
  schema.regex(FREE_TEXT, "must not contain control characters other than tabs and line breaks (such as NUL or an escape)") as S;
