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
  schema.regex(
    FREE_TEXT,
    "must not contain control characters other than tabs and line breaks (such as NUL or an escape)",
  ) as S;

/**
 * Characters a person does not see: zero-width space, non-joiner and joiner, word joiner and invisible operators,
 * soft hyphen, Mongolian vowel separator, direction marks and embeddings, byte-order mark. In a name they make two
 * names that look the same differ.
 */
const INVISIBLE = /^[^\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]*$/;

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
/** How many characters a person sees: grapheme clusters (a letter with its combining marks is one). */
export const visibleLength = (text: string) => {
  let n = 0;
  for (const _ of graphemes.segment(text)) n++;
  return n;
};

/**
 * A name whose length rule counts what a person sees: no invisible character, and at least `min` grapheme
 * clusters (the schema's own `min` counts UTF-16 units, which combining marks inflate, and reports a shorter text
 * itself). Chain it after singleLine.
 */
export const visibleName = <S extends z.ZodString>(schema: S, min: number): S =>
  schema
    .regex(
      INVISIBLE,
      "must not contain invisible characters (zero-width spaces or joiners, soft hyphens, direction marks)",
    )
    .refine(
      (text) => text.length < min || visibleLength(text) >= min,
      `must be at least ${min} characters as shown (a letter with its accents counts once)`,
    ) as S;
