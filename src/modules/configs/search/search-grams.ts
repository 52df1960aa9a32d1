/**
 * The tokens of the configuration search index: every 6-character window of every line (ASCII letters folded to
 * lower case, the line's end padded with "\n"), each written as one FTS5 token. FTS5's own trigram tokenizer was
 * measured first: configurations are full of addresses, whose 3-character pieces ("2.2", ".35") occur in nearly
 * every configuration, so address lookups left about 70% of configurations as candidates. Looking up
 * "host 172.30.235." in 500 generated configurations (26 contain it) leaves 221 candidates with 4-character
 * windows, 39 with 5 and exactly the 26 with 6, for an index of 3.8, 5.0 and 6.4 KB per configuration.
 *
 * A literal of 6 or more characters must contain each of its windows; a shorter one (3 to 5 characters) is the
 * start of some window of the line it is in (the padding makes them at the end of a line): a prefix lookup.
 * Common tokens (search-common-grams.ts) are in no document written since they became common, so lookups
 * never ask for them: a literal made only of them can be anywhere, as far as the index knows.
 */
import type { CommonGrams } from "./common-grams-type.ts";
import { MIN_LITERAL } from "./search-literals.ts";

export const GRAM = 6; // gramDocument builds its tokens from six units
const LINE_END = "\n".repeat(GRAM - MIN_LITERAL);

/**
 * Each UTF-16 unit as one non-ASCII character (ASCII shifted up by 0x100, lone surrogates as U+FFFD), which the
 * FTS5 `ascii` tokenizer keeps together as token characters. Other characters stand for themselves: one that
 * happens to equal a shifted ASCII character only adds candidates, never hides one.
 */
function encodeUnit(c: number): number {
  if (c >= 0x41 && c <= 0x5a) c += 0x20;
  return c < 0x80 ? c + 0x100 : c >= 0xd800 && c <= 0xdfff ? 0xfffd : c;
}

function encode(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) out += String.fromCharCode(encodeUnit(text.charCodeAt(i)));
  return out;
}

/**
 * The distinct tokens of some lines but the common ones, space-separated: the body of one index document. A 100 KB configuration
 * has about 100,000 windows but only some 10,000 distinct ones, and this runs as every new version is stored:
 * so each window is first looked up by a small integer hash and compared in place, and only a window not seen
 * before becomes a string (a hash shared by two different windows keeps both, in `collided`).
 */
export function gramDocument(lines: Iterable<string>, common: CommonGrams): string {
  const byHash = new Map<number, string>();
  const collided = new Set<string>();
  let codes = new Uint16Array(256);
  for (const line of lines) {
    const length = line.length + LINE_END.length;
    if (length < GRAM) continue;
    if (codes.length < length) codes = new Uint16Array(length * 2);
    for (let i = 0; i < line.length; i++) codes[i] = encodeUnit(line.charCodeAt(i));
    codes.fill(encodeUnit(10), line.length, length);
    for (let i = 0; i + GRAM <= length; i++) {
      let h = 0;
      for (let k = i; k < i + GRAM; k++) h = (Math.imul(h, 0x01000193) ^ codes[k]!) | 0;
      h &= 0x3fffffff;
      const known = byHash.get(h);
      if (known !== undefined && sameWindow(known, codes, i)) continue;
      const token = String.fromCharCode(
        codes[i]!,
        codes[i + 1]!,
        codes[i + 2]!,
        codes[i + 3]!,
        codes[i + 4]!,
        codes[i + 5]!,
      );
      if (known === undefined) byHash.set(h, token);
      else collided.add(token);
    }
  }
  return [...byHash.values(), ...collided].filter((token) => !common.grams.has(token)).join(" ");
}

function sameWindow(token: string, codes: Uint16Array, at: number): boolean {
  for (let k = 0; k < GRAM; k++) if (token.charCodeAt(k) !== codes[at + k]) return false;
  return true;
}

const quote = (token: string) => `"${token}"`;

/** Holds every literal, as far as the index can tell: each piece of them is common. */
export const ANYWHERE = Symbol("anywhere");

/**
 * What a document must hold to hold `literal`: FTS5 tokens (its windows) and token prefixes (for pieces shorter
 * than a window), none of them common; `anywhere` when the literal has pieces to look up but each is common.
 * For case-insensitive searches only ASCII letters are folded here, as JavaScript's `i` flag folds no other
 * character onto them; a literal holding other letters is cut at them (each run of 3 or more still counts).
 */
export function literalLookups(
  literal: string,
  caseSensitive: boolean,
  common: CommonGrams,
): { windows: string[]; prefixes: string[]; anywhere: boolean } {
  const runs = caseSensitive ? [literal] : literal.split(/[^\x00-\x7f]+/);
  const out = { windows: [] as string[], prefixes: [] as string[], anywhere: false };
  for (const run of runs) {
    if (run.length < MIN_LITERAL) continue;
    const coded = encode(run);
    if (coded.length < GRAM) {
      // A prefix of a common token may be all a document holds of it: then the prefix proves nothing.
      if (common.prefixes.has(coded)) out.anywhere = true;
      else out.prefixes.push(`${quote(coded)} *`);
      continue;
    }
    const windows = Array.from({ length: coded.length - GRAM + 1 }, (_, i) => coded.slice(i, i + GRAM)).filter(
      (w) => !common.grams.has(w),
    );
    if (!windows.length) {
      out.anywhere = true;
      continue;
    }
    // A long literal is pinned down by a score of its windows, spread over it.
    const step = Math.max(1, Math.floor(windows.length / 20));
    out.windows.push(...new Set(windows.filter((_, i) => i % step === 0 || i === windows.length - 1).map(quote)));
  }
  return out;
}

/**
 * The FTS5 expression for "holds every one of these literals"; null when they give it nothing to look up (too
 * short), ANYWHERE when all they give it is common. Prefix lookups are left out when there are whole windows to
 * look up: a prefix merges the lists of every token it starts (thousands, for a short piece such as " eq "),
 * which costs more than the few candidates it could remove. Leaving a lookup out only lets more candidates
 * through, never fewer.
 */
export function branchQuery(
  literals: readonly string[],
  caseSensitive: boolean,
  common: CommonGrams,
): string | null | typeof ANYWHERE {
  const lookups = literals.map((literal) => literalLookups(literal, caseSensitive, common));
  const windows = lookups.flatMap((l) => l.windows);
  const parts = windows.length ? windows : lookups.flatMap((l) => l.prefixes);
  if (parts.length) return [...new Set(parts)].join(" AND ");
  return lookups.some((l) => l.anywhere) ? ANYWHERE : null;
}
